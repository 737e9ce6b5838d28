package api

import (
	"mime"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/render"
)

// offers are the media types a report is served as, in the server's order
// of preference.
var offers = []struct {
	mediaType string
	format    render.Format
}{
	{"application/json", render.FormatJSON},
	{"text/csv", render.FormatCSV},
	{"text/markdown", render.FormatMarkdown},
	{"text/plain", render.FormatTable},
}

// negotiate picks the format of a response: the format parameter when
// given, else the best offer the Accept header allows (JSON when it is
// absent). ok is false when Accept allows no offer.
func negotiate(format, accept string) (f render.Format, ok bool, err error) {
	if format != "" {
		f, err := render.ParseFormat(format)
		if err != nil {
			return "", false, badParam(apiv1.ParamFormat, "%v", err)
		}
		return f, true, nil
	}
	if strings.TrimSpace(accept) == "" {
		return render.FormatJSON, true, nil
	}
	type rng struct {
		typ, sub string
		q        float64
	}
	var ranges []rng
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if s, ok := params["q"]; ok {
			if v, err := strconv.ParseFloat(s, 64); err == nil && v >= 0 && v <= 1 {
				q = v
			}
		}
		typ, sub, _ := strings.Cut(mt, "/")
		ranges = append(ranges, rng{typ, sub, q})
	}
	best, bestQ := render.Format(""), 0.0
	for _, o := range offers {
		typ, sub, _ := strings.Cut(o.mediaType, "/")
		// The most specific matching range decides the offer's quality.
		q, spec := 0.0, -1
		for _, r := range ranges {
			s := -1
			switch {
			case r.typ == typ && r.sub == sub:
				s = 2
			case r.typ == typ && r.sub == "*":
				s = 1
			case r.typ == "*" && r.sub == "*":
				s = 0
			}
			if s > spec {
				q, spec = r.q, s
			}
		}
		if q > bestQ {
			best, bestQ = o.format, q
		}
	}
	return best, best != "", nil
}
