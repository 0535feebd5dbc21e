package notify

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/hoist-gg/hoist/store"
)

// Message types of the messages sent to HTTP/S subscriptions.
const (
	TypeNotification             = "Notification"
	TypeSubscriptionConfirmation = "SubscriptionConfirmation"
)

// maxMessageBytes is SNS's limit on a message (256 KiB).
const maxMessageBytes = 262144

// MessageAttribute is a message attribute as Publish takes it.
type MessageAttribute struct {
	DataType    string
	StringValue string
	BinaryValue []byte
}

// PublishInput is a Publish request.
type PublishInput struct {
	TopicARN, Subject, Message string
	// MessageStructure "json" makes Message a JSON object of one message per protocol, with a
	// "default" one.
	MessageStructure string
	Attributes       map[string]MessageAttribute
	// MessageGroupID and MessageDeduplicationID are required by FIFO topics (the second
	// unless ContentBasedDeduplication); standard topics ignore them.
	MessageGroupID, MessageDeduplicationID string
}

// attrValue is a message attribute as notifications carry it.
type attrValue struct {
	Type  string `json:"Type"`
	Value string `json:"Value"`
}

// deliveryDoc is a stored delivery: one message for one subscription. Next (Unix ms) is
// when it may be attempted (again); GaveUp is set once it is moved to the failed ones.
type deliveryDoc struct {
	Type       string               `json:"type"`
	MessageID  string               `json:"messageId"`
	Topic      string               `json:"topic"`
	Sub        string               `json:"sub"`
	Endpoint   string               `json:"endpoint"`
	Subject    string               `json:"subject,omitempty"`
	Message    string               `json:"message"`
	Attributes map[string]attrValue `json:"attributes,omitempty"`
	Token      string               `json:"token,omitempty"`
	UnsubToken string               `json:"unsubToken,omitempty"`
	Time       int64                `json:"time"`
	Attempts   int                  `json:"attempts,omitempty"`
	Next       int64                `json:"next,omitempty"`
	LastError  string               `json:"lastError,omitempty"`
	GaveUp     int64                `json:"gaveUp,omitempty"`
}

// Publish sends a message to every confirmed subscription of a topic and returns its
// message ID. The message is durable once Publish returns: one delivery per subscription is
// stored in the same transaction.
func (s *Service) Publish(ctx context.Context, in PublishInput) (string, error) {
	attrs, err := checkPublish(in)
	if err != nil {
		return "", err
	}
	msg := &deliveryDoc{Type: TypeNotification, MessageID: newID(), Subject: in.Subject, Message: in.Message,
		Attributes: attrs, Time: s.nowMillis()}
	err = s.store.Update(ctx, func(tx store.Tx) error {
		_, t, err := s.readTopic(tx, in.TopicARN)
		if err != nil {
			return err
		}
		if err := checkFIFO(t, in); err != nil {
			return err
		}
		return s.enqueue(tx, t.Name, msg, in.MessageStructure == "json")
	})
	return msg.MessageID, err
}

// PublishEvent publishes message to the topic targetARN in tx, for an event that leaves the
// store in the same transaction (GameLift's events). found is false, and nothing is written,
// when targetARN is not a topic here.
func (s *Service) PublishEvent(tx store.Tx, targetARN, message string) (found bool, err error) {
	name, err := s.topicName(targetARN)
	if err != nil {
		return false, nil
	}
	var t topicDoc
	if _, found, err = get(tx, kindTopic, name, &t); err != nil || !found {
		return false, err
	}
	msg := &deliveryDoc{Type: TypeNotification, MessageID: newID(), Message: message, Time: s.nowMillis()}
	return true, s.enqueue(tx, name, msg, false)
}

// enqueue stores one delivery of msg for every confirmed subscription of topic. perProtocol
// says msg.Message is a JSON object of messages per protocol (already checked).
func (s *Service) enqueue(tx store.Tx, topic string, msg *deliveryDoc, perProtocol bool) error {
	_, subs, err := list[subDoc](tx, kindSub, store.ListOptions{Parent: topic})
	if err != nil {
		return err
	}
	for _, sub := range subs {
		if !sub.Confirmed {
			continue
		}
		d := *msg
		d.Topic, d.Sub, d.Endpoint, d.UnsubToken = topic, sub.ID, sub.Endpoint, sub.UnsubToken
		if perProtocol {
			d.Message = messageFor(msg.Message, sub.Protocol)
		}
		if err := insert(tx, kindDelivery, newID(), sub.ID, &d); err != nil {
			return err
		}
	}
	return nil
}

