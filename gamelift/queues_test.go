package gamelift

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/hoist-gg/hoist/api"
)

func TestQueueLifecycle(t *testing.T) {
	w := newPlaceWorld(t)
	f := w.f
	fleetA, fleetB := f.svc.arn(arnFleet, w.a), f.svc.arn(arnFleet, w.b)
	in := &api.CreateGameSessionQueueInput{Name: api.String("eu"), TimeoutInSeconds: api.Int32(120),
		Destinations: []api.GameSessionQueueDestination{{DestinationArn: api.String(fleetB)}, {DestinationArn: api.String(fleetA)}},
		PlayerLatencyPolicies: []api.PlayerLatencyPolicy{{MaximumIndividualPlayerLatencyMilliseconds: api.Int32(50), PolicyDurationSeconds: api.Int32(30)},
			{MaximumIndividualPlayerLatencyMilliseconds: api.Int32(200)}},
		FilterConfiguration:   &api.FilterConfiguration{AllowedLocations: []string{"custom-b", "custom-c"}},
		PriorityConfiguration: priorities([]api.PriorityType{"LOCATION", "LATENCY"}, "custom-c", "custom-b"),
		CustomEventData:       api.String("ced"), NotificationTarget: api.String("arn:aws:sns:us-west-2:123456789012:placements"),
		Tags: []api.Tag{{Key: api.String("team"), Value: api.String("core")}}}
	q := ok(f.h.CreateGameSessionQueue(f.ctx, in))(t).GameSessionQueue
	arn := f.svc.arn(arnQueue, "eu")
	want := &api.GameSessionQueue{Name: api.String("eu"), GameSessionQueueArn: api.String(arn), TimeoutInSeconds: api.Int32(120),
		Destinations: in.Destinations, PlayerLatencyPolicies: in.PlayerLatencyPolicies, FilterConfiguration: in.FilterConfiguration,
		PriorityConfiguration: in.PriorityConfiguration, CustomEventData: in.CustomEventData, NotificationTarget: in.NotificationTarget}
	if !reflect.DeepEqual(q, want) {
		t.Fatalf("CreateGameSessionQueue = %s\nwant %s", mustJSON(q), mustJSON(want))
	}
	for _, name := range []string{"eu", arn} {
		got := ok(f.h.DescribeGameSessionQueues(f.ctx, &api.DescribeGameSessionQueuesInput{Names: []string{name}}))(t)
		if len(got.GameSessionQueues) != 1 || !reflect.DeepEqual(&got.GameSessionQueues[0], want) {
			t.Errorf("DescribeGameSessionQueues(%s) = %+v", name, got.GameSessionQueues)
		}
	}
	tags := ok(f.h.ListTagsForResource(f.ctx, &api.ListTagsForResourceRequest{ResourceARN: api.String(arn)}))(t).Tags
	if len(tags) != 1 || *tags[0].Key != "team" {
		t.Errorf("tags %+v", tags)
	}

	alias := f.createAlias(t, "to-a", simple(w.a))
	up := ok(f.h.UpdateGameSessionQueue(f.ctx, &api.UpdateGameSessionQueueInput{Name: api.String(arn), TimeoutInSeconds: api.Int32(30),
		Destinations:          []api.GameSessionQueueDestination{{DestinationArn: alias.AliasArn}},
		PlayerLatencyPolicies: []api.PlayerLatencyPolicy{}, NotificationTarget: api.String("")}))(t).GameSessionQueue
	if *up.TimeoutInSeconds != 30 || len(up.Destinations) != 1 || *up.Destinations[0].DestinationArn != *alias.AliasArn ||
		len(up.PlayerLatencyPolicies) != 0 || up.NotificationTarget != nil || *up.CustomEventData != "ced" ||
		!reflect.DeepEqual(up.PriorityConfiguration, in.PriorityConfiguration) {
		t.Errorf("UpdateGameSessionQueue = %+v", up)
	}
	ok(f.h.DeleteGameSessionQueue(f.ctx, &api.DeleteGameSessionQueueInput{Name: api.String("eu")}))(t)
	_, err := f.h.DescribeGameSessionQueues(f.ctx, &api.DescribeGameSessionQueuesInput{Names: []string{"eu"}})
	wantCode(t, err, api.NotFoundException)
	_, err = f.h.DeleteGameSessionQueue(f.ctx, &api.DeleteGameSessionQueueInput{Name: api.String("eu")})
	wantCode(t, err, api.NotFoundException)
}

