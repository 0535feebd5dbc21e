package statsd

import (
	"net"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Sample
	}{
		{"hits:1|c", Sample{Name: "hits", Type: Counter, Values: []float64{1}, Rate: 1}},
		{"server.players:42|g|#session_id:gs-1,gamelift_process_id:p-1",
			Sample{Name: "server.players", Type: Gauge, Values: []float64{42}, Rate: 1,
				Tags: []Tag{{"session_id", "gs-1"}, {"gamelift_process_id", "p-1"}}}},
		{"tick:12.5|ms|@0.5", Sample{Name: "tick", Type: Timer, Values: []float64{12.5}, Rate: 0.5}},
		{"lat:1:2:3|h|#a:b:c,,flag", Sample{Name: "lat", Type: Histogram, Values: []float64{1, 2, 3}, Rate: 1,
			Tags: []Tag{{"a", "b:c"}, {"flag", ""}}}},
		{"size:-3e2|d|c:abc|T1700000000|#x:y", Sample{Name: "size", Type: Distribution, Values: []float64{-300}, Rate: 1,
			Tags: []Tag{{"x", "y"}}}},
		{"users:alice:bob|s", Sample{Name: "users", Type: Set, Members: []string{"alice", "bob"}, Rate: 1}},
		{"temp:-5|g", Sample{Name: "temp", Type: Gauge, Values: []float64{-5}, Rate: 1}},
	} {
		got, err := ParseLine(tc.line)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseLine(%q) = %+v, %v; want %+v", tc.line, got, err, tc.want)
		}
	}
}

func TestParseLineRefuses(t *testing.T) {
	for _, line := range []string{
		"", "hits", "hits:1", ":1|c", "hits:|c", "hits:x|c", "hits:1|q", "hits:1|c|@0", "hits:1|c|@2",
		"hits:1|c|@x", "hits:NaN|g", "hits:Inf|g", "u:|s", "u:a::b|s",
		strings.Repeat("n", MaxNameLen+1) + ":1|c", "v" + strings.Repeat(":1", MaxValues+1) + "|h",
		"_e{5,4}:title|text", "_sc|check|0",
	} {
		if s, err := ParseLine(line); err == nil {
			t.Errorf("ParseLine(%q) = %+v, want an error", line, s)
		}
	}
}

func TestParsePacket(t *testing.T) {
	var names []string
	var errs int
	ParsePacket([]byte("a:1|c\r\n\nb:2|g\nbad\n_e{1,1}:a|b\nc:3|ms\n"), func(s Sample, err error) {
		if err != nil {
			errs++
			return
		}
		names = append(names, s.Name)
	})
	if !reflect.DeepEqual(names, []string{"a", "b", "c"}) || errs != 2 {
		t.Errorf("ParsePacket: samples %v, %d errors", names, errs)
	}
}

// FuzzParsePacket: no input panics, and every sample honours the documented limits.
func FuzzParsePacket(f *testing.F) {
	for _, seed := range []string{"a:1|c", "a:1:2|h|@0.5|#k:v,k2", "u:x|s\nb:2|g", "_sc|x", "a:1|ms|T1|c:id|#"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ParsePacket(b, func(s Sample, err error) {
			if err != nil {
				return
			}
			if s.Name == "" || len(s.Name) > MaxNameLen || !(s.Rate > 0 && s.Rate <= 1) {
				t.Fatalf("sample out of bounds: %+v", s)
			}
			if n := len(s.Values) + len(s.Members); n == 0 || n > MaxValues {
				t.Fatalf("sample with %d values: %+v", n, s)
			}
		})
	})
}

func TestListen(t *testing.T) {
	got := make(chan string, 1)
	l, err := Listen("127.0.0.1:0", func(b []byte) { got <- string(b) })
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	host, port := l.HostPort()
	c, err := net.Dial("udp", net.JoinHostPort(host, port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("a:1|c")); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != "a:1|c" {
			t.Errorf("received %q", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no datagram received")
	}
}
