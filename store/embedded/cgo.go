//go:build cgo

package embedded

const cgoEnabled = true