func TestQueueDefaultsAndErrors(t *testing.T) {
	w := newPlaceWorld(t)
	f := w.f
	q := ok(f.h.CreateGameSessionQueue(f.ctx, &api.CreateGameSessionQueueInput{Name: api.String("bare")}))(t).GameSessionQueue
	if *q.TimeoutInSeconds != DefaultQueueTimeoutSeconds || q.FilterConfiguration != nil || q.PriorityConfiguration != nil || len(q.Destinations) != 0 {
		t.Errorf("a queue with defaults: %+v", q)
	}
	fleet := func(id string) []api.GameSessionQueueDestination {
		return []api.GameSessionQueueDestination{{DestinationArn: api.String(id)}}
	}
	var eleven []api.GameSessionQueueDestination
	for range 11 {
		eleven = append(eleven, fleet(f.svc.arn(arnFleet, w.a))...)
	}
	bad := []struct {
		name string
		in   *api.CreateGameSessionQueueInput
		code api.ErrorCode
	}{
		{"name taken", &api.CreateGameSessionQueueInput{Name: api.String("bare")}, api.InvalidRequestException},
		{"unknown fleet", &api.CreateGameSessionQueueInput{Name: api.String("x"), Destinations: fleet("arn:aws:gamelift:us-west-2::fleet/fleet-00000000-0000-0000-0000-000000000000")}, api.NotFoundException},
		{"unknown alias", &api.CreateGameSessionQueueInput{Name: api.String("x"), Destinations: fleet("arn:aws:gamelift:us-west-2::alias/alias-00000000-0000-0000-0000-000000000000")}, api.NotFoundException},
		{"not a fleet or alias", &api.CreateGameSessionQueueInput{Name: api.String("x"), Destinations: fleet("arn:aws:gamelift:us-west-2::build/build-1")}, api.InvalidRequestException},
		{"a fleet ID, not an ARN", &api.CreateGameSessionQueueInput{Name: api.String("x"), Destinations: fleet(w.a)}, api.InvalidRequestException},
		{"another Region", &api.CreateGameSessionQueueInput{Name: api.String("x"), Destinations: fleet("arn:aws:gamelift:eu-west-1:" + testAccount + ":fleet/" + w.a)}, api.InvalidRequestException},
		{"listed twice", &api.CreateGameSessionQueueInput{Name: api.String("x"), Destinations: append(fleet(f.svc.arn(arnFleet, w.a)), fleet(f.svc.arn(arnFleet, w.a))...)}, api.InvalidRequestException},
		{"too many destinations", &api.CreateGameSessionQueueInput{Name: api.String("x"), Destinations: eleven}, api.LimitExceededException},
		{"timeout too short", &api.CreateGameSessionQueueInput{Name: api.String("x"), TimeoutInSeconds: api.Int32(5)}, api.InvalidRequestException},
		{"timeout too long", &api.CreateGameSessionQueueInput{Name: api.String("x"), TimeoutInSeconds: api.Int32(601)}, api.InvalidRequestException},
		{"policy without a cap", &api.CreateGameSessionQueueInput{Name: api.String("x"), PlayerLatencyPolicies: []api.PlayerLatencyPolicy{{PolicyDurationSeconds: api.Int32(5)}}}, api.InvalidRequestException},
		{"priority twice", &api.CreateGameSessionQueueInput{Name: api.String("x"), PriorityConfiguration: priorities([]api.PriorityType{"COST", "COST"})}, api.InvalidRequestException},
		{"location twice", &api.CreateGameSessionQueueInput{Name: api.String("x"), PriorityConfiguration: priorities([]api.PriorityType{"LOCATION"}, "custom-a", "custom-a")}, api.InvalidRequestException},
		{"filter twice", &api.CreateGameSessionQueueInput{Name: api.String("x"), FilterConfiguration: &api.FilterConfiguration{AllowedLocations: []string{"custom-a", "custom-a"}}}, api.InvalidRequestException},
		{"not an SNS topic", &api.CreateGameSessionQueueInput{Name: api.String("x"), NotificationTarget: api.String("placements")}, api.InvalidRequestException},
		{"reserved tag", &api.CreateGameSessionQueueInput{Name: api.String("x"), Tags: []api.Tag{{Key: api.String("aws:x"), Value: api.String("v")}}}, api.TaggingFailedException},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			f.unchanged(t, b.code, func() error { _, err := f.h.CreateGameSessionQueue(f.ctx, b.in); return err })
		})
	}
	f.unchanged(t, api.NotFoundException, func() error {
		_, err := f.h.UpdateGameSessionQueue(f.ctx, &api.UpdateGameSessionQueueInput{Name: api.String("nope"), TimeoutInSeconds: api.Int32(60)})
		return err
	})
	f.unchanged(t, api.InvalidRequestException, func() error {
		_, err := f.h.UpdateGameSessionQueue(f.ctx, &api.UpdateGameSessionQueueInput{Name: api.String("bare"), TimeoutInSeconds: api.Int32(1)})
		return err
	})
	f.unchanged(t, api.InvalidRequestException, func() error {
		_, err := f.h.DescribeGameSessionQueues(f.ctx, &api.DescribeGameSessionQueuesInput{Names: []string{"arn:aws:gamelift:us-west-2::fleet/bare"}})
		return err
	})
}