// enqueueConfirmation stores the SubscriptionConfirmation message of a pending
// subscription.
func (s *Service) enqueueConfirmation(tx store.Tx, sub *subDoc) error {
	d := &deliveryDoc{Type: TypeSubscriptionConfirmation, MessageID: newID(), Topic: sub.Topic, Sub: sub.ID,
		Endpoint: sub.Endpoint, Message: confirmationText(s.topicARN(sub.Topic)), Token: sub.Token, Time: s.nowMillis()}
	return insert(tx, kindDelivery, newID(), sub.ID, d)
}

// checkPublish checks a Publish request and returns its message attributes as
// notifications carry them.
func checkPublish(in PublishInput) (map[string]attrValue, error) {
	switch {
	case in.Message == "":
		return nil, invalid("Empty message")
	case len(in.Message) > maxMessageBytes:
		return nil, invalid("Message too long")
	case !validSubject(in.Subject):
		return nil, invalid("Subject")
	case in.MessageStructure != "" && in.MessageStructure != "json":
		return nil, invalid("MessageStructure")
	case in.MessageStructure == "json" && !validStructured(in.Message):
		return nil, invalid("Message Structure - No default entry in JSON message body")
	}
	return messageAttributes(in.Attributes)
}

// checkFIFO checks the FIFO parameters of a Publish request to topic t.
func checkFIFO(t *topicDoc, in PublishInput) error {
	switch {
	case !t.fifo():
		return nil
	case in.MessageGroupID == "":
		return invalid("The MessageGroupId parameter is required for FIFO topics")
	case in.MessageDeduplicationID == "" && t.Attrs[attrContentBasedDup] != "true":
		return invalid("The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly")
	}
	return nil
}

// validSubject reports whether subject is a valid Subject: at most 100 printable ASCII
// characters, no line breaks.
func validSubject(subject string) bool {
	if len(subject) > 100 {
		return false
	}
	for _, c := range subject {
		if c < ' ' || c > '~' {
			return false
		}
	}
	return true
}

// validStructured reports whether message is a JSON object with a "default" string.
func validStructured(message string) bool {
	var m map[string]any
	if json.Unmarshal([]byte(message), &m) != nil {
		return false
	}
	_, ok := m["default"].(string)
	return ok
}

// messageFor picks the message for protocol out of a per-protocol JSON message.
func messageFor(message, protocol string) string {
	var m map[string]any
	json.Unmarshal([]byte(message), &m)
	if v, ok := m[protocol].(string); ok {
		return v
	}
	v, _ := m["default"].(string)
	return v
}

// messageAttributes checks message attributes and converts them to the notification form.
func messageAttributes(in map[string]MessageAttribute) (map[string]attrValue, error) {
	if len(in) == 0 {
		return nil, nil
	}
	if len(in) > 10 {
		return nil, invalid("Too many message attributes")
	}
	out := make(map[string]attrValue, len(in))
	for name, a := range in {
		base, _, _ := strings.Cut(a.DataType, ".")
		switch {
		case name == "" || strings.HasPrefix(strings.ToLower(name), "aws.") || strings.HasPrefix(strings.ToLower(name), "amazon."):
			return nil, invalid("Message attribute name '" + name + "' is invalid")
		case base == "Binary" && len(a.BinaryValue) > 0:
			out[name] = attrValue{Type: a.DataType, Value: base64.StdEncoding.EncodeToString(a.BinaryValue)}
		case (base == "String" || base == "Number") && a.StringValue != "":
			out[name] = attrValue{Type: a.DataType, Value: a.StringValue}
		default:
			return nil, invalid("The message attribute '" + name + "' has an invalid message attribute type or value")
		}
	}
	return out, nil
}
