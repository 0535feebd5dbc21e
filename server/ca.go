package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"

	"github.com/hoist-gg/hoist/internal/tlsca"
	"github.com/hoist-gg/hoist/store"
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
// node's (created if there is none yet), which it then puts in the store. When two nodes
// start at once, the first insert wins and the other takes it.
func (s *Server) settleCA(ctx context.Context) error {
	dir := filepath.Join(s.cfg.DataDir, tlsDir)
	doc, err := s.storedCA(ctx)
	if err == nil {
		return useCA(dir, doc)
	}
	if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if _, err := tlsca.Open(dir, s.cfg.Clock); err != nil {
		return err
	}
	doc = &caDoc{}
	if doc.Cert, err = os.ReadFile(filepath.Join(dir, tlsca.CACertFile)); err != nil {
		return err
	}
	if doc.Key, err = os.ReadFile(filepath.Join(dir, tlsca.CAKeyFile)); err != nil {
		return err
	}
	data, _ := json.Marshal(doc) // two byte slices: cannot fail
	err = s.store.Update(ctx, func(tx store.Tx) error { return tx.Insert(&store.Record{Kind: kindCA, ID: caID, Data: data}) })
	if !errors.Is(err, store.ErrExists) {
		return err
	}
	if doc, err = s.storedCA(ctx); err != nil {
		return err
	}
	return useCA(dir, doc)
}

// storedCA reads the cluster's CA from the store.
func (s *Server) storedCA(ctx context.Context) (*caDoc, error) {
	rec, err := s.store.Get(ctx, kindCA, caID)
	if err != nil {
		return nil, err
	}
	doc := &caDoc{}
	return doc, json.Unmarshal(rec.Data, doc)
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
