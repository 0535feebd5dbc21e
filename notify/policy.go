package notify

import (
	"encoding/json"
	"math"
	"time"
)

// RetryPolicy is SNS's "healthy retry policy" for HTTP/S deliveries: after a failed first
// attempt, NumRetries retries in four phases — NumNoDelayRetries at once, NumMinDelayRetries
// MinDelayTarget seconds apart, a backoff phase whose delays grow from MinDelayTarget to
// MaxDelayTarget along BackoffFunction, and NumMaxDelayRetries MaxDelayTarget apart.
// (Amazon SNS Developer Guide, "Amazon SNS message delivery retries".)
type RetryPolicy struct {
	MinDelayTarget     int    `json:"minDelayTarget"`
	MaxDelayTarget     int    `json:"maxDelayTarget"`
	NumRetries         int    `json:"numRetries"`
	NumMaxDelayRetries int    `json:"numMaxDelayRetries"`
	NumNoDelayRetries  int    `json:"numNoDelayRetries"`
	NumMinDelayRetries int    `json:"numMinDelayRetries"`
	BackoffFunction    string `json:"backoffFunction"`
}

// DefaultRetryPolicy is SNS's default for HTTP/S: three retries, 20 seconds apart.
var DefaultRetryPolicy = RetryPolicy{MinDelayTarget: 20, MaxDelayTarget: 20, NumRetries: 3, BackoffFunction: "linear"}

// defaultContentType is the Content-Type of HTTP/S notifications unless a request policy
// says otherwise.
const defaultContentType = "text/plain; charset=UTF-8"

// maxPolicySeconds is SNS's limit on the total retry time of an HTTP/S policy.
const maxPolicySeconds = 3600

// requestPolicy is the request part of a delivery policy.
type requestPolicy struct {
	HeaderContentType string `json:"headerContentType,omitempty"`
}

// topicHTTPPolicy is the "http" part of a topic's DeliveryPolicy.
type topicHTTPPolicy struct {
	DefaultHealthyRetryPolicy    *RetryPolicy    `json:"defaultHealthyRetryPolicy,omitempty"`
	DisableSubscriptionOverrides bool            `json:"disableSubscriptionOverrides"`
	DefaultThrottlePolicy        json.RawMessage `json:"defaultThrottlePolicy,omitempty"`
	DefaultRequestPolicy         *requestPolicy  `json:"defaultRequestPolicy,omitempty"`
}

// topicPolicy is a topic's DeliveryPolicy attribute.
type topicPolicy struct {
	HTTP topicHTTPPolicy `json:"http"`
}

// subPolicy is a subscription's DeliveryPolicy attribute.
type subPolicy struct {
	HealthyRetryPolicy *RetryPolicy    `json:"healthyRetryPolicy,omitempty"`
	ThrottlePolicy     json.RawMessage `json:"throttlePolicy,omitempty"`
	RequestPolicy      *requestPolicy  `json:"requestPolicy,omitempty"`
}

