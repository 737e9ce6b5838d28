package plugin

// Catalog is what the backend answers, as the query editor offers it: a
// test writes it to src/catalog.json, so that the editor and the backend
// cannot drift apart.
type Catalog struct {
	QueryTypes []string        `json:"queryTypes"`
	Variables  []string        `json:"variables"`
	Reports    []CatalogReport `json:"reports"`
}

// CatalogReport is one report: its counts (the main one first) and the
// dimensions a time series can be grouped by.
type CatalogReport struct {
	Name       string       `json:"name"`
	Title      string       `json:"title"`
	Metrics    []MetricInfo `json:"metrics"`
	Dimensions []string     `json:"dimensions"`
	// Timed reports are bucketed from their rows' times; the others are
	// requested once per bucket.
	Timed bool `json:"timed"`
}

// GetCatalog returns the catalog.
func GetCatalog() Catalog {
	c := Catalog{QueryTypes: QueryTypes(), Variables: Variables()}
	for _, name := range reportNames() {
		r := reports[name]
		c.Reports = append(c.Reports, CatalogReport{Name: name, Title: r.title(), Metrics: r.metricInfo(), Dimensions: r.dimensions(), Timed: r.timed()})
	}
	return c
}
