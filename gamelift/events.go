package gamelift

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// eventDoc is one entry of a fleet's event log, stored with Parent = the fleet ID.
type eventDoc struct {
	ID       string `json:"id"`
	Code     string `json:"code"`
	Message  string `json:"message"`
	Resource string `json:"resource"`
	Time     int64  `json:"time"`
}

// addEvent appends an event to fleet fleetID's log, in the caller's transaction, so an event is
// written exactly when the change it reports commits.
func (s *Service) addEvent(tx store.Tx, fleetID string, code api.EventCode, msg string) error {
	d := &eventDoc{ID: s.newID(), Code: string(code), Message: msg, Resource: fleetID, Time: s.nowMillis()}
	if err := s.tallyFleetEvent(tx, fleetID, d.Code); err != nil {
		return err
	}
	s.logAction(tx, "fleet event", slog.String("fleet_id", fleetID), slog.String("code", d.Code), slog.String("message", msg))
	if err := insertChild(tx, kindFleetEvent, d.ID, fleetID, d); err != nil {
		return err
	}
	detail := fleetEventDetail{EventID: d.ID, EventCode: d.Code, ResourceID: fleetID, Message: msg, EventTime: eventTime(d.Time)}
	return s.emitEvent(tx, "", fleetEventType, s.arn(arnFleet, fleetID), detail)
}

// fleetEventType is the detail-type GameLift sends fleet events to EventBridge under.
const fleetEventType = "GameLift Fleet Event"

// fleetEventDetail is the detail of a "GameLift Fleet Event": the fields of the Event that
// DescribeFleetEvents answers (GameLift documents no other form). Fleet events have no
// NotificationTarget; they reach subscribers through the server's events topic
// (docs/notifications.md), as an EventBridge rule would send them on.
type fleetEventDetail struct {
	EventID    string `json:"eventId"`
	EventCode  string `json:"eventCode"`
	ResourceID string `json:"resourceId"`
	Message    string `json:"message"`
	EventTime  string `json:"eventTime"`
}

func apiEvent(d *eventDoc) api.Event {
	code := api.EventCode(d.Code)
	return api.Event{EventId: api.String(d.ID), ResourceId: api.String(d.Resource), EventCode: &code,
		Message: api.String(d.Message), EventTime: stamp(d.Time)}
}

// DescribeFleetEvents returns a fleet's events in the order they happened, optionally only
// those from StartTime to EndTime (both inclusive), a page at a time. Events of a deleted
// (TERMINATED) fleet stay readable.
func (s *Service) DescribeFleetEvents(ctx context.Context, in *api.DescribeFleetEventsInput) (*api.DescribeFleetEventsOutput, error) {
	doc, err := s.readFleet(ctx, in.FleetId)
	if err != nil {
		return nil, err
	}
	from, to := int64(0), int64(1<<62)
	if in.StartTime != nil {
		from = in.StartTime.UnixMilli()
	}
	if in.EndTime != nil {
		to = in.EndTime.UnixMilli()
	}
	hash := filterHash("DescribeFleetEvents", doc.ID, strconv.FormatInt(from, 10), strconv.FormatInt(to, 10))
	cursor, err := decodeToken(in.NextToken, hash)
	if err != nil {
		return nil, err
	}
	var page scanned[eventDoc]
	err = s.view(ctx, func(tx store.Tx) error {
		page, err = scanChildren(tx, kindFleetEvent, doc.ID, cursor, pageSize(in.Limit), func(e *eventDoc) bool {
			return e.Time >= from && e.Time <= to
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.DescribeFleetEventsOutput{Events: make([]api.Event, len(page.Items)), NextToken: next(page, hash)}
	for i, e := range page.Items {
		out.Events[i] = apiEvent(e)
	}
	return out, nil
}

// eachChild calls fn for every record of kind with Parent parent, decoded into a T.
func eachChild[T any](tx store.Tx, kind, parent string, fn func(*store.Record, *T) error) error {
	recs, err := tx.List(kind, store.ListOptions{Parent: parent})
	if err != nil {
		return err
	}
	for _, r := range recs {
		doc := new(T)
		if err := json.Unmarshal(r.Data, doc); err != nil {
			return err
		}
		if err := fn(r, doc); err != nil {
			return err
		}
	}
	return nil
}
