package gamelift

import (
	"testing"
	"time"
)

func TestNodeReports(t *testing.T) {
	f := newFixture(t, "")
	must(t, f.svc.ReportNode(f.ctx, Node{ID: "node-a", APIURL: "http://a", Leader: true, Started: t0.UnixMilli()}))
	f.clock.Advance(10 * time.Second)
	must(t, f.svc.ReportNode(f.ctx, Node{ID: "node-b", APIURL: "http://b"}))
	f.clock.Advance(6 * time.Second)
	nodes := ok(f.svc.Nodes(f.ctx))(t)
	if len(nodes) != 2 || nodes[0].ID != "node-a" || !nodes[0].Leader || nodes[1].APIURL != "http://b" {
		t.Fatalf("nodes %+v", nodes)
	}
	now := f.clock.Now()
	if nodes[0].Alive(now) || !nodes[1].Alive(now) {
		t.Errorf("alive after 16 s and 6 s without a report: %v %v", nodes[0].Alive(now), nodes[1].Alive(now))
	}
	must(t, f.svc.ReportNode(f.ctx, Node{ID: "node-a", APIURL: "http://a2"}))
	if nodes := ok(f.svc.Nodes(f.ctx))(t); len(nodes) != 2 || !nodes[0].Alive(now) || nodes[0].APIURL != "http://a2" {
		t.Errorf("after node-a reported again: %+v", nodes)
	}
}
