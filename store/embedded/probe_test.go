package embedded

import (
	"encoding/binary"
	"testing"
	"time"
)

var errClosedProbe = errClosed

func TestProbe(t *testing.T) {
	l, err := loadLibrary()
	if err != nil {
		t.Fatal(err)
	}
	t.Log("version", l.version())
	start := time.Now()
	c, err := connect(l, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Log("connect", time.Since(start))
	out, err := c.query("CREATE TABLE t (a UInt32, s String, m Map(LowCardinality(String), String), ts DateTime64(9)) ENGINE=MergeTree ORDER BY a", "CSV", nil)
	t.Log(string(out), err)
	var buf []byte
	for i := 0; i < 1000; i++ {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(i))
		buf = append(buf, 3, 'a', 0, 'c')
		buf = append(buf, 1, 1, 'k', 2, 'v', 'v')
		buf = binary.LittleEndian.AppendUint64(buf, uint64(time.Now().UnixNano()))
	}
	n, err := c.insert("INSERT INTO t (a, s, m, ts)", "RowBinary", buf[:len(buf)/2], buf[len(buf)/2:])
	t.Log("insert", n, err)
	out, err = c.query("SELECT count(), sum(a), any(s), any(m) FROM t WHERE a >= {min:UInt32} AND s = {s:String}", "JSONEachRow", map[string]string{"min": "10", "s": "a\x00c"})
	t.Log(string(out), err)
	_, err = c.query("SELECT nosuch FROM t", "JSONEachRow", nil)
	t.Log(err)
	c.close()
}
