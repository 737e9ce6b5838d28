// Command gendoc writes the reference document of the mcpdrift conventions,
// generated from the otelschema Registry. It is run by
// `go generate ./otelschema`.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

func main() {
	out := flag.String("o", "CONVENTIONS.md", "output file")
	flag.Parse()
	var b bytes.Buffer
	if err := otelschema.WriteConventions(&b); err != nil {
		fmt.Fprintf(os.Stderr, "gendoc: cannot generate: %v\n", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "gendoc: cannot write %s: %v\n", *out, err)
		os.Exit(1)
	}
}
