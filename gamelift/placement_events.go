package gamelift

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/hoist-gg/hoist/store"
)

// EventNotice is the body of a MessageEvent: an event in GameLift's EventBridge form and
// the notification target (an SNS topic ARN) of the resource that emitted it, empty for none.
type EventNotice struct {
	Target string          `json:"target,omitempty"`
	Event  json.RawMessage `json:"event"`
}

// eventEnvelope is the CloudWatch Events (EventBridge) form GameLift sends its events in.
type eventEnvelope struct {
	Version    string   `json:"version"`
	ID         string   `json:"id"`
	DetailType string   `json:"detail-type"`
	Source     string   `json:"source"`
	Account    string   `json:"account"`
	Time       string   `json:"time"`
	Region     string   `json:"region"`
	Resources  []string `json:"resources"`
	Detail     any      `json:"detail"`
}

// placementDetail is the detail of a "GameLift Queue Placement Event". The connection fields
// are set for PlacementFulfilled only.
type placementDetail struct {
	Type                 string                `json:"type"`
	PlacementID          string                `json:"placementId"`
	Port                 string                `json:"port,omitempty"`
	GameSessionArn       string                `json:"gameSessionArn,omitempty"`
	IPAddress            string                `json:"ipAddress,omitempty"`
	DNSName              string                `json:"dnsName,omitempty"`
	StartTime            string                `json:"startTime"`
	EndTime              string                `json:"endTime"`
	GameSessionRegion    string                `json:"gameSessionRegion,omitempty"`
	PlacedPlayerSessions []placedSessionDetail `json:"placedPlayerSessions,omitempty"`
	CustomEventData      string                `json:"customEventData,omitempty"`
}

type placedSessionDetail struct {
	PlayerID        string `json:"playerId"`
	PlayerSessionID string `json:"playerSessionId"`
}

// placementEventTypes maps a final placement status to its event type.
var placementEventTypes = map[string]string{
	placementFulfilled: "PlacementFulfilled",
	placementCancelled: "PlacementCancelled",
	placementTimedOut:  "PlacementTimedOut",
	placementFailed:    "PlacementFailed",
}

// eventTime formats a Unix millisecond time as GameLift's events do.
func eventTime(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }

// placementEvent records, in tx, the event of a placement that has just ended, addressed to
// its queue's NotificationTarget.
func (s *Service) placementEvent(tx store.Tx, p *placementDoc) error {
	var q queueDoc
	if _, err := getDoc(tx, kindQueue, p.Queue, &q, func() error { return errNoRecord }); ignoreNoRecord(err) != nil {
		return err
	}
	d := placementDetail{Type: placementEventTypes[p.Status], PlacementID: p.ID, StartTime: eventTime(p.Start),
		EndTime: eventTime(p.End), CustomEventData: q.CustomEventData}
	if p.Status == placementFulfilled {
		d.Port, d.GameSessionArn, d.IPAddress, d.DNSName, d.GameSessionRegion = strconv.Itoa(p.Port), p.SessionARN, p.IP, p.DNS, p.Location
		for _, ps := range p.Placed {
			d.PlacedPlayerSessions = append(d.PlacedPlayerSessions, placedSessionDetail{ps.Player, ps.Session})
		}
	}
	return s.emitEvent(tx, q.NotificationTarget, "GameLift Queue Placement Event", p.QueueARN, d)
}

// emitEvent writes an event for subscribers into the outbox, in tx.
func (s *Service) emitEvent(tx store.Tx, target, detailType, resource string, detail any) error {
	env := eventEnvelope{Version: "0", ID: s.newID(), DetailType: detailType, Source: "aws.gamelift",
		Account: s.account, Time: eventTime(s.nowMillis()), Region: s.region, Resources: []string{resource}, Detail: detail}
	data, err := json.Marshal(env)
	if err != nil {
		return err
	}
	if err := s.tallyEvent(tx, resource, detail); err != nil {
		return err
	}
	return s.enqueue(tx, EventsAddress, MessageEvent, EventNotice{Target: target, Event: data}, 0)
}
