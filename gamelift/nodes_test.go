package gamelift

import (
	"testing"
	"time"

	"github.com/hoist-gg/hoist/api"
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

// TestComputeEndpointsFollowTheAgentsNode: DescribeCompute and ListCompute show the endpoints
// of the node the compute's agent is connected to while that node is alive, else the answering
// node's.
func TestComputeEndpointsFollowTheAgentsNode(t *testing.T) {
	a, _ := newHostFixture(t)
	b, _ := nodeFixtureOn(t, a.store, a.clock, "b", "node-b")
	a.svc.node = "node-a"
	must(t, b.svc.ReportNode(b.ctx, Node{ID: "node-b", APIURL: "http://b", SDKEndpoint: "ws://b/sdk", AgentEndpoint: "ws://b/agent"}))
	fleet := a.anywhereFleet(t, "endpoints")
	a.register(t, fleet, "host-1")
	sdkOf := func() (string, string) {
		d := ok(a.h.DescribeCompute(a.ctx, &api.DescribeComputeInput{FleetId: api.String(fleet), ComputeName: api.String("host-1")}))(t).Compute
		l := ok(a.h.ListCompute(a.ctx, &api.ListComputeInput{FleetId: api.String(fleet)}))(t).ComputeList[0]
		if *d.GameLiftServiceSdkEndpoint != *l.GameLiftServiceSdkEndpoint {
			t.Fatalf("DescribeCompute %s, ListCompute %s", *d.GameLiftServiceSdkEndpoint, *l.GameLiftServiceSdkEndpoint)
		}
		return *d.GameLiftServiceSdkEndpoint, *d.GameLiftAgentEndpoint
	}
	if sdk, _ := sdkOf(); sdk != testSDKEndpoint {
		t.Errorf("before an agent connected: %s, want the answering node's", sdk)
	}
	must(t, b.svc.AdmitAgent(b.ctx, fleet, "host-1", a.token(t, fleet, "host-1")))
	if sdk, agent := sdkOf(); sdk != "ws://b/sdk" || agent != "ws://b/agent" {
		t.Errorf("with the agent on node b: %s %s", sdk, agent)
	}
	a.clock.Advance(NodeLease)
	if sdk, _ := sdkOf(); sdk != testSDKEndpoint {
		t.Errorf("after node b went quiet: %s, want the answering node's", sdk)
	}
}
