// Package tlsca is Hoist's own certificate authority. On first start it generates an ECDSA
// P-256 CA in a directory (normally <data dir>/tls) and reuses it afterwards; it issues the
// server certificate of the wss:// listener and, for GetComputeCertificate, fleet
// certificates. Game hosts trust Hoist by trusting the CA certificate (ca.crt).
//
// Imported by the server wiring and by cmd/hoist; the domain does not import it.
package tlsca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/hoist-gg/hoist/internal/clock"
)

// File names inside the CA directory. Keys are written 0600, certificates 0644.
const (
	CACertFile     = "ca.crt"
	CAKeyFile      = "ca.key"
	ServerCertFile = "server.crt"
	ServerKeyFile  = "server.key"
)

// Lifetimes of what the CA issues.
const (
	CALifetime     = 10 * 365 * 24 * time.Hour
	LeafLifetime   = 365 * 24 * time.Hour
	renewBeforeEnd = 30 * 24 * time.Hour
)

// DefaultHosts are the names a server certificate covers when none are given.
var DefaultHosts = []string{"localhost", "127.0.0.1", "::1"}

// CA is a loaded certificate authority. It is safe for concurrent use.
type CA struct {
	dir     string
	clock   clock.Clock
	cert    *x509.Certificate
	certPEM []byte
	key     *ecdsa.PrivateKey
}

// Open loads the CA from dir, creating dir and a new CA in it when there is none. A nil clk
// means the wall clock.
func Open(dir string, clk clock.Clock) (*CA, error) {
	if clk == nil {
		clk = clock.Real{}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ca := &CA{dir: dir, clock: clk}
	certPEM, keyPEM, err := readPair(dir, CACertFile, CAKeyFile)
	if errors.Is(err, os.ErrNotExist) {
		certPEM, keyPEM, err = ca.create()
	}
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("tlsca: %s: %w", dir, err)
	}
	key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("tlsca: %s: the CA key is not ECDSA", dir)
	}
	ca.cert, ca.certPEM, ca.key = pair.Leaf, certPEM, key
	return ca, nil
}

// create generates a CA and writes it to the directory.
func (c *CA) create() (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := c.clock.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{Organization: []string{"Hoist"}, CommonName: "Hoist CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(CALifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	certPEM, keyPEM, err = encodePair(der, key)
	if err != nil {
		return nil, nil, err
	}
	return certPEM, keyPEM, writePair(c.dir, CACertFile, CAKeyFile, certPEM, keyPEM)
}

// CertPEM returns the CA certificate, PEM-encoded: what game hosts must trust.
func (c *CA) CertPEM() []byte { return slices.Clone(c.certPEM) }

// CertPath returns the path of the CA certificate file.
func (c *CA) CertPath() string { return filepath.Join(c.dir, CACertFile) }

// Pool returns a certificate pool holding the CA certificate.
func (c *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.cert)
	return p
}

// Issue signs a new leaf certificate for hosts (DNS names or IP addresses; DefaultHosts when
// empty), usable for TLS server and client authentication. It is not written anywhere.
func (c *CA) Issue(commonName string, hosts []string) (tls.Certificate, error) {
	if len(hosts) == 0 {
		hosts = DefaultHosts
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := c.clock.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{Organization: []string{"Hoist"}, CommonName: commonName},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(LeafLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		return tls.Certificate{}, err
	}
	certPEM, keyPEM, err := encodePair(der, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	certPEM = append(certPEM, c.certPEM...)
	return tls.X509KeyPair(certPEM, keyPEM)
}

// ServerCertificate returns the certificate of Hoist's TLS listener for hosts (DefaultHosts
// when empty). It reuses server.crt/server.key from the directory when they were issued by
// this CA, cover every host and are valid for more than 30 days; otherwise it issues a new
// one and writes it there.
func (c *CA) ServerCertificate(hosts []string) (tls.Certificate, error) {
	if len(hosts) == 0 {
		hosts = DefaultHosts
	}
	if cert, ok := c.loadServer(hosts); ok {
		return cert, nil
	}
	cert, err := c.Issue("Hoist server", hosts)
	if err != nil {
		return cert, err
	}
	certPEM, keyPEM, err := PEM(cert)
	if err != nil {
		return cert, err
	}
	return cert, writePair(c.dir, ServerCertFile, ServerKeyFile, certPEM, keyPEM)
}

func (c *CA) loadServer(hosts []string) (tls.Certificate, bool) {
	certPEM, keyPEM, err := readPair(c.dir, ServerCertFile, ServerKeyFile)
	if err != nil {
		return tls.Certificate{}, false
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil || cert.Leaf.CheckSignatureFrom(c.cert) != nil {
		return tls.Certificate{}, false
	}
	if c.clock.Now().Add(renewBeforeEnd).After(cert.Leaf.NotAfter) {
		return tls.Certificate{}, false
	}
	for _, h := range hosts {
		if cert.Leaf.VerifyHostname(h) != nil {
			return tls.Certificate{}, false
		}
	}
	return cert, true
}

// TLSConfig returns a server TLS configuration presenting ServerCertificate(hosts). Its
// minimum version is TLS 1.2, which the C++ and C# SDKs use (protocol §1.4).
func (c *CA) TLSConfig(hosts []string) (*tls.Config, error) {
	cert, err := c.ServerCertificate(hosts)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// PEM encodes a certificate chain and its ECDSA key as PEM.
func PEM(cert tls.Certificate) (certPEM, keyPEM []byte, err error) {
	for _, der := range cert.Certificate {
		certPEM = append(certPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		return nil, nil, err
	}
	return certPEM, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}

func encodePair(der []byte, key *ecdsa.PrivateKey) (certPEM, keyPEM []byte, err error) {
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}

func readPair(dir, certFile, keyFile string) (certPEM, keyPEM []byte, err error) {
	certPEM, err = os.ReadFile(filepath.Join(dir, certFile))
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err = os.ReadFile(filepath.Join(dir, keyFile))
	return certPEM, keyPEM, err
}

// writePair writes the key (0600) before the certificate, each through a temporary file and a
// rename, so a crash never leaves a certificate without its key.
func writePair(dir, certFile, keyFile string, certPEM, keyPEM []byte) error {
	if err := writeFile(filepath.Join(dir, keyFile), keyPEM, 0o600); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, certFile), certPEM, 0o644)
}

func writeFile(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n
}
