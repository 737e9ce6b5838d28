package console

import (
	"compress/gzip"
	"io"
)

// gzipSize is the length of body gzipped at the default level, as a
// server or a proxy would send it.
func gzipSize(body []byte) (int, error) {
	var n countWriter
	zw := gzip.NewWriter(&n)
	if _, err := zw.Write(body); err != nil {
		return 0, err
	}
	if err := zw.Close(); err != nil {
		return 0, err
	}
	return int(n), nil
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

var _ io.Writer = (*countWriter)(nil)
