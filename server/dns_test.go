package server_test

import (
	"context"
	"encoding/binary"
	"net"
	"strings"
	"testing"
)

// resolveNameTo makes the process's default resolver (net.DefaultResolver, which every dial
// without its own resolver uses: HTTP clients, websockets, net.Dialer) answer name with
// addrs, through Go's own DNS client talking to a small DNS server in the test. Other names
// are answered NXDOMAIN. The old resolver is restored when the test ends.
func resolveNameTo(t *testing.T, name string, addrs ...string) {
	t.Helper()
	server := serveDNS(t, name, addrs)
	old := net.DefaultResolver
	net.DefaultResolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", server)
	}}
	t.Cleanup(func() { net.DefaultResolver = old })
}

// serveDNS answers DNS queries over UDP on loopback (dnsReply) until the test ends, and
// returns its address.
func serveDNS(t *testing.T, name string, addrs []string) string {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if reply := dnsReply(buf[:n], name, addrs); reply != nil {
				pc.WriteTo(reply, from)
			}
		}
	}()
	return pc.LocalAddr().String()
}

// DNS constants (RFC 1035 §3.2, §4.1.1).
const (
	dnsTypeA        = 1
	dnsClassIN      = 1
	dnsNameError    = 3      // RCODE NXDOMAIN
	dnsReplyFlags   = 0x8580 // QR, AA, RD, RA
	dnsHeaderLength = 12
)

// dnsReply answers one query (RFC 1035 §4.1): an A question for name gets one A record per
// address, any other question about name none, and a question about another name NXDOMAIN.
// It returns nil for what it cannot read.
func dnsReply(query []byte, name string, addrs []string) []byte {
	qname, end, ok := dnsName(query, dnsHeaderLength)
	if !ok || end+4 > len(query) {
		return nil
	}
	var rcode uint16
	var answers []string
	switch {
	case !strings.EqualFold(qname, name):
		rcode = dnsNameError
	case binary.BigEndian.Uint16(query[end:]) == dnsTypeA:
		answers = addrs
	}
	out := append([]byte(nil), query[:2]...) // the query's ID
	out = binary.BigEndian.AppendUint16(out, dnsReplyFlags|rcode)
	out = binary.BigEndian.AppendUint16(out, 1) // the question
	out = binary.BigEndian.AppendUint16(out, uint16(len(answers)))
	out = append(out, 0, 0, 0, 0) // no authority or additional records
	out = append(out, query[dnsHeaderLength:end+4]...)
	for _, a := range answers {
		out = append(out, 0xc0, dnsHeaderLength) // a pointer to the question's name
		out = binary.BigEndian.AppendUint16(out, dnsTypeA)
		out = binary.BigEndian.AppendUint16(out, dnsClassIN)
		out = binary.BigEndian.AppendUint32(out, 0) // TTL: no caching
		out = binary.BigEndian.AppendUint16(out, 4) // RDLENGTH
		out = append(out, net.ParseIP(a).To4()...)
	}
	return out
}

// dnsName reads the uncompressed name at off of a message: the dotted name (no final dot)
// and the offset after it.
func dnsName(msg []byte, off int) (string, int, bool) {
	var labels []string
	for off < len(msg) {
		n := int(msg[off])
		if n == 0 {
			return strings.Join(labels, "."), off + 1, true
		}
		if n > 63 || off+1+n > len(msg) {
			return "", 0, false
		}
		labels = append(labels, string(msg[off+1:off+1+n]))
		off += 1 + n
	}
	return "", 0, false
}

// TestDNSNameResolvesToEveryAddress checks resolveNameTo itself with the standard library's
// lookup.
func TestDNSNameResolvesToEveryAddress(t *testing.T) {
	resolveNameTo(t, "hoist-nodes.test", "127.0.0.2", "127.0.0.3")
	got, err := net.DefaultResolver.LookupHost(context.Background(), "hoist-nodes.test")
	if err != nil || len(got) != 2 {
		t.Fatalf("LookupHost = %q, %v; want the two addresses", got, err)
	}
	if _, err := net.DefaultResolver.LookupHost(context.Background(), "elsewhere.test"); err == nil {
		t.Error("another name resolved")
	}
}
