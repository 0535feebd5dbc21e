package sdkws

// CutCompute drops every socket of the compute on this node — its processes' SDK sockets and
// its agent link — without a close handshake, as a network partition would: the SDKs and the
// agent see the connection lost and reconnect. It returns how many sockets it dropped.
func (h *Hub) CutCompute(ref ComputeRef) int {
	h.mu.Lock()
	var socks []*socket
	for s := range h.all {
		if s.comp == ref || (s.proc.FleetID == ref.FleetID && s.proc.ComputeName == ref.ComputeName) {
			socks = append(socks, s)
		}
	}
	h.mu.Unlock()
	for _, s := range socks {
		s.ws.CloseNow()
	}
	return len(socks)
}
