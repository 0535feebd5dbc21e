package tlsca_test

import (
	"crypto/x509"
	"encoding/pem"
	"strconv"
	"testing"

	"github.com/hoist-gg/hoist/internal/tlsca"
)

func itoa(n int) string { return strconv.Itoa(n) }

func x509Empty() *x509.CertPool { return x509.NewCertPool() }

func mustParse(t *testing.T, ca *tlsca.CA) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(ca.CertPEM())
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