// parseTopicPolicy reads and checks a topic's DeliveryPolicy ("" is the default).
func parseTopicPolicy(raw string) (*topicPolicy, error) {
	p := &topicPolicy{}
	if raw == "" {
		return p, nil
	}
	if err := json.Unmarshal([]byte(raw), p); err != nil {
		return nil, invalid("DeliveryPolicy: " + err.Error())
	}
	if r := p.HTTP.DefaultHealthyRetryPolicy; r != nil {
		r.fillDefaults()
		if err := r.check(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// parseSubPolicy reads and checks a subscription's DeliveryPolicy ("" is none).
func parseSubPolicy(raw string) (*subPolicy, error) {
	p := &subPolicy{}
	if raw == "" {
		return p, nil
	}
	if err := json.Unmarshal([]byte(raw), p); err != nil {
		return nil, invalid("DeliveryPolicy: " + err.Error())
	}
	if r := p.HealthyRetryPolicy; r != nil {
		r.fillDefaults()
		if err := r.check(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// fillDefaults completes a policy given in part.
func (p *RetryPolicy) fillDefaults() {
	if p.MinDelayTarget == 0 {
		p.MinDelayTarget = DefaultRetryPolicy.MinDelayTarget
	}
	if p.MaxDelayTarget == 0 {
		p.MaxDelayTarget = max(DefaultRetryPolicy.MaxDelayTarget, p.MinDelayTarget)
	}
	if p.BackoffFunction == "" {
		p.BackoffFunction = DefaultRetryPolicy.BackoffFunction
	}
}

// check enforces SNS's limits on an HTTP/S retry policy.
func (p *RetryPolicy) check() error {
	phases := p.NumNoDelayRetries + p.NumMinDelayRetries + p.NumMaxDelayRetries
	switch {
	case p.MinDelayTarget < 1 || p.MinDelayTarget > p.MaxDelayTarget || p.MaxDelayTarget > maxPolicySeconds:
		return invalid("DeliveryPolicy: minDelayTarget must be at least 1 and at most maxDelayTarget, maxDelayTarget at most 3600")
	case p.NumRetries < 0 || p.NumRetries > 100 || p.NumNoDelayRetries < 0 || p.NumMinDelayRetries < 0 ||
		p.NumMaxDelayRetries < 0 || phases > p.NumRetries:
		return invalid("DeliveryPolicy: numRetries must be 0 to 100 and at least the sum of the other retry counts")
	}
	switch p.BackoffFunction {
	case "linear", "arithmetic", "geometric", "exponential":
	default:
		return invalid("DeliveryPolicy: backoffFunction must be arithmetic, exponential, geometric or linear")
	}
	if p.total() > maxPolicySeconds*time.Second {
		return invalid("DeliveryPolicy: the total retry time must not exceed 3600 seconds")
	}
	return nil
}

// total is the time all the retries take.
func (p *RetryPolicy) total() time.Duration {
	var d time.Duration
	for n := 1; n <= p.NumRetries; n++ {
		d += p.Delay(n)
	}
	return d
}

// Delay is the wait before retry n (1 for the first retry).
func (p *RetryPolicy) Delay(n int) time.Duration {
	minD, maxD := float64(p.MinDelayTarget), float64(p.MaxDelayTarget)
	steps := p.NumRetries - p.NumNoDelayRetries - p.NumMinDelayRetries - p.NumMaxDelayRetries
	switch i := n - p.NumNoDelayRetries - p.NumMinDelayRetries; {
	case n <= p.NumNoDelayRetries:
		return 0
	case i <= 0:
		return seconds(minD)
	case i > steps:
		return seconds(maxD)
	case steps == 1:
		return seconds(minD)
	default:
		f := float64(i-1) / float64(steps-1)
		if p.BackoffFunction == "geometric" || p.BackoffFunction == "exponential" {
			return seconds(minD * math.Pow(maxD/minD, f))
		}
		return seconds(minD + (maxD-minD)*f)
	}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// effective is the policy a delivery follows: the subscription's own when it has one and the
// topic allows overrides, else the topic's default, else SNS's; and the Content-Type.
func effective(topicRaw, subRaw string) (RetryPolicy, string) {
	retry, ctype := DefaultRetryPolicy, defaultContentType
	tp, err := parseTopicPolicy(topicRaw)
	if err != nil {
		return retry, ctype
	}
	if r := tp.HTTP.DefaultHealthyRetryPolicy; r != nil {
		retry = *r
	}
	if rp := tp.HTTP.DefaultRequestPolicy; rp != nil && rp.HeaderContentType != "" {
		ctype = rp.HeaderContentType
	}
	sp, err := parseSubPolicy(subRaw)
	if err != nil || tp.HTTP.DisableSubscriptionOverrides {
		return retry, ctype
	}
	if sp.HealthyRetryPolicy != nil {
		retry = *sp.HealthyRetryPolicy
	}
	if sp.RequestPolicy != nil && sp.RequestPolicy.HeaderContentType != "" {
		ctype = sp.RequestPolicy.HeaderContentType
	}
	return retry, ctype
}

// effectiveTopicPolicy is a topic's EffectiveDeliveryPolicy attribute.
func effectiveTopicPolicy(raw string) string {
	retry, ctype := effective(raw, "")
	tp, err := parseTopicPolicy(raw)
	if err != nil {
		tp = &topicPolicy{}
	}
	tp.HTTP.DefaultHealthyRetryPolicy, tp.HTTP.DefaultRequestPolicy = &retry, &requestPolicy{HeaderContentType: ctype}
	data, _ := json.Marshal(tp)
	return string(data)
}

// effectiveSubPolicy is a subscription's EffectiveDeliveryPolicy attribute.
func effectiveSubPolicy(topicRaw, subRaw string) string {
	retry, ctype := effective(topicRaw, subRaw)
	data, _ := json.Marshal(subPolicy{HealthyRetryPolicy: &retry, RequestPolicy: &requestPolicy{HeaderContentType: ctype}})
	return string(data)
}
