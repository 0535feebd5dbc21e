package gamelift

import (
	"context"
	"errors"
	"time"

	"github.com/hoist-gg/hoist/store"
)

// Cluster membership: every server node keeps a record of itself (kind node, ID = the node's
// ID) with the endpoints it serves and when it last reported. A node whose report is older
// than NodeLease is taken for dead. Leadership itself is the store's (store.Elector); these
// records say who is there and where, for operators and for work that must know which node
// holds what.
const kindNode = "node"

// NodeLease is how long a node counts as alive after its last report; nodes report every
// NodeLease/5.
const NodeLease = 15 * time.Second

// Node is one server node as it reports itself.
type Node struct {
	ID string `json:"id"`
	// APIURL, SDKEndpoint and AgentEndpoint are the URLs the node serves.
	APIURL        string `json:"api"`
	SDKEndpoint   string `json:"sdk,omitempty"`
	AgentEndpoint string `json:"agent,omitempty"`
	// Leader reports whether the node led when it last reported.
	Leader bool `json:"leader,omitempty"`
	// Started and Seen are Unix milliseconds: when the node started and last reported.
	Started int64 `json:"started"`
	Seen    int64 `json:"seen"`
}

// Alive reports whether n reported within NodeLease before now.
func (n Node) Alive(now time.Time) bool {
	return now.UnixMilli()-n.Seen < NodeLease.Milliseconds()
}

// ReportNode records that node n is alive now (its Seen is set from the clock).
func (s *Service) ReportNode(ctx context.Context, n Node) error {
	n.Seen = s.nowMillis()
	return s.update(ctx, func(tx store.Tx) error {
		var old Node
		rec, err := getDoc(tx, kindNode, n.ID, &old, func() error { return errNoRecord })
		if errors.Is(err, errNoRecord) {
			return insertDoc(tx, kindNode, n.ID, &n)
		}
		if err != nil {
			return err
		}
		return putDoc(tx, rec, &n)
	})
}

// Nodes lists every node that has reported, alive or not, in the order they first reported.
func (s *Service) Nodes(ctx context.Context) ([]Node, error) {
	var out []Node
	err := s.view(ctx, func(tx store.Tx) error {
		out = out[:0]
		return eachChild(tx, kindNode, "", func(_ *store.Record, n *Node) error {
			out = append(out, *n)
			return nil
		})
	})
	return out, err
}

// aliveNodes returns, by ID, the nodes whose last report is within NodeLease of now.
func (s *Service) aliveNodes(tx store.Tx) (map[string]Node, error) {
	out := map[string]Node{}
	now := s.clock.Now()
	err := eachRecord(tx, kindNode, func(_ *store.Record, n *Node) {
		if n.Alive(now) {
			out[n.ID] = *n
		}
	})
	return out, err
}
