package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/hoist-gg/hoist/internal/pgtest"
)

// TestMatchmakingThroughAnyNode runs two `hoist server` processes on one PostgreSQL. Tickets
// filed through the node that does not lead are matched by the leader's matchmaker (woken
// through LISTEN/NOTIFY, so within a second); a ticket searching in the leader's memory when
// the leader is killed -9 is not lost: the new leader rebuilds its pool from the store and
// matches it with a ticket filed afterwards.
func TestMatchmakingThroughAnyNode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two server processes")
	}
	dsn := pgtest.DSN(t)
	bin := buildHoist(t)
	nodes := []*clusterNode{startClusterNode(t, bin, dsn), startClusterNode(t, bin, dsn)}
	first := leader(t, nodes, 10*time.Second)
	other := nodes[0]
	if other == first {
		other = nodes[1]
	}
	gl := client(other.url(), testKeyID, testSecret)
	ctx := context.Background()
	if _, err := gl.CreateMatchmakingRuleSet(ctx, &gamelift.CreateMatchmakingRuleSetInput{Name: aws.String("duo"), RuleSetBody: aws.String(teamRules)}); err != nil {
		t.Fatal(err)
	}
	if _, err := gl.CreateMatchmakingConfiguration(ctx, &gamelift.CreateMatchmakingConfigurationInput{Name: aws.String("duo"),
		RuleSetName: aws.String("duo"), RequestTimeoutSeconds: aws.Int32(120), AcceptanceRequired: aws.Bool(false),
		FlexMatchMode: types.FlexMatchModeStandalone}); err != nil {
		t.Fatal(err)
	}
	start := func(ticket string) {
		t.Helper()
		_, err := gl.StartMatchmaking(ctx, &gamelift.StartMatchmakingInput{TicketId: aws.String(ticket), ConfigurationName: aws.String("duo"),
			Players: []types.Player{{PlayerId: aws.String("player-" + ticket), LatencyInMs: map[string]int32{"us-west-2": 20}}}})
		if err != nil {
			t.Fatalf("StartMatchmaking %s: %v", ticket, err)
		}
	}
	status := func(ticket string, want types.MatchmakingConfigurationStatus, within time.Duration) {
		t.Helper()
		eventually(t, within, ticket+" "+string(want), func() bool {
			out, err := gl.DescribeMatchmaking(ctx, &gamelift.DescribeMatchmakingInput{TicketIds: []string{ticket}})
			return err == nil && len(out.TicketList) == 1 && out.TicketList[0].Status == want
		})
	}
	start("a1")
	start("a2")
	status("a1", types.MatchmakingConfigurationStatusCompleted, 5*time.Second)
	status("a2", types.MatchmakingConfigurationStatusCompleted, time.Second)

	start("b1")
	status("b1", types.MatchmakingConfigurationStatusSearching, 5*time.Second)
	first.kill()
	leader(t, []*clusterNode{other}, 15*time.Second)
	start("b2")
	status("b1", types.MatchmakingConfigurationStatusCompleted, 10*time.Second)
	status("b2", types.MatchmakingConfigurationStatusCompleted, time.Second)
}
