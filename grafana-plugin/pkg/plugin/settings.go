package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/httpclient"
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
	// MaxRows bounds the rows read from a paginated report (violations,
	// audit) for one query; 0 means DefaultMaxRows.
	MaxRows int `json:"maxRows"`

	// TLSClientAuth (mutual TLS: present secureJsonData's tlsClientCert and
	// tlsClientKey) and TLSAuthWithCACert (trust secureJsonData's tlsCACert
	// instead of the system's CAs) are Grafana's switches of every data
	// source's HTTP settings, under Grafana's names. The SDK's
	// HTTPClientOptions reads them with the rest of those settings —
	// tlsSkipVerify, serverName, the certificates, the custom headers
	// httpHeaderNameN / secureJsonData httpHeaderValueN — into HTTP;
	// they are read here too only to say what is missing.
	TLSClientAuth     bool `json:"tlsAuth"`
	TLSAuthWithCACert bool `json:"tlsAuthWithCACert"`

	// HTTP are the client options the SDK derives from the settings.
	HTTP httpclient.Options `json:"-"`
	// secure tells which secureJsonData keys are set, for Validate.
	secure map[string]bool
}

// secureJsonData keys of the TLS settings, as Grafana names them.
const (
	secureCACert     = "tlsCACert"
	secureClientCert = "tlsClientCert"
	secureClientKey  = "tlsClientKey"
)

// Defaults of Settings.
const (
	DefaultTimeout = 30 * time.Second
	DefaultMaxRows = 10000
)

// Timeout returns the request timeout.
func (s Settings) Timeout() time.Duration {
	if s.TimeoutSeconds <= 0 {
		return DefaultTimeout
	}
	return time.Duration(s.TimeoutSeconds) * time.Second
}

// LoadSettings reads the settings of a data source instance, the HTTP
// client options (TLS, custom headers, Grafana's proxy) included.
func LoadSettings(ctx context.Context, src backend.DataSourceInstanceSettings) (Settings, error) {
	var s Settings
	opts, err := src.HTTPClientOptions(ctx)
	if err != nil {
		return s, fmt.Errorf("cannot read the data source's HTTP settings: %w", err)
	}
	s.HTTP = opts
	s.secure = map[string]bool{}
	for k, v := range src.DecryptedSecureJSONData {
		s.secure[k] = strings.TrimSpace(v) != ""
	}
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
	if s.HTTP.Timeouts == nil {
		s.HTTP.Timeouts = &httpclient.TimeoutOptions{}
	}
	s.HTTP.Timeouts.Timeout = s.Timeout()
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
	return s.validateTLS(u.Scheme)
}

// validateTLS reports a TLS setting that cannot take effect: a switch
// without its certificate, TLS settings on a plain-text URL, a certificate
// or key that does not parse.
func (s Settings) validateTLS(scheme string) error {
	if s.TLSClientAuth && (!s.secure[secureClientCert] || !s.secure[secureClientKey]) {
		return fmt.Errorf("%w: TLS client authentication is on: paste the client certificate and the client key (PEM)", ErrInvalidSettings)
	}
	if s.TLSAuthWithCACert && !s.secure[secureCACert] {
		return fmt.Errorf("%w: \"with CA certificate\" is on: paste the CA certificate (PEM) that signed the API's certificate", ErrInvalidSettings)
	}
	if s.HTTP.TLS == nil {
		return nil
	}
	if scheme != "https" {
		return fmt.Errorf("%w: the TLS settings apply to an https:// API URL, not %q", ErrInvalidSettings, s.URL)
	}
	if _, err := httpclient.GetTLSConfig(s.HTTP); err != nil {
		return fmt.Errorf("%w: TLS certificates: %w", ErrInvalidSettings, err)
	}
	return nil
}
