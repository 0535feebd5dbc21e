package notify

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/hoist-gg/hoist/store"
)

// Record kinds. A topic's ID is its name; a subscription's Parent is its topic's name; a
// delivery's Parent is its subscription's ID (so its Seq orders a subscription's messages);
// a failed delivery's Parent is its topic's name. Deliveries are of an announced kind
// (store.Announced), so the store wakes the delivery loop when one is written.
const (
	kindTopic    = "snstopic"
	kindSub      = "snssub"
	kindDelivery = store.AnnouncedPrefix + "-sns"
	kindFailed   = "snsfailed"
)

// IsDeliveryKind reports whether records of kind are deliveries: an announcement of one
// means there may be something to deliver (DeliveryLoop.Wake).
func IsDeliveryKind(kind string) bool { return kind == kindDelivery }

// get decodes the record kind/id into v; found is false when there is none.
func get(tx store.Tx, kind, id string, v any) (*store.Record, bool, error) {
	rec, err := tx.Get(kind, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return rec, true, json.Unmarshal(rec.Data, v)
}

// put replaces a record read earlier with v (compare-and-set on its version).
func put(tx store.Tx, rec *store.Record, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	rec.Data = data
	return tx.Put(rec)
}

// insert adds a record holding v.
func insert(tx store.Tx, kind, id, parent string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.Insert(&store.Record{Kind: kind, ID: id, Parent: parent, Data: data})
}

// list decodes the records of kind selected by opt.
func list[T any](tx store.Tx, kind string, opt store.ListOptions) ([]*store.Record, []*T, error) {
	recs, err := tx.List(kind, opt)
	if err != nil {
		return nil, nil, err
	}
	docs := make([]*T, len(recs))
	for i, r := range recs {
		docs[i] = new(T)
		if err := json.Unmarshal(r.Data, docs[i]); err != nil {
			return nil, nil, err
		}
	}
	return recs, docs, nil
}

// pageSize is how many items a List operation returns at most, as SNS (100).
const pageSize = 100

// page reads one page of kind (of parent, when not empty) after the cursor token, and the
// token of the next page ("" at the end).
func page[T any](tx store.Tx, kind, parent, token string) ([]*T, string, error) {
	after := int64(0)
	if token != "" {
		n, err := strconv.ParseInt(token, 10, 64)
		if err != nil || n < 0 {
			return nil, "", invalid("NextToken")
		}
		after = n
	}
	recs, docs, err := list[T](tx, kind, store.ListOptions{Parent: parent, AfterSeq: after, Limit: pageSize + 1})
	if err != nil || len(docs) <= pageSize {
		return docs, "", err
	}
	return docs[:pageSize], strconv.FormatInt(recs[pageSize-1].Seq, 10), nil
}

// topicARN is the ARN of the topic name.
func (s *Service) topicARN(name string) string {
	return "arn:aws:sns:" + s.region + ":" + s.account + ":" + name
}

// topicName returns the name of the topic arn designates, or an InvalidParameter error when
// arn is not a topic ARN of this region and account.
func (s *Service) topicName(arn string) (string, error) {
	name, ok := strings.CutPrefix(arn, s.topicARN(""))
	if !ok || !validTopicName(name) {
		return "", invalid("TopicArn")
	}
	return name, nil
}

// subARN is the ARN of subscription id to topic name.
func (s *Service) subARN(topic, id string) string { return s.topicARN(topic) + ":" + id }

// subRef returns the topic name and subscription ID of a subscription ARN.
func (s *Service) subRef(arn string) (topic, id string, err error) {
	i := strings.LastIndexByte(arn, ':')
	if i < 0 {
		return "", "", invalid("SubscriptionArn")
	}
	topic, err = s.topicName(arn[:i])
	if err != nil || arn[i+1:] == "" {
		return "", "", invalid("SubscriptionArn")
	}
	return topic, arn[i+1:], nil
}
