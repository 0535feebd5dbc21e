package statsd

import (
	"errors"
	"net"
	"strconv"
)

// MaxDatagram is the largest datagram read; longer ones are truncated by the kernel and
// their last line is then likely refused. The SDKs send at most 1400 bytes by default.
const MaxDatagram = 65535

// Listener receives DogStatsD datagrams on a UDP socket.
type Listener struct {
	conn *net.UDPConn
	done chan struct{}
}

// Listen binds addr (host:port; port 0 picks one) and passes every datagram received to
// handle, from one goroutine, until Close. handle must not keep the slice.
func Listen(addr string, handle func([]byte)) (*Listener, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	conn, err := net.ListenUDP("udp", ua)
	if err != nil {
		return nil, err
	}
	l := &Listener{conn: conn, done: make(chan struct{})}
	go l.read(handle)
	return l, nil
}

func (l *Listener) read(handle func([]byte)) {
	defer close(l.done)
	buf := make([]byte, MaxDatagram)
	for {
		n, _, err := l.conn.ReadFromUDP(buf)
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err == nil && n > 0 {
			handle(buf[:n])
		}
	}
}

// Addr is the bound address.
func (l *Listener) Addr() *net.UDPAddr { return l.conn.LocalAddr().(*net.UDPAddr) }

// HostPort are the host and port a process is told to send to (GAMELIFT_STATSD_HOST and
// GAMELIFT_STATSD_PORT): the bound address, with loopback for an unspecified host.
func (l *Listener) HostPort() (host, port string) {
	a := l.Addr()
	host = a.IP.String()
	if a.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return host, strconv.Itoa(a.Port)
}

// Close stops the listener and waits for its goroutine.
func (l *Listener) Close() error {
	err := l.conn.Close()
	<-l.done
	return err
}
