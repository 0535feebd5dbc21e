package notify

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strconv"
	"strings"

	"github.com/hoist-gg/hoist/store"
)

// topicDoc is a stored topic. Attrs holds the attributes set by CreateTopic and
// SetTopicAttributes, as given.
type topicDoc struct {
	Name    string            `json:"name"`
	Attrs   map[string]string `json:"attrs,omitempty"`
	Created int64             `json:"created"`
}

// Topic attribute names.
const (
	attrDisplayName     = "DisplayName"
	attrPolicy          = "Policy"
	attrDeliveryPolicy  = "DeliveryPolicy"
	attrSignatureVer    = "SignatureVersion"
	attrTracingConfig   = "TracingConfig"
	attrKMSKey          = "KmsMasterKeyId"
	attrFifoTopic       = "FifoTopic"
	attrContentBasedDup = "ContentBasedDeduplication"
)

// fifoSuffix ends the names of FIFO topics.
const fifoSuffix = ".fifo"

// fifo reports whether the topic is a FIFO topic.
func (t *topicDoc) fifo() bool { return t.Attrs[attrFifoTopic] == "true" }

// validTopicName reports whether name is a topic name: 1 to 256 ASCII letters, digits,
// hyphens and underscores, a FIFO topic's followed by ".fifo".
func validTopicName(name string) bool {
	base := strings.TrimSuffix(name, fifoSuffix)
	if len(name) > 256 || base == "" {
		return false
	}
	for _, c := range base {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// CreateTopic creates the topic name with attrs and returns its ARN. It is idempotent: a topic
// of that name that already exists is returned, unless attrs differ from its own.
func (s *Service) CreateTopic(ctx context.Context, name string, attrs map[string]string) (string, error) {
	if err := checkNewTopic(name, attrs); err != nil {
		return "", err
	}
	err := s.store.Update(ctx, func(tx store.Tx) error {
		var t topicDoc
		_, found, err := get(tx, kindTopic, name, &t)
		if err != nil || !found {
			return errorsOr(err, insert(tx, kindTopic, name, "", &topicDoc{Name: name, Attrs: attrs, Created: s.nowMillis()}))
		}
		for k, v := range attrs {
			if t.Attrs[k] != v {
				return invalid("Attributes Reason: Topic already exists with different attributes")
			}
		}
		return nil
	})
	return s.topicARN(name), err
}

// errorsOr returns err when it is not nil, else next.
func errorsOr(err, next error) error {
	if err != nil {
		return err
	}
	return next
}

// checkNewTopic checks a new topic's name and attributes.
func checkNewTopic(name string, attrs map[string]string) error {
	fifo := attrs[attrFifoTopic] == "true"
	if !validTopicName(name) || strings.HasSuffix(name, fifoSuffix) != fifo {
		if fifo {
			return invalid("Fifo Topic names must end with .fifo and must be made up of only uppercase and lowercase ASCII letters, numbers, underscores, and hyphens, and must be between 1 and 256 characters long.")
		}
		return invalid("Topic Name")
	}
	for k, v := range attrs {
		if err := checkTopicAttr(k, v, fifo, true); err != nil {
			return err
		}
	}
	return nil
}

// checkTopicAttr checks one attribute of a topic (fifo or not) being created or changed.
func checkTopicAttr(name, value string, fifo, creating bool) error {
	ok := true
	switch name {
	case attrDisplayName:
		ok = len(value) <= 100
	case attrPolicy:
		ok = value == "" || json.Valid([]byte(value))
	case attrDeliveryPolicy:
		if value != "" {
			_, err := parseTopicPolicy(value)
			return err
		}
	case attrSignatureVer:
		ok = value == "1" || value == "2"
	case attrTracingConfig:
		ok = value == "PassThrough" || value == "Active"
	case attrKMSKey:
	case attrFifoTopic:
		ok = creating && (value == "true" || value == "false")
	case attrContentBasedDup:
		ok = fifo && (value == "true" || value == "false")
	default:
		return invalid("AttributeName")
	}
	if !ok {
		return invalid(name)
	}
	return nil
}

// DeleteTopic deletes a topic with its subscriptions and their pending deliveries. Deleting a
// topic that does not exist is not an error, as in SNS. Failed deliveries stay readable.
func (s *Service) DeleteTopic(ctx context.Context, arn string) error {
	name, err := s.topicName(arn)
	if err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx store.Tx) error {
		recs, _, err := list[subDoc](tx, kindSub, store.ListOptions{Parent: name})
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := deleteSub(tx, r.ID); err != nil {
				return err
			}
		}
		return ignoreNotFound(tx.Delete(kindTopic, name))
	})
}

