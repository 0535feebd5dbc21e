package server

import (
	"crypto/tls"
	"net"
	"path/filepath"

	"github.com/hoist-gg/hoist/internal/tlsca"
)

// Paths of the websocket endpoints on the API listeners. The Server SDK endpoint accepts an
// upgrade on any path other than AgentPath; SDKPath is the one Hoist hands out.
const (
	SDKPath   = "/sdk"
	AgentPath = "/agent"
)

// tlsDir is the directory of Hoist's CA inside the data directory.
const tlsDir = "tls"

// listenTLS binds the TLS listener (https and wss) when Config.TLSListen is set, with a
// certificate from Hoist's own CA, generated on first start in <data>/tls.
func (s *Server) listenTLS() error {
	if s.cfg.TLSListen == "" {
		return nil
	}
	ca, err := tlsca.Open(filepath.Join(s.cfg.DataDir, tlsDir), s.cfg.Clock)
	if err != nil {
		return err
	}
	conf, err := ca.TLSConfig(s.cfg.TLSHosts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.cfg.TLSListen)
	if err != nil {
		return err
	}
	s.tlsLn = tls.NewListener(ln, conf)
	return nil
}

// closeListeners closes whatever build bound before it failed.
func (s *Server) closeListeners() {
	if s.ln != nil {
		s.ln.Close()
	}
	if s.tlsLn != nil {
		s.tlsLn.Close()
	}
	if s.gwLn != nil {
		s.gwLn.Close()
	}
}

// SDKEndpoint is the Server SDK websocket URL RegisterCompute hands out
// (GameLiftServiceSdkEndpoint): Config.SDKEndpoint, else ws://<API address>/sdk.
func (s *Server) SDKEndpoint() string {
	if s.cfg.SDKEndpoint != "" {
		return s.cfg.SDKEndpoint
	}
	return "ws://" + s.Addr() + SDKPath
}

// AgentEndpoint is the agent websocket URL RegisterCompute hands out (GameLiftAgentEndpoint):
// Config.AgentEndpoint, else ws://<API address>/agent.
func (s *Server) AgentEndpoint() string {
	if s.cfg.AgentEndpoint != "" {
		return s.cfg.AgentEndpoint
	}
	return "ws://" + s.Addr() + AgentPath
}

// TLSAddr returns the address of the TLS listener, or "" when there is none.
func (s *Server) TLSAddr() string {
	if s.tlsLn == nil {
		return ""
	}
	return s.tlsLn.Addr().String()
}

// keys returns the secret of the server's access key, for the Server SDK's SigV4 mode.
func (s *Server) keys(accessKeyID string) (string, bool) {
	if s.creds.AccessKeyID == "" || accessKeyID != s.creds.AccessKeyID {
		return "", false
	}
	return s.creds.SecretAccessKey, true
}
