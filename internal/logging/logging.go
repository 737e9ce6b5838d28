// Package logging builds the binaries' structured loggers from their
// -log.level and -log.format flags.
package logging

import (
	"fmt"
	"io"
	"log/slog"
)

// New returns a slog.Logger writing to w at level (debug, info, warn,
// error) in format (text or json). Errors name the flag at fault.
func New(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log.level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("log.format: want text or json, not %q", format)
}
