// Command gendoc writes the reference documents of the mcpdrift
// conventions, generated from the otelschema Registry and the constants of
// otelschema/mcpgo: CONVENTIONS.md for people, conventions.json for the
// instrumentations in other languages, which read their names from it
// rather than writing them twice. It is run by `go generate ./otelschema`.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

func main() {
	out := flag.String("o", "CONVENTIONS.md", "output file of the Markdown reference")
	js := flag.String("json", "conventions.json", "output file of the machine-readable conventions")
	flag.Parse()
	var b bytes.Buffer
	if err := conventionsMarkdown(&b); err != nil {
		fmt.Fprintf(os.Stderr, "gendoc: cannot generate: %v\n", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "gendoc: cannot write %s: %v\n", *out, err)
		os.Exit(1)
	}
	j, err := conventionsJSON()
	if err != nil {
		fmt.Fprintf(os.Stderr, "gendoc: cannot generate %s: %v\n", *js, err)
		os.Exit(1)
	}
	if err := os.WriteFile(*js, j, 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "gendoc: cannot write %s: %v\n", *js, err)
		os.Exit(1)
	}
}

// conventionsMarkdown writes CONVENTIONS.md: the registry's reference, then
// what instrumentations in any language must do (writeInstrumenting).
func conventionsMarkdown(w io.Writer) error {
	if err := otelschema.WriteConventions(w); err != nil {
		return err
	}
	return writeInstrumenting(w)
}
