package sdkws

import (
	"net/http"
	"sync"

	"github.com/coder/websocket"
)

// registry maps a process ID or a compute to its sockets, oldest first. Protocol §1.6: on
// reconnect the SDK opens the new socket before it closes the old one, so one key may have two
// sockets for a while; pushes go to the newest.
//
// A socket is registered before its upgrade completes (pending, ws nil) and only then
// established: the SDK closes its old socket as soon as the new upgrade answers, and the old
// socket's end must not look like the process's last socket going away.
type registry[K comparable] struct {
	mu   sync.Mutex
	live map[K]*peer
}

// peer is the sockets of one key: whether one was ever established, and whether it ended
// (ProcessEnding succeeded).
type peer struct {
	socks     []*socket
	connected bool
	ended     bool
}

// add registers a pending socket under k and reports whether k already had a socket.
func (r *registry[K]) add(k K, s *socket) (reconnect bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live == nil {
		r.live = make(map[K]*peer)
	}
	p := r.live[k]
	if p == nil {
		p = &peer{}
		r.live[k] = p
	}
	reconnect = len(p.socks) > 0
	p.socks = append(p.socks, s)
	return reconnect
}

// establish marks s as upgraded: from now on it receives pushes.
func (r *registry[K]) establish(k K, s *socket, ws *websocket.Conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s.ws = ws
	if p := r.live[k]; p != nil {
		p.connected = true
	}
}

// remove unregisters s. It reports whether that ended a connection that had been
// established and did not end with ProcessEnding: the disconnect to report.
func (r *registry[K]) remove(k K, s *socket) (disconnected bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.live[k]
	if p == nil {
		return false
	}
	for i, x := range p.socks {
		if x == s {
			p.socks = append(p.socks[:i:i], p.socks[i+1:]...)
			break
		}
	}
	if len(p.socks) > 0 {
		return false
	}
	delete(r.live, k)
	return p.connected && !p.ended
}

// newest returns the most recently opened established socket of k, or nil.
func (r *registry[K]) newest(k K) *socket {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.live[k]; p != nil {
		for i := len(p.socks) - 1; i >= 0; i-- {
			if p.socks[i].ws != nil {
				return p.socks[i]
			}
		}
	}
	return nil
}

// owner returns any socket of k, pending or not, to check who k belongs to.
func (r *registry[K]) owner(k K) *socket {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.live[k]; p != nil && len(p.socks) > 0 {
		return p.socks[0]
	}
	return nil
}

// sockets returns k's established sockets.
func (r *registry[K]) sockets(k K) []*socket {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*socket
	if p := r.live[k]; p != nil {
		for _, s := range p.socks {
			if s.ws != nil {
				out = append(out, s)
			}
		}
	}
	return out
}

// end marks k as ended: its sockets closing is no disconnect.
func (r *registry[K]) end(k K) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.live[k]; p != nil {
		p.ended = true
	}
}

// run upgrades r into s, registered under k, serves it until it closes and reports whether
// the key's connection was lost (see remove). It is the shared body of both endpoints.
// up, when not nil, is called once the socket is established.
func run[K comparable](h *Hub, reg *registry[K], k K, s *socket, w http.ResponseWriter, r *http.Request, route func(string) handler, up func()) (disconnected bool) {
	reg.add(k, s)
	ws, err := h.accept(w, r)
	if err != nil {
		return reg.remove(k, s) // Accept has answered
	}
	reg.establish(k, s, ws)
	if !h.track(s, true) {
		ws.CloseNow()
		reg.remove(k, s)
		return false
	}
	if up != nil {
		up()
	}
	s.serve(r.Context(), route)
	ws.CloseNow()
	h.track(s, false)
	return reg.remove(k, s) && !h.isClosed()
}
