package auth

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"
)

// TLSConfig are the TLS settings of one listener. With neither file set,
// the listener speaks plain text.
type TLSConfig struct {
	// CertFile and KeyFile are the PEM certificate chain and private key
	// the listener presents.
	CertFile, KeyFile string
	// ClientCAFile, when set, is a PEM bundle of the CAs that sign client
	// certificates: every client must then present a certificate one of
	// them signed (mutual TLS).
	ClientCAFile string
}

// RegisterFlags registers the settings as -<prefix>.cert-file,
// -<prefix>.key-file and -<prefix>.client-ca-file.
func (c *TLSConfig) RegisterFlags(fs *flag.FlagSet, prefix, what string) {
	fs.StringVar(&c.CertFile, prefix+".cert-file", c.CertFile, "PEM certificate chain of "+what+" (with -"+prefix+".key-file: serve TLS)")
	fs.StringVar(&c.KeyFile, prefix+".key-file", c.KeyFile, "PEM private key of "+what)
	fs.StringVar(&c.ClientCAFile, prefix+".client-ca-file", c.ClientCAFile, "PEM CA bundle: require client certificates signed by these CAs on "+what+" (mutual TLS)")
}

// Enabled reports whether the listener serves TLS.
func (c TLSConfig) Enabled() bool { return c.CertFile != "" || c.KeyFile != "" }

// Validate reports the first inconsistent field by name.
func (c TLSConfig) Validate(prefix string) error {
	switch {
	case c.CertFile != "" && c.KeyFile == "":
		return fmt.Errorf("%s.key-file: required with %s.cert-file", prefix, prefix)
	case c.KeyFile != "" && c.CertFile == "":
		return fmt.Errorf("%s.cert-file: required with %s.key-file", prefix, prefix)
	case c.ClientCAFile != "" && !c.Enabled():
		return fmt.Errorf("%s.client-ca-file: requires %s.cert-file and %s.key-file", prefix, prefix, prefix)
	}
	return nil
}

// Server returns the server-side TLS configuration, nil when TLS is off.
// It loads the files now, so that a bad file fails start-up.
func (c TLSConfig) Server() (*tls.Config, error) {
	if !c.Enabled() {
		return nil, nil
	}
	if err := c.Validate("tls"); err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("cannot load the TLS key pair %s, %s: %w", c.CertFile, c.KeyFile, err)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	if c.ClientCAFile != "" {
		pem, err := os.ReadFile(c.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("cannot read the client CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New("cannot use the client CA file " + c.ClientCAFile + ": it holds no PEM certificate")
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}
