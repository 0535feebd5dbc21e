package notify

import (
	"context"
	"time"

	"github.com/hoist-gg/hoist/store"
)

// FailedDelivery is a message given up for one subscription: its retries ran out, or the
// endpoint refused it with a 3xx or 4xx status. Failed deliveries are kept for two weeks.
type FailedDelivery struct {
	MessageID       string    `json:"messageId"`
	Type            string    `json:"type"`
	TopicARN        string    `json:"topicArn"`
	SubscriptionARN string    `json:"subscriptionArn"`
	Endpoint        string    `json:"endpoint"`
	Subject         string    `json:"subject,omitempty"`
	Message         string    `json:"message"`
	Attempts        int       `json:"attempts"`
	LastError       string    `json:"lastError"`
	Published       time.Time `json:"published"`
	GaveUp          time.Time `json:"gaveUp"`
}

// FailedDeliveries returns up to limit failed deliveries (0: all), oldest first, of the
// topic topicARN (every topic's when it is empty; the topic itself may be deleted).
func (s *Service) FailedDeliveries(ctx context.Context, topicARN string, limit int) ([]FailedDelivery, error) {
	parent := ""
	if topicARN != "" {
		name, err := s.topicName(topicARN)
		if err != nil {
			return nil, err
		}
		parent = name
	}
	var out []FailedDelivery
	err := s.store.View(ctx, func(tx store.Tx) error {
		_, docs, err := list[deliveryDoc](tx, kindFailed, store.ListOptions{Parent: parent, Limit: limit})
		out = make([]FailedDelivery, len(docs))
		for i, d := range docs {
			out[i] = FailedDelivery{MessageID: d.MessageID, Type: d.Type, TopicARN: s.topicARN(d.Topic),
				SubscriptionARN: s.subARN(d.Topic, d.Sub), Endpoint: d.Endpoint, Subject: d.Subject, Message: d.Message,
				Attempts: d.Attempts, LastError: d.LastError, Published: time.UnixMilli(d.Time).UTC(), GaveUp: time.UnixMilli(d.GaveUp).UTC()}
		}
		return err
	})
	return out, err
}

// PendingDeliveries returns how many deliveries wait to be made (or retried).
func (s *Service) PendingDeliveries(ctx context.Context) (int, error) {
	n := 0
	err := s.store.View(ctx, func(tx store.Tx) error {
		recs, err := tx.List(kindDelivery, store.ListOptions{})
		n = len(recs)
		return err
	})
	return n, err
}
