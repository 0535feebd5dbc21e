package agent

import (
	"context"
	"errors"
	"strings"
	"sync"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// Failover: `hoist agent --server` takes several control-plane URLs (nodes of one cluster),
// and any of them may be a DNS name that resolves to several nodes (each dial tries the
// addresses in turn). API calls go to the node that answered last and move on to the next
// when a node does not answer; the agent link and the server processes' connections move the
// same way (docs/agent.md).

// ParseServers splits a --server value: URLs separated by commas, blanks ignored.
func ParseServers(s string) []string {
	var out []string
	for _, u := range strings.Split(s, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// rotation remembers which of n alternatives answered last, so the next attempt starts
// there.
type rotation struct {
	mu  sync.Mutex
	n   int
	cur int
}

// order lists the alternatives to try, the last one that worked first.
func (r *rotation) order() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]int, r.n)
	for i := range out {
		out[i] = (r.cur + i) % r.n
	}
	return out
}

// worked records that alternative i answered.
func (r *rotation) worked(i int) {
	r.mu.Lock()
	r.cur = i
	r.mu.Unlock()
}

// unanswered reports whether err means the node did not answer the call (no response, or
// a server fault such as a node that cannot reach its store), so that another node should be
// tried. A cancelled call is not: the caller gave up.
func unanswered(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		code := re.HTTPStatusCode() // 0: the request got no response at all
		return code == 0 || code >= 500
	}
	return true
}
