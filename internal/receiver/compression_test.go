package receiver

import (
	"strings"
	"testing"
)

// TestCodingList: the message of an unknown coding names every coding
// accepted (ingest's TestCodingsTested checks each is tested).
func TestCodingList(t *testing.T) {
	got := codingList()
	for _, coding := range httpCodings {
		if !strings.Contains(got, coding) {
			t.Errorf("%q does not name %s", got, coding)
		}
	}
}
