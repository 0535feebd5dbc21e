package tlsca_test

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/internal/tlsca"
)

func TestClientTrustingTheCAConnects(t *testing.T) {
	ca, err := tlsca.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ca.TLSConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hi") })}
	go srv.Serve(ln)
	defer srv.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	trusting := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}, Timeout: 10 * time.Second}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		resp, err := trusting.Get("https://" + net.JoinHostPort(host, itoa(port)))
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "hi" {
			t.Errorf("%s: body %q", host, body)
		}
	}
	// A client that does not trust the CA is refused: the check above can fail.
	plain := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: x509Empty()}}, Timeout: 10 * time.Second}
	if _, err := plain.Get("https://127.0.0.1:" + itoa(port)); err == nil {
		t.Error("a client without the CA connected")
	}
}

func TestPersistsAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(time.Now())
	first, err := tlsca.Open(dir, clk)
	if err != nil {
		t.Fatal(err)
	}
	c1, err := first.ServerCertificate([]string{"localhost", "127.0.0.1", "game.example"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{tlsca.CAKeyFile, tlsca.ServerKeyFile} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", f, st.Mode(), err)
		}
	}
	second, err := tlsca.Open(dir, clk)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.CertPEM(), second.CertPEM()) {
		t.Fatal("the CA changed across a restart")
	}
	c2, err := second.ServerCertificate([]string{"game.example"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(c1.Certificate[0], c2.Certificate[0]) {
		t.Error("the server certificate was not reused")
	}
	// A name the stored certificate lacks, or a certificate near its end, gets a new one.
	c3, _ := second.ServerCertificate([]string{"other.example"})
	if bytes.Equal(c3.Certificate[0], c2.Certificate[0]) {
		t.Error("a certificate without the asked-for name was reused")
	}
	clk.Advance(tlsca.LeafLifetime - 24*time.Hour)
	c4, _ := second.ServerCertificate([]string{"other.example"})
	if bytes.Equal(c4.Certificate[0], c3.Certificate[0]) {
		t.Error("a certificate about to expire was reused")
	}
	fleet, err := second.Issue("fleet-1", []string{"host-1.example"})
	if err != nil || fleet.Leaf.VerifyHostname("host-1.example") != nil || fleet.Leaf.CheckSignatureFrom(mustParse(t, second)) != nil {
		t.Errorf("fleet certificate: %v", err)
	}
}
