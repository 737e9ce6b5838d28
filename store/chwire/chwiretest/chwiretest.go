// Package chwiretest holds what the tests of the ClickHouse wire codec and
// of the embedded store share: the row type of the seeds under
// store/chwire/testdata/rowbinary, which the embedded store's test writes
// from the engine and the codec's fuzz target starts from.
package chwiretest

import "time"

// AllTypes has a field for every column of all_types.bin, the output of
// allTypesSQL in store/embedded, whose test decodes it from the engine.
type AllTypes struct {
	S      string            `json:"s"`
	FS     string            `json:"fs"`
	LC     string            `json:"lc"`
	U8     uint8             `json:"u8"`
	U16    uint16            `json:"u16"`
	U32    uint32            `json:"u32"`
	U64    uint64            `json:"u64"`
	I8     int8              `json:"i8"`
	I16    int16             `json:"i16"`
	I32    int32             `json:"i32"`
	I64    int64             `json:"i64"`
	F32    float64           `json:"f32"`
	F64    float64           `json:"f64"`
	B      bool              `json:"b"`
	E8     string            `json:"e8"`
	E16    string            `json:"e16"`
	DT     time.Time         `json:"dt"`
	DTZ    time.Time         `json:"dtz"`
	DT64_0 time.Time         `json:"dt64_0"`
	DT64_3 time.Time         `json:"dt64_3"`
	DT64_6 time.Time         `json:"dt64_6"`
	DT64_9 time.Time         `json:"dt64_9"`
	NS     *string           `json:"ns"`
	NNull  *string           `json:"nnull"`
	NI     int64             `json:"ni"`
	Arr    []string          `json:"arr"`
	Empty  []string          `json:"empty"`
	Nested [][]int64         `json:"nested"`
	ANull  []string          `json:"anull"`
	M      map[string]string `json:"m"`
	EmptyM map[string]uint64 `json:"emptym"`
	T      TupleRow          `json:"t"`
	Tuples []TupleRow        `json:"tuples"`
}

// TupleRow is a named tuple of AllTypes.
type TupleRow struct {
	Name  string `json:"name"`
	Calls uint64 `json:"calls"`
	Age   int64  `json:"max_session_age_s"`
}