func TestDescribeGameSessionQueuesPaging(t *testing.T) {
	f := newFixture(t, "")
	var names []string
	for i := range 5 {
		names = append(names, fmt.Sprintf("q%d", i))
		ok(f.h.CreateGameSessionQueue(f.ctx, &api.CreateGameSessionQueueInput{Name: api.String(names[i])}))(t)
	}
	collect := func(in *api.DescribeGameSessionQueuesInput) (got []string, pages int) {
		for {
			out := ok(f.h.DescribeGameSessionQueues(f.ctx, in))(t)
			pages++
			for _, q := range out.GameSessionQueues {
				got = append(got, *q.Name)
			}
			if out.NextToken == nil {
				return got, pages
			}
			in.NextToken = out.NextToken
		}
	}
	if got, pages := collect(&api.DescribeGameSessionQueuesInput{Limit: api.Int32(2)}); !reflect.DeepEqual(got, names) || pages != 3 {
		t.Errorf("all queues in %d pages: %v", pages, got)
	}
	want := []string{"q3", "q0", "q4"}
	if got, pages := collect(&api.DescribeGameSessionQueuesInput{Names: want, Limit: api.Int32(2)}); !reflect.DeepEqual(got, want) || pages != 2 {
		t.Errorf("named queues in %d pages: %v", pages, got)
	}
	first := ok(f.h.DescribeGameSessionQueues(f.ctx, &api.DescribeGameSessionQueuesInput{Limit: api.Int32(2)}))(t)
	_, err := f.h.DescribeGameSessionQueues(f.ctx, &api.DescribeGameSessionQueuesInput{Names: want, NextToken: first.NextToken})
	wantCode(t, err, api.InvalidRequestException)
}

// TestDeleteQueueEndsItsPlacements: deleting a queue fails its placements that wait for
// capacity (with their event); one whose game session is starting keeps it and is fulfilled.
func TestDeleteQueueEndsItsPlacements(t *testing.T) {
	w := newPlaceWorld(t)
	w.queue(t, "q", nil)
	w.ready(t, w.a, "custom-a", "one")
	starting := w.start(t, &api.StartGameSessionPlacementInput{PlacementId: api.String("starting"), GameSessionQueueName: api.String("q")})
	w.start(t, &api.StartGameSessionPlacementInput{PlacementId: api.String("waiting"), GameSessionQueueName: api.String("q")})
	ok(w.f.h.DeleteGameSessionQueue(w.f.ctx, &api.DeleteGameSessionQueueInput{Name: api.String("q")}))(t)
	if s := *w.describe(t, "waiting").Status; s != api.GameSessionPlacementStateFailed {
		t.Errorf("waiting placement is %s after its queue was deleted", s)
	}
	st := w.n.started()
	must(t, w.f.svc.ActivateGameSession(w.f.ctx, st[0].Ref, *starting.GameSessionArn))
	if s := *w.describe(t, "starting").Status; s != api.GameSessionPlacementStateFulfilled {
		t.Errorf("starting placement is %s after its session activated", s)
	}
	if types := w.eventTypes(t); types != "[PlacementFailed PlacementFulfilled]" {
		t.Errorf("event types %s", types)
	}
}

func mustJSON(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}
