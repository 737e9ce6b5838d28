package ingest_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/ingest"
)

// TestHostileCorpusDecodersAgree runs both logs decoders over the protobuf
// bodies of the hostile corpus.
func TestHostileCorpusDecodersAgree(t *testing.T) {
	requests := 0
	for _, tc := range hostileCorpus() {
		if tc.ct != "application/x-protobuf" || tc.method != "" {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body
			if tc.ce == "gzip" {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					return
				}
				if body, err = io.ReadAll(io.LimitReader(zr, hostileLimit+1)); err != nil || len(body) > hostileLimit {
					return
				}
			}
			if ingest.CompareLogsDecoders(t, body) {
				requests++
			}
		})
	}
	if requests < 10 {
		t.Errorf("only %d of the corpus's bodies are requests", requests)
	}
}
