package notify

import (
	"context"
	"crypto/subtle"
	"net/url"
	"strconv"
	"time"

	"github.com/hoist-gg/hoist/store"
)

// subDoc is a stored subscription. Token confirms it (ConfirmSubscription) until
// TokenExpires; UnsubToken authorizes the unsigned unsubscribe link of its messages.
type subDoc struct {
	ID             string `json:"id"`
	Topic          string `json:"topic"`
	Protocol       string `json:"protocol"`
	Endpoint       string `json:"endpoint"`
	Token          string `json:"token"`
	TokenExpires   int64  `json:"tokenExpires"`
	UnsubToken     string `json:"unsubToken"`
	Confirmed      bool   `json:"confirmed,omitempty"`
	ConfirmedAuth  bool   `json:"confirmedAuth,omitempty"`
	AuthOnUnsub    bool   `json:"authOnUnsub,omitempty"`
	DeliveryPolicy string `json:"deliveryPolicy,omitempty"`
	Created        int64  `json:"created"`
}

// PendingConfirmation is the subscription ARN SNS shows for a subscription that is not
// confirmed yet.
const PendingConfirmation = "pending confirmation"

// listedPending is how the List operations show an unconfirmed subscription's ARN.
const listedPending = "PendingConfirmation"

// tokenLifetime is how long a confirmation token is valid, as in SNS (three days).
const tokenLifetime = 72 * time.Hour

// SubscribeInput is a Subscribe request.
type SubscribeInput struct {
	TopicARN, Protocol, Endpoint string
	Attributes                   map[string]string
	// ReturnSubscriptionARN asks for the ARN even before the subscription is confirmed.
	ReturnSubscriptionARN bool
}

// Subscription is one subscription as the List operations show it.
type Subscription struct {
	ARN, Owner, Protocol, Endpoint, TopicARN string
}

// Subscribe subscribes an HTTP/S endpoint to a topic and sends it a SubscriptionConfirmation
// message. It returns PendingConfirmation until the endpoint confirms (unless
// ReturnSubscriptionARN). Subscribing an endpoint that is already subscribed returns its
// subscription, sending the confirmation message again if it is still pending.
func (s *Service) Subscribe(ctx context.Context, in SubscribeInput) (string, error) {
	var sub *subDoc
	err := s.store.Update(ctx, func(tx store.Tx) error {
		_, t, err := s.readTopic(tx, in.TopicARN)
		if err != nil {
			return err
		}
		if err := checkSubscribe(t, in); err != nil {
			return err
		}
		if sub, err = s.existingSub(tx, t.Name, in); err != nil || sub == nil {
			sub, err = s.newSub(tx, t.Name, in)
		}
		if err != nil || sub.Confirmed {
			return err
		}
		return s.enqueueConfirmation(tx, sub)
	})
	if err != nil {
		return "", err
	}
	if !sub.Confirmed && !in.ReturnSubscriptionARN {
		return PendingConfirmation, nil
	}
	return s.subARN(sub.Topic, sub.ID), nil
}

// checkSubscribe checks a Subscribe request to topic t.
func checkSubscribe(t *topicDoc, in SubscribeInput) error {
	if in.Protocol != "http" && in.Protocol != "https" {
		return invalid("Hoist delivers to the http and https protocols only, not " + strconv.Quote(in.Protocol))
	}
	if t.fifo() {
		return invalid("Invalid protocol type: " + in.Protocol)
	}
	u, err := url.Parse(in.Endpoint)
	if err != nil || u.Scheme != in.Protocol || u.Host == "" {
		return invalid("Endpoint must match the specified protocol")
	}
	for k, v := range in.Attributes {
		if err := checkSubAttr(k, v); err != nil {
			return err
		}
	}
	return nil
}

// checkSubAttr checks one attribute given to Subscribe.
func checkSubAttr(name, value string) error {
	switch name {
	case attrDeliveryPolicy:
		_, err := parseSubPolicy(value)
		return err
	case "RawMessageDelivery":
		if value == "false" {
			return nil
		}
	case "FilterPolicy", "FilterPolicyScope", "RedrivePolicy", "SubscriptionRoleArn", "ReplayPolicy":
	default:
		return invalid("Attributes Reason: Unknown attribute " + name)
	}
	return invalid("Attributes Reason: Hoist does not implement the subscription attribute " + name + " (docs/notifications.md)")
}

// existingSub returns the subscription of the same endpoint to topic, or nil.
func (s *Service) existingSub(tx store.Tx, topic string, in SubscribeInput) (*subDoc, error) {
	_, subs, err := list[subDoc](tx, kindSub, store.ListOptions{Parent: topic})
	for _, sub := range subs {
		if sub.Protocol == in.Protocol && sub.Endpoint == in.Endpoint {
			return sub, err
		}
	}
	return nil, err
}

// newSub records a new, pending subscription.
func (s *Service) newSub(tx store.Tx, topic string, in SubscribeInput) (*subDoc, error) {
	now := s.nowMillis()
	sub := &subDoc{ID: newID(), Topic: topic, Protocol: in.Protocol, Endpoint: in.Endpoint, Token: newToken(),
		TokenExpires: now + tokenLifetime.Milliseconds(), UnsubToken: newToken(),
		DeliveryPolicy: in.Attributes[attrDeliveryPolicy], Created: now}
	return sub, insert(tx, kindSub, sub.ID, topic, sub)
}

