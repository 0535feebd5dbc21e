package hostd

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/hoist-gg/hoist/gamelift"
	"github.com/hoist-gg/hoist/internal/tlsca"
)

// Issuer issues fleet certificates; *tlsca.CA (Hoist's CA) is one.
type Issuer interface {
	// Issue signs a leaf certificate for hosts; its chain ends with the CA certificate.
	Issue(commonName string, hosts []string) (tls.Certificate, error)
	// CertPEM returns the CA certificate, PEM-encoded.
	CertPEM() []byte
}

// Files of a fleet certificate in a sandbox, in certDir. The names follow the Server SDK 4
// GetInstanceCertificate outcome (certificate, chain, private key, root certificate); the
// Server SDK 5 GetComputeCertificate answers the certificate's path, the others lie beside it.
const (
	CertificateFile      = "certificate.pem"
	CertificateChainFile = "certificateChain.pem"
	PrivateKeyFile       = "privateKey.pem"
	RootCertificateFile  = "rootCertificate.pem"
)

// certDir is where a fleet certificate is written in a sandbox.
func certDir(sandbox string) string { return filepath.Join(sandbox, "local", "certificates") }

// fleetCerts issues one certificate per fleet and location and keeps it, so that the fleet's
// instances on this host share it (as GameLift's share one fleet certificate).
type fleetCerts struct {
	open func() (Issuer, error)

	mu     sync.Mutex
	issuer Issuer
	pems   map[string][3][]byte // fleet/location -> leaf+chain, key, CA
}

// get returns the PEM files of a fleet's certificate in a location, issuing it on first use.
func (c *fleetCerts) get(fleetID, location string) ([3][]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := fleetID + "/" + location
	if p, ok := c.pems[key]; ok {
		return p, nil
	}
	if c.issuer == nil {
		iss, err := c.open()
		if err != nil {
			return [3][]byte{}, fmt.Errorf("Hoist's CA: %w", err)
		}
		c.issuer = iss
	}
	cert, err := c.issuer.Issue("Hoist fleet "+fleetID, gamelift.CertificateHosts(location))
	if err != nil {
		return [3][]byte{}, err
	}
	certPEM, keyPEM, err := tlsca.PEM(cert)
	if err != nil {
		return [3][]byte{}, err
	}
	p := [3][]byte{certPEM, keyPEM, c.issuer.CertPEM()}
	if c.pems == nil {
		c.pems = map[string][3][]byte{}
	}
	c.pems[key] = p
	return p, nil
}

// writeCertificate writes the fleet certificate into the instance's sandbox and returns the
// path of the certificate file, as the instance's processes open it.
func (in *instance) writeCertificate() (string, error) {
	p, err := in.h.certs.get(in.li.FleetID, in.li.Location)
	if err != nil {
		return "", err
	}
	dir := certDir(in.dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	files := []struct {
		name string
		data []byte
		mode os.FileMode
	}{{CertificateFile, p[0], 0o644}, {CertificateChainFile, p[0], 0o644}, {PrivateKeyFile, p[1], 0o600}, {RootCertificateFile, p[2], 0o644}}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, f.mode); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, CertificateFile), nil
}
