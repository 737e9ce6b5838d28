// Package authtest makes what the security tests need: a certificate
// authority, server and client certificates for loopback, written as PEM
// files, and token files.
package authtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/auth"
)

// PKI is a test certificate authority with a server certificate for
// 127.0.0.1 and localhost and a client certificate, as files in a
// temporary directory.
type PKI struct {
	// CAFile is the CA certificate; ServerCert/ServerKey and
	// ClientCert/ClientKey the leaf key pairs it signed.
	CAFile                string
	ServerCert, ServerKey string
	ClientCert, ClientKey string
	// Pool holds the CA certificate.
	Pool *x509.CertPool
	// Client is the client key pair; Stranger one that the CA did not sign.
	Client, Stranger tls.Certificate
}

// NewPKI creates the files under t.TempDir().
func NewPKI(t testing.TB) *PKI {
	t.Helper()
	dir := t.TempDir()
	caKey, caCert, caDER := issue(t, "mcpdrift test CA", nil, nil, true, nil)
	p := &PKI{Pool: x509.NewCertPool()}
	p.Pool.AddCert(caCert)
	p.CAFile = writePEM(t, dir, "ca.pem", "CERTIFICATE", caDER)
	sKey, _, sDER := issue(t, "127.0.0.1", caCert, caKey, false, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth})
	p.ServerCert = writePEM(t, dir, "server.pem", "CERTIFICATE", sDER)
	p.ServerKey = writeKey(t, dir, "server-key.pem", sKey)
	cKey, _, cDER := issue(t, "client", caCert, caKey, false, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth})
	p.ClientCert = writePEM(t, dir, "client.pem", "CERTIFICATE", cDER)
	p.ClientKey = writeKey(t, dir, "client-key.pem", cKey)
	var err error
	if p.Client, err = tls.LoadX509KeyPair(p.ClientCert, p.ClientKey); err != nil {
		t.Fatal(err)
	}
	xKey, _, xDER := issue(t, "stranger", nil, nil, false, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth})
	p.Stranger = tls.Certificate{Certificate: [][]byte{xDER}, PrivateKey: xKey}
	return p
}

// ClientTLS returns a client configuration that trusts the CA and presents
// cert, if any.
func (p *PKI) ClientTLS(cert *tls.Certificate) *tls.Config {
	c := &tls.Config{RootCAs: p.Pool, MinVersion: tls.VersionTLS12}
	if cert != nil {
		c.Certificates = []tls.Certificate{*cert}
	}
	return c
}

// issue makes a key and a certificate signed by parent (self-signed when
// parent is nil).
func issue(t testing.TB, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, ca bool, usage []x509.ExtKeyUsage) (*ecdsa.PrivateKey, *x509.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  usage,
	}
	if ca {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	} else {
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		tmpl.DNSNames = []string{"localhost"}
	}
	signer, signerKey := parent, parentKey
	if parent == nil {
		signer, signerKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert, der
}

func writePEM(t testing.TB, dir, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeKey(t testing.TB, dir, name string, key *ecdsa.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return writePEM(t, dir, name, "PRIVATE KEY", der)
}

// Token is a token of a test token file.
type Token struct {
	Name, Tenant string
	Scopes       []auth.Scope
}

// TokenFile writes a token file holding tokens and returns its path and
// the tokens by name.
func TokenFile(t testing.TB, tokens ...Token) (string, map[string]string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens.jsonl")
	out := map[string]string{}
	for _, tk := range tokens {
		token, rec, err := auth.Generate(tk.Tenant, tk.Scopes, tk.Name)
		if err != nil {
			t.Fatal(err)
		}
		if err := auth.Append(path, rec); err != nil {
			t.Fatal(err)
		}
		out[tk.Name] = token
	}
	return path, out
}