// ConfirmSubscription confirms the subscription to a topic whose confirmation token is
// token, and returns its ARN. signed tells whether the request was signed (the
// ConfirmationWasAuthenticated attribute); authOnUnsubscribe then forbids the unsigned
// unsubscribe link.
func (s *Service) ConfirmSubscription(ctx context.Context, topicARN, token string, authOnUnsubscribe, signed bool) (string, error) {
	var arn string
	err := s.store.Update(ctx, func(tx store.Tx) error {
		_, t, err := s.readTopic(tx, topicARN)
		if err != nil {
			return err
		}
		recs, subs, err := list[subDoc](tx, kindSub, store.ListOptions{Parent: t.Name})
		if err != nil {
			return err
		}
		for i, sub := range subs {
			if subtle.ConstantTimeCompare([]byte(sub.Token), []byte(token)) != 1 {
				continue
			}
			arn = s.subARN(t.Name, sub.ID)
			if sub.Confirmed {
				return nil
			}
			if sub.TokenExpires < s.nowMillis() {
				return invalid("Token")
			}
			sub.Confirmed, sub.ConfirmedAuth, sub.AuthOnUnsub = true, signed, authOnUnsubscribe && signed
			return put(tx, recs[i], sub)
		}
		return invalid("Token")
	})
	return arn, err
}

// Unsubscribe deletes a subscription and its pending deliveries. A request that is not
// signed must carry the subscription's unsubscribe token (the UnsubscribeURL of its
// messages), and is refused when the subscription was confirmed with AuthenticateOnUnsubscribe.
func (s *Service) Unsubscribe(ctx context.Context, subARN, token string, signed bool) error {
	topic, id, err := s.subRef(subARN)
	if err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx store.Tx) error {
		var sub subDoc
		_, found, err := get(tx, kindSub, id, &sub)
		switch {
		case err != nil:
			return err
		case !found || sub.Topic != topic:
			return errSubNotFound
		case !signed && (sub.AuthOnUnsub || subtle.ConstantTimeCompare([]byte(sub.UnsubToken), []byte(token)) != 1):
			return errorf(CodeAuthorizationError, "Unsubscribing requires a signed request or the token of the subscription's UnsubscribeURL")
		}
		return deleteSub(tx, id)
	})
}

// deleteSub deletes subscription id and its pending deliveries, in tx.
func deleteSub(tx store.Tx, id string) error {
	recs, err := tx.List(kindDelivery, store.ListOptions{Parent: id})
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := tx.Delete(kindDelivery, r.ID); err != nil {
			return err
		}
	}
	return ignoreNotFound(tx.Delete(kindSub, id))
}

// ListSubscriptions returns a page of the subscriptions to topicARN (every topic's when it
// is empty) in creation order, and the next page's token.
func (s *Service) ListSubscriptions(ctx context.Context, topicARN, token string) ([]Subscription, string, error) {
	var out []Subscription
	var next string
	err := s.store.View(ctx, func(tx store.Tx) error {
		parent := ""
		if topicARN != "" {
			_, t, err := s.readTopic(tx, topicARN)
			if err != nil {
				return err
			}
			parent = t.Name
		}
		subs, n, err := page[subDoc](tx, kindSub, parent, token)
		out, next = make([]Subscription, len(subs)), n
		for i, sub := range subs {
			out[i] = s.listed(sub)
		}
		return err
	})
	return out, next, err
}

// listed is how the List operations show sub.
func (s *Service) listed(sub *subDoc) Subscription {
	arn := s.subARN(sub.Topic, sub.ID)
	if !sub.Confirmed {
		arn = listedPending
	}
	return Subscription{ARN: arn, Owner: s.account, Protocol: sub.Protocol, Endpoint: sub.Endpoint, TopicARN: s.topicARN(sub.Topic)}
}

// SubscriptionAttributes returns a subscription's attributes, as GetSubscriptionAttributes
// shows them.
func (s *Service) SubscriptionAttributes(ctx context.Context, subARN string) (map[string]string, error) {
	topic, id, err := s.subRef(subARN)
	if err != nil {
		return nil, err
	}
	var out map[string]string
	err = s.store.View(ctx, func(tx store.Tx) error {
		var sub subDoc
		var t topicDoc
		_, found, err := get(tx, kindSub, id, &sub)
		if err != nil || !found || sub.Topic != topic {
			return errorsOr(err, errSubNotFound)
		}
		if _, _, err := get(tx, kindTopic, topic, &t); err != nil {
			return err
		}
		out = s.subAttributes(&sub, t.Attrs[attrDeliveryPolicy])
		return nil
	})
	return out, err
}

// subAttributes is the attribute map of sub, whose topic's DeliveryPolicy is topicPolicy.
func (s *Service) subAttributes(sub *subDoc, topicPolicy string) map[string]string {
	out := map[string]string{"SubscriptionArn": s.subARN(sub.Topic, sub.ID), "TopicArn": s.topicARN(sub.Topic),
		"Owner": s.account, "Protocol": sub.Protocol, "Endpoint": sub.Endpoint, "RawMessageDelivery": "false",
		"PendingConfirmation": strconv.FormatBool(!sub.Confirmed), "ConfirmationWasAuthenticated": strconv.FormatBool(sub.ConfirmedAuth),
		"EffectiveDeliveryPolicy": effectiveSubPolicy(topicPolicy, sub.DeliveryPolicy)}
	if sub.DeliveryPolicy != "" {
		out[attrDeliveryPolicy] = sub.DeliveryPolicy
	}
	return out
}

// confirmationText is the Message of a SubscriptionConfirmation, as SNS words it.
func confirmationText(topicARN string) string {
	return "You have chosen to subscribe to the topic " + topicARN +
		".\nTo confirm the subscription, visit the SubscribeURL included in this message."
}
