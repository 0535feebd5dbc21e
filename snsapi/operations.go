package snsapi

import (
	"context"
	"sort"

	"github.com/hoist-gg/hoist/notify"
)

// Result elements of the actions, as the SNS model names their members.

type topicARNResult struct {
	TopicArn string `xml:"TopicArn"`
}

type topicMember struct {
	TopicArn string `xml:"TopicArn"`
}

type listTopicsResult struct {
	Topics    []topicMember `xml:"Topics>member"`
	NextToken string        `xml:"NextToken,omitempty"`
}

type entry struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

type attributesResult struct {
	Attributes []entry `xml:"Attributes>entry"`
}

type subscriptionARNResult struct {
	SubscriptionArn string `xml:"SubscriptionArn"`
}

type subscriptionMember struct {
	SubscriptionArn string `xml:"SubscriptionArn"`
	Owner           string `xml:"Owner"`
	Protocol        string `xml:"Protocol"`
	Endpoint        string `xml:"Endpoint"`
	TopicArn        string `xml:"TopicArn"`
}

type listSubscriptionsResult struct {
	Subscriptions []subscriptionMember `xml:"Subscriptions>member"`
	NextToken     string               `xml:"NextToken,omitempty"`
}

type publishResult struct {
	MessageId string `xml:"MessageId"`
}

// entries turns an attribute map into its XML entries, sorted by name.
func entries(m map[string]string) attributesResult {
	out := attributesResult{Attributes: make([]entry, 0, len(m))}
	for k, v := range m {
		out.Attributes = append(out.Attributes, entry{k, v})
	}
	sort.Slice(out.Attributes, func(i, j int) bool { return out.Attributes[i].Key < out.Attributes[j].Key })
	return out
}

func (h *Handler) createTopic(ctx context.Context, f form) (any, error) {
	name, err := f.required("Name")
	if err != nil {
		return nil, err
	}
	arn, err := h.svc.CreateTopic(ctx, name, f.stringMap("Attributes"))
	return topicARNResult{arn}, err
}

func (h *Handler) deleteTopic(ctx context.Context, f form) (any, error) {
	arn, err := f.required("TopicArn")
	if err != nil {
		return nil, err
	}
	return nil, h.svc.DeleteTopic(ctx, arn)
}

func (h *Handler) listTopics(ctx context.Context, f form) (any, error) {
	arns, next, err := h.svc.ListTopics(ctx, f.get("NextToken"))
	out := listTopicsResult{NextToken: next}
	for _, a := range arns {
		out.Topics = append(out.Topics, topicMember{a})
	}
	return out, err
}

func (h *Handler) getTopicAttributes(ctx context.Context, f form) (any, error) {
	arn, err := f.required("TopicArn")
	if err != nil {
		return nil, err
	}
	attrs, err := h.svc.TopicAttributes(ctx, arn)
	return entries(attrs), err
}

func (h *Handler) setTopicAttributes(ctx context.Context, f form) (any, error) {
	arn, err := f.required("TopicArn")
	if err != nil {
		return nil, err
	}
	name, err := f.required("AttributeName")
	if err != nil {
		return nil, err
	}
	return nil, h.svc.SetTopicAttribute(ctx, arn, name, f.get("AttributeValue"))
}

func (h *Handler) subscribe(ctx context.Context, f form) (any, error) {
	arn, err := f.required("TopicArn")
	if err != nil {
		return nil, err
	}
	protocol, err := f.required("Protocol")
	if err != nil {
		return nil, err
	}
	sub, err := h.svc.Subscribe(ctx, notify.SubscribeInput{TopicARN: arn, Protocol: protocol, Endpoint: f.get("Endpoint"),
		Attributes: f.stringMap("Attributes"), ReturnSubscriptionARN: f.flag("ReturnSubscriptionArn")})
	return subscriptionARNResult{sub}, err
}

func (h *Handler) confirmSubscription(ctx context.Context, f form) (any, error) {
	arn, err := f.required("TopicArn")
	if err != nil {
		return nil, err
	}
	token, err := f.required("Token")
	if err != nil {
		return nil, err
	}
	sub, err := h.svc.ConfirmSubscription(ctx, arn, token, f.flag("AuthenticateOnUnsubscribe"), true)
	return subscriptionARNResult{sub}, err
}

func (h *Handler) unsubscribe(ctx context.Context, f form) (any, error) {
	arn, err := f.required("SubscriptionArn")
	if err != nil {
		return nil, err
	}
	return nil, h.svc.Unsubscribe(ctx, arn, "", true)
}

func (h *Handler) listSubscriptions(ctx context.Context, f form) (any, error) {
	return h.subscriptions(ctx, "", f.get("NextToken"))
}

func (h *Handler) listSubscriptionsByTopic(ctx context.Context, f form) (any, error) {
	arn, err := f.required("TopicArn")
	if err != nil {
		return nil, err
	}
	return h.subscriptions(ctx, arn, f.get("NextToken"))
}

// subscriptions is the result of the List actions.
func (h *Handler) subscriptions(ctx context.Context, topicARN, token string) (any, error) {
	subs, next, err := h.svc.ListSubscriptions(ctx, topicARN, token)
	out := listSubscriptionsResult{NextToken: next}
	for _, s := range subs {
		out.Subscriptions = append(out.Subscriptions, subscriptionMember{s.ARN, s.Owner, s.Protocol, s.Endpoint, s.TopicARN})
	}
	return out, err
}

func (h *Handler) getSubscriptionAttributes(ctx context.Context, f form) (any, error) {
	arn, err := f.required("SubscriptionArn")
	if err != nil {
		return nil, err
	}
	attrs, err := h.svc.SubscriptionAttributes(ctx, arn)
	return entries(attrs), err
}

func (h *Handler) publish(ctx context.Context, f form) (any, error) {
	in := notify.PublishInput{TopicARN: f.get("TopicArn"), Subject: f.get("Subject"), Message: f.get("Message"),
		MessageStructure: f.get("MessageStructure"), MessageGroupID: f.get("MessageGroupId"),
		MessageDeduplicationID: f.get("MessageDeduplicationId")}
	switch {
	case in.TopicARN == "" && f.get("TargetArn") != "":
		in.TopicARN = f.get("TargetArn")
	case in.TopicARN == "":
		return nil, &notify.Error{Code: notify.CodeInvalidParameter,
			Message: "Invalid parameter: TopicArn (Hoist publishes to topics only, not to phone numbers or platform endpoints)"}
	}
	if _, err := f.required("Message"); err != nil {
		return nil, err
	}
	attrs, err := f.messageAttributes()
	if err != nil {
		return nil, err
	}
	in.Attributes = attrs
	id, err := h.svc.Publish(ctx, in)
	return publishResult{id}, err
}