// ListTopics returns a page of topic ARNs in creation order, and the next page's token.
func (s *Service) ListTopics(ctx context.Context, token string) ([]string, string, error) {
	var arns []string
	var next string
	err := s.store.View(ctx, func(tx store.Tx) error {
		docs, n, err := page[topicDoc](tx, kindTopic, "", token)
		arns, next = make([]string, len(docs)), n
		for i, t := range docs {
			arns[i] = s.topicARN(t.Name)
		}
		return err
	})
	return arns, next, err
}

// readTopic reads the topic arn designates in tx.
func (s *Service) readTopic(tx store.Tx, arn string) (*store.Record, *topicDoc, error) {
	name, err := s.topicName(arn)
	if err != nil {
		return nil, nil, err
	}
	var t topicDoc
	rec, found, err := get(tx, kindTopic, name, &t)
	if err == nil && !found {
		err = errTopicNotFound
	}
	return rec, &t, err
}

// TopicAttributes returns a topic's attributes, as GetTopicAttributes shows them.
func (s *Service) TopicAttributes(ctx context.Context, arn string) (map[string]string, error) {
	var out map[string]string
	err := s.store.View(ctx, func(tx store.Tx) error {
		_, t, err := s.readTopic(tx, arn)
		if err != nil {
			return err
		}
		_, subs, err := list[subDoc](tx, kindSub, store.ListOptions{Parent: t.Name})
		out = s.topicAttributes(t, subs)
		return err
	})
	return out, err
}

// topicAttributes is the attribute map of t, with subs its subscriptions.
func (s *Service) topicAttributes(t *topicDoc, subs []*subDoc) map[string]string {
	confirmed := 0
	for _, sub := range subs {
		if sub.Confirmed {
			confirmed++
		}
	}
	arn := s.topicARN(t.Name)
	out := map[string]string{"TopicArn": arn, "Owner": s.account, attrDisplayName: "", attrSignatureVer: "1",
		attrPolicy: s.defaultAccessPolicy(arn), "SubscriptionsConfirmed": strconv.Itoa(confirmed),
		"SubscriptionsPending": strconv.Itoa(len(subs) - confirmed), "SubscriptionsDeleted": "0",
		"EffectiveDeliveryPolicy": effectiveTopicPolicy(t.Attrs[attrDeliveryPolicy])}
	if t.fifo() {
		out[attrContentBasedDup] = "false"
	}
	maps.Copy(out, t.Attrs)
	return out
}

// defaultAccessPolicy is the access policy SNS gives a new topic: its owner may do
// everything. Hoist stores policies but does not enforce them (every caller holds the key).
func (s *Service) defaultAccessPolicy(arn string) string {
	type principal struct {
		AWS string `json:"AWS"`
	}
	type statement struct {
		Sid       string                       `json:"Sid"`
		Effect    string                       `json:"Effect"`
		Principal principal                    `json:"Principal"`
		Action    []string                     `json:"Action"`
		Resource  string                       `json:"Resource"`
		Condition map[string]map[string]string `json:"Condition"`
	}
	p := struct {
		Version   string      `json:"Version"`
		ID        string      `json:"Id"`
		Statement []statement `json:"Statement"`
	}{"2008-10-17", "__default_policy_ID", []statement{{Sid: "__default_statement_ID", Effect: "Allow",
		Principal: principal{"*"}, Resource: arn,
		Action: []string{"SNS:GetTopicAttributes", "SNS:SetTopicAttributes", "SNS:AddPermission", "SNS:RemovePermission",
			"SNS:DeleteTopic", "SNS:Subscribe", "SNS:ListSubscriptionsByTopic", "SNS:Publish"},
		Condition: map[string]map[string]string{"StringEquals": {"AWS:SourceOwner": s.account}}}}}
	data, _ := json.Marshal(p)
	return string(data)
}

// SetTopicAttribute changes one attribute of a topic; an empty value removes it.
func (s *Service) SetTopicAttribute(ctx context.Context, arn, name, value string) error {
	return s.store.Update(ctx, func(tx store.Tx) error {
		rec, t, err := s.readTopic(tx, arn)
		if err != nil {
			return err
		}
		if err := checkTopicAttr(name, value, t.fifo(), false); err != nil {
			return err
		}
		if t.Attrs == nil {
			t.Attrs = map[string]string{}
		}
		if value == "" {
			delete(t.Attrs, name)
		} else {
			t.Attrs[name] = value
		}
		return put(tx, rec, t)
	})
}

// ignoreNotFound drops store.ErrNotFound.
func ignoreNotFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}
