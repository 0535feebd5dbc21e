package server

import (
	"context"
	"crypto/rand"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
	"github.com/hoist-gg/hoist/gamelift"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/store"
)

// A server node's place in a cluster (docs/cluster.md): its ID, its membership record, and
// leadership. Several nodes share one PostgreSQL store; the store elects one leader
// (store.Elector), which runs the loops that must run once. The embedded store is one node,
// which always leads.

// nodeIDFile keeps the node's ID in the data directory, so a node that restarts is the same
// node.
const nodeIDFile = "node-id"

// LeaderPath answers 200 "leader" on the leading node and 503 "follower" on the others, for
// operators and load balancers.
const LeaderPath = "/healthz/leader"

// loadOrCreateNodeID returns the node ID kept in dir, creating one on first start.
func loadOrCreateNodeID(dir string) (string, error) {
	path := filepath.Join(dir, nodeIDFile)
	b, err := os.ReadFile(path)
	if err == nil {
		if id := strings.TrimSpace(string(b)); id != "" {
			return id, nil
		}
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	id := "node-" + uuid.NewString()
	return id, writeFileAtomic(path, []byte(id+"\n"), 0o600)
}

// NodeID returns this node's ID.
func (s *Server) NodeID() string { return s.nodeID }

// Leading reports whether this node leads now.
func (s *Server) Leading() bool { return s.leading.Load() }

// lead runs loops whenever this node leads, until ctx is done: through the store's election
// when it has one, else at once (an embedded store is a cluster of one).
func (s *Server) lead(ctx context.Context, loops func(ctx context.Context)) {
	term := func(ctx context.Context) {
		s.leading.Store(true)
		s.log.Info("this node leads the cluster: it runs the timer loops", "node", s.nodeID)
		s.reportNode(ctx)
		loops(ctx)
		s.leading.Store(false)
		if ctx.Err() != nil {
			s.log.Info("this node no longer leads", "node", s.nodeID)
		}
	}
	if e, ok := s.store.(store.Elector); ok {
		e.Lead(ctx, term)
		return
	}
	term(ctx)
}

// reportNodes reports this node alive every NodeLease/5 until ctx is done (startLoops made
// the first report).
func (s *Server) reportNodes(ctx context.Context) {
	clock.Every(ctx, s.cfg.Clock, gamelift.NodeLease/5, func(ctx context.Context) error {
		return s.svc.ReportNode(ctx, s.node())
	}, func(err error) { s.log.Warn("reporting this node failed", "err", err) })
}

// reportNode reports this node alive now.
func (s *Server) reportNode(ctx context.Context) {
	if err := s.svc.ReportNode(ctx, s.node()); err != nil && ctx.Err() == nil {
		s.log.Warn("reporting this node failed", "err", err)
	}
}

// node is this node's membership record.
func (s *Server) node() gamelift.Node {
	return gamelift.Node{ID: s.nodeID, APIURL: s.URL(), SDKEndpoint: s.SDKEndpoint(), AgentEndpoint: s.AgentEndpoint(),
		Leader: s.leading.Load(), Started: s.started.UnixMilli()}
}

// routeLeader answers GET LeaderPath and sends every other request to next.
func (s *Server) routeLeader(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != LeaderPath || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			next.ServeHTTP(w, r)
			return
		}
		s.leaderHandler(w)
	})
}

// leaderHandler answers LeaderPath.
func (s *Server) leaderHandler(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if !s.Leading() {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("follower\n"))
		return
	}
	w.Write([]byte("leader\n"))
}

// kindSecret holds the cluster's random secrets, one record each.
const kindSecret = "secret"

// sharedSecret returns the cluster's 32-byte secret named id, creating it when there is none.
func sharedSecret(ctx context.Context, st store.Store, id string) ([]byte, error) {
	return firstRecord(ctx, st, kindSecret, id, func() ([]byte, error) {
		key := make([]byte, 32)
		rand.Read(key)
		return key, nil
	})
}

// firstRecord returns the data of the record kind/id, inserting what create makes when there
// is none; when several nodes create it at once, the first insert wins and all use it.
func firstRecord(ctx context.Context, st store.Store, kind, id string, create func() ([]byte, error)) ([]byte, error) {
	for {
		rec, err := st.Get(ctx, kind, id)
		if err == nil {
			return rec.Data, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		data, err := create()
		if err != nil {
			return nil, err
		}
		err = st.Update(ctx, func(tx store.Tx) error { return tx.Insert(&store.Record{Kind: kind, ID: id, Data: data}) })
		if !errors.Is(err, store.ErrExists) {
			return data, err
		}
	}
}
