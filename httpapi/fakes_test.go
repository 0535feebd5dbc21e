package httpapi

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hoist-gg/hoist/api"
)

// fakeStore stands in for the store in tests and benchmarks: a read under a lock.
type fakeStore struct {
	mu      sync.RWMutex
	aliases map[string]api.Alias
}

var created = time.Date(2026, 6, 1, 12, 30, 45, 125e6, time.UTC)

func newFakeStore() *fakeStore {
	return &fakeStore{aliases: map[string]api.Alias{
		"alias-1": {
			AliasId:         api.String("alias-1"),
			AliasArn:        api.String("arn:aws:gamelift:us-west-2::alias/alias-1"),
			Name:            api.String("prod"),
			CreationTime:    api.Time(created),
			LastUpdatedTime: api.Time(created.Add(2*time.Hour - 125*time.Millisecond)),
			RoutingStrategy: &api.RoutingStrategy{
				Type:    ptr(api.RoutingStrategyTypeSimple),
				FleetId: api.String("fleet-1"),
			},
		},
	}}
}

func (s *fakeStore) alias(id string) (api.Alias, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a, ok := s.aliases[id]
	return a, ok
}

func ptr[T any](v T) *T { return &v }

// fakeHandlers implements a few operations with fixed behaviour; every other operation is
// not implemented. DescribeAlias has special IDs that panic or fail with a non-API error.
func fakeHandlers(st *fakeStore) *api.Handlers {
	return &api.Handlers{
		DescribeAlias: func(_ context.Context, in *api.DescribeAliasInput) (*api.DescribeAliasOutput, error) {
			switch *in.AliasId {
			case "alias-panic":
				panic("the fake handler panics")
			case "alias-fail":
				return nil, errors.New("the fake database is on fire")
			}
			a, ok := st.alias(*in.AliasId)
			if !ok {
				return nil, api.Errorf(api.NotFoundException, "No alias found with ID %s", *in.AliasId)
			}
			return &api.DescribeAliasOutput{Alias: &a}, nil
		},
		DeleteAlias: func(context.Context, *api.DeleteAliasInput) (*api.DeleteAliasOutput, error) {
			return nil, nil
		},
		CreateAlias: func(_ context.Context, in *api.CreateAliasInput) (*api.CreateAliasOutput, error) {
			return &api.CreateAliasOutput{Alias: &api.Alias{Name: in.Name, RoutingStrategy: in.RoutingStrategy}}, nil
		},
		DescribeMatchmaking: describeMatchmaking,
		ListAliases: func(context.Context, *api.ListAliasesInput) (*api.ListAliasesOutput, error) {
			return &api.ListAliasesOutput{Aliases: []api.Alias{}}, nil
		},
	}
}

// describeMatchmaking answers with one ticket per ID: timestamps, nested structures, lists,
// maps of structures and of integers, enums and doubles.
func describeMatchmaking(_ context.Context, in *api.DescribeMatchmakingInput) (*api.DescribeMatchmakingOutput, error) {
	out := &api.DescribeMatchmakingOutput{TicketList: []api.MatchmakingTicket{}}
	for i, id := range in.TicketIds {
		out.TicketList = append(out.TicketList, api.MatchmakingTicket{
			TicketId:          api.String(id),
			ConfigurationName: api.String("ranked"),
			Status:            ptr(api.MatchmakingConfigurationStatusSearching),
			StartTime:         api.Time(created.Add(time.Duration(i) * time.Second)),
			EstimatedWaitTime: api.Int32(int32(30 + i)),
			Players: []api.Player{{
				PlayerId:    api.String("player-" + id),
				Team:        api.String("red"),
				LatencyInMs: map[string]int32{"us-west-2": 42, "us-east-1": 87},
				PlayerAttributes: map[string]api.AttributeValue{
					"skill": {N: api.Float64(23.5)},
					"mode":  {S: api.String("duo")},
					"maps":  {SL: []string{"desert", "harbor"}},
					"rank":  {SDM: map[string]float64{"solo": 1200, "team": 1350.25}},
				},
			}},
		})
	}
	return out, nil
}
