// Package chwire holds the ClickHouse wire formats the embedded store
// speaks: RowBinaryWithNamesAndTypes results decoded (DecodeRowBinary),
// Native blocks encoded (NativeBlock). It knows the formats and the event
// columns of store.EventColumns, not the engine: the caller runs the
// statements and moves the bytes.
package chwire
