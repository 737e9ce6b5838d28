package plugin

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// Settings configure one data source instance.
type Settings struct {
	// URL is the root of the mcpdrift API, such as http://mcpdrift:8080
	// (the data source's URL field).
	URL string `json:"-"`
	// Token is the API bearer token, from secureJsonData.token. It is
	// never logged nor returned to the browser.
	Token string `json:"-"`
	// TimeoutSeconds bounds one API request; 0 means 30.
	TimeoutSeconds int `json:"timeoutSeconds"`
	// MaxBucketRequests bounds the report requests one time series query
	// makes (one per interval bucket); 0 means DefaultMaxBucketRequests.
	// The bucket widens so that the dashboard's range fits.
	MaxBucketRequests int `json:"maxBucketRequests"`
	// MaxRows bounds the rows read from a paginated report (violations,
	// audit) for one query; 0 means DefaultMaxRows.
	MaxRows int `json:"maxRows"`
}

// Defaults of Settings.
const (
	DefaultTimeout           = 30 * time.Second
	DefaultMaxBucketRequests = 60
	DefaultMaxRows           = 10000
)

// Timeout returns the request timeout.
func (s Settings) Timeout() time.Duration {
	if s.TimeoutSeconds <= 0 {
		return DefaultTimeout
	}
	return time.Duration(s.TimeoutSeconds) * time.Second
}

// LoadSettings reads the settings of a data source instance.
func LoadSettings(src backend.DataSourceInstanceSettings) (Settings, error) {
	var s Settings
	if len(src.JSONData) > 0 {
		if err := json.Unmarshal(src.JSONData, &s); err != nil {
			return s, fmt.Errorf("cannot parse the data source's jsonData: %w", err)
		}
	}
	s.URL = strings.TrimSpace(src.URL)
	if s.URL == "" {
		// Provisioning may put the URL in jsonData.
		var alt struct {
			URL string `json:"url"`
		}
		_ = json.Unmarshal(src.JSONData, &alt)
		s.URL = strings.TrimSpace(alt.URL)
	}
	s.Token = strings.TrimSpace(src.DecryptedSecureJSONData["token"])
	if s.MaxBucketRequests <= 0 {
		s.MaxBucketRequests = DefaultMaxBucketRequests
	}
	if s.MaxRows <= 0 {
		s.MaxRows = DefaultMaxRows
	}
	return s, nil
}

// Validate reports the first invalid setting by the name the
// configuration page shows.
func (s Settings) Validate() error {
	if s.URL == "" {
		return fmt.Errorf("%w: set the API URL, such as http://mcpdrift:8080", ErrInvalidSettings)
	}
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: API URL %q must be an absolute http:// or https:// URL", ErrInvalidSettings, s.URL)
	}
	if s.TimeoutSeconds < 0 {
		return fmt.Errorf("%w: timeout must not be negative, not %d", ErrInvalidSettings, s.TimeoutSeconds)
	}
	return nil
}
