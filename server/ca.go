package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/internal/tlsca"
)

// Hoist's CA (the one behind the TLS listener and fleets' GENERATED certificates) is the
// cluster's: its certificate and key are kept in the store, so every node serves certificates
// clients verify with one ca.crt. Each node keeps a copy in <data>/tls, where the code that
// issues certificates reads it.
const (
	kindCA = "tlsca"
	caID   = "ca"
)

// caDoc is the CA as stored.
type caDoc struct {
	Cert []byte `json:"cert"`
	Key  []byte `json:"key"`
}

// settleCA makes <data>/tls hold the cluster's CA: the store's when it has one; else this
// node's (created if there is none yet), which it then puts in the store (firstRecord: when
// two nodes start at once, the first insert wins and the other takes it).
func (s *Server) settleCA(ctx context.Context) error {
	dir := filepath.Join(s.cfg.DataDir, tlsDir)
	data, err := firstRecord(ctx, s.store, kindCA, caID, func() ([]byte, error) { return localCA(dir, s.cfg.Clock) })
	if err != nil {
		return err
	}
	doc := &caDoc{}
	if err := json.Unmarshal(data, doc); err != nil {
		return err
	}
	return useCA(dir, doc)
}

// localCA returns, as stored, the CA in dir, creating one there if there is none.
func localCA(dir string, clk clock.Clock) ([]byte, error) {
	if _, err := tlsca.Open(dir, clk); err != nil {
		return nil, err
	}
	doc := &caDoc{}
	var err error
	if doc.Cert, err = os.ReadFile(filepath.Join(dir, tlsca.CACertFile)); err != nil {
		return nil, err
	}
	if doc.Key, err = os.ReadFile(filepath.Join(dir, tlsca.CAKeyFile)); err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}

// useCA writes the CA into dir when dir holds another (or none), and removes the server
// certificate the other one issued.
func useCA(dir string, doc *caDoc) error {
	if old, err := os.ReadFile(filepath.Join(dir, tlsca.CACertFile)); err == nil && bytes.Equal(old, doc.Cert) {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, tlsca.CAKeyFile), doc.Key, 0o600); err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, tlsca.CACertFile), doc.Cert, 0o644); err != nil {
		return err
	}
	for _, f := range []string{tlsca.ServerCertFile, tlsca.ServerKeyFile} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
