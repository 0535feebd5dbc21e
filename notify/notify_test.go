package notify_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/notify"
	"github.com/hoist-gg/hoist/store/sqlite"
)

var (
	keyOnce sync.Once
	testKey *rsa.PrivateKey
)

// signingKey returns one RSA key for every test of the package.
func signingKey(t *testing.T) *rsa.PrivateKey {
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		testKey = k
	})
	return testKey
}

// recorder is a Sender that keeps what it is sent and answers the statuses it is given
// (200 once they run out).
type recorder struct {
	mu       sync.Mutex
	got      []notify.HTTPMessage
	statuses []int
}

func (r *recorder) Send(_ context.Context, req *notify.Request) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var m notify.HTTPMessage
	if err := json.Unmarshal(req.Body, &m); err != nil {
		return 0, err
	}
	r.got = append(r.got, m)
	if len(r.statuses) == 0 {
		return 200, nil
	}
	s := r.statuses[0]
	r.statuses = r.statuses[1:]
	return s, nil
}

func (r *recorder) messages() []notify.HTTPMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]notify.HTTPMessage(nil), r.got...)
}

type lab struct {
	t    *testing.T
	clk  *clock.Fake
	svc  *notify.Service
	loop *notify.DeliveryLoop
	rec  *recorder
}

func newLab(t *testing.T) *lab {
	st, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	key := &notify.SigningKey{Signer: signingKey(t), CertURL: "http://hoist.test/cert.pem"}
	l := &lab{t: t, clk: clock.NewFake(time.Unix(1_700_000_000, 0)), rec: &recorder{}}
	l.svc = notify.New(notify.Config{Store: st, Clock: l.clk, Region: "us-west-2",
		Links: notify.Links{
			SubscribeURL: func(arn, token string) string {
				return "http://hoist.test/?" + url.Values{"TopicArn": {arn}, "Token": {token}}.Encode()
			},
			UnsubscribeURL: func(arn, token string) string { return "http://hoist.test/?SubscriptionArn=" + arn },
		},
		Key: func(context.Context) (*notify.SigningKey, error) { return key, nil }})
	l.loop = l.svc.DeliveryLoop(l.rec)
	return l
}

func (l *lab) step() {
	l.t.Helper()
	if err := l.loop.Step(context.Background()); err != nil {
		l.t.Fatal(err)
	}
}

// subscribed creates a topic with a confirmed subscription and returns the topic's ARN.
func (l *lab) subscribed(name string, attrs map[string]string) string {
	l.t.Helper()
	ctx := context.Background()
	arn, err := l.svc.CreateTopic(ctx, name, attrs)
	if err != nil {
		l.t.Fatal(err)
	}
	got, err := l.svc.Subscribe(ctx, notify.SubscribeInput{TopicARN: arn, Protocol: "http", Endpoint: "http://127.0.0.1:1/" + name})
	if err != nil || got != notify.PendingConfirmation {
		l.t.Fatalf("Subscribe = %q, %v", got, err)
	}
	l.step()
	msgs := l.rec.messages()
	last := msgs[len(msgs)-1]
	if last.Type != notify.TypeSubscriptionConfirmation || last.Token == "" {
		l.t.Fatalf("no confirmation: %+v", last)
	}
	if _, err := l.svc.ConfirmSubscription(ctx, arn, last.Token, false, false); err != nil {
		l.t.Fatal(err)
	}
	return arn
}

func (l *lab) publish(arn string, msgs ...string) {
	l.t.Helper()
	for _, m := range msgs {
		if _, err := l.svc.Publish(context.Background(), notify.PublishInput{TopicARN: arn, Message: m}); err != nil {
			l.t.Fatal(err)
		}
	}
}

// notifications returns the Message of every Notification sent, in order.
func (l *lab) notifications() []string {
	var out []string
	for _, m := range l.rec.messages() {
		if m.Type == notify.TypeNotification {
			out = append(out, m.Message)
		}
	}
	return out
}

func TestDeliveryRetriesInOrder(t *testing.T) {
	l := newLab(t)
	arn := l.subscribed("orders", nil)
	l.rec.statuses = []int{500, 503}
	l.publish(arn, "one", "two", "three")
	l.step() // "one" fails
	l.step() // not due yet: "two" must wait for "one"
	if got := l.notifications(); len(got) != 1 {
		t.Fatalf("after a failure, sent %q; want only the first attempt", got)
	}
	l.clk.Advance(20 * time.Second)
	l.step() // "one" fails again
	l.clk.Advance(19 * time.Second)
	l.step()
	if got := len(l.notifications()); got != 2 {
		t.Fatalf("a retry came before its 20 s: %d attempts", got)
	}
	l.clk.Advance(time.Second)
	for range 3 {
		l.step()
	}
	want := []string{"one", "one", "one", "two", "three"}
	if got := l.notifications(); !equal(got, want) {
		t.Fatalf("sent %q, want %q", got, want)
	}
}

func TestDeliveryGivesUpAndKeepsTheFailure(t *testing.T) {
	l := newLab(t)
	arn := l.subscribed("down", nil)
	l.rec.statuses = []int{500, 500, 500, 500}
	l.publish(arn, "lost", "next")
	for range 4 {
		l.step()
		l.clk.Advance(20 * time.Second)
	}
	l.step()
	failed, err := l.svc.FailedDeliveries(context.Background(), arn, 0)
	if err != nil || len(failed) != 1 || failed[0].Message != "lost" || failed[0].Attempts != 4 || failed[0].LastError != "HTTP 500" {
		t.Fatalf("failed deliveries = %+v, %v", failed, err)
	}
	if got := l.notifications(); !equal(got, []string{"lost", "lost", "lost", "lost", "next"}) {
		t.Fatalf("sent %q", got)
	}
}

func TestClientErrorIsNotRetried(t *testing.T) {
	l := newLab(t)
	arn := l.subscribed("gone", nil)
	l.rec.statuses = []int{404}
	l.publish(arn, "a", "b")
	l.step()
	l.step()
	if got := l.notifications(); !equal(got, []string{"a", "b"}) {
		t.Fatalf("sent %q", got)
	}
	if failed, _ := l.svc.FailedDeliveries(context.Background(), "", 0); len(failed) != 1 || failed[0].Attempts != 1 {
		t.Fatalf("failed = %+v", failed)
	}
}

func TestTopicDeliveryPolicy(t *testing.T) {
	l := newLab(t)
	policy := `{"http":{"defaultHealthyRetryPolicy":{"numRetries":1,"minDelayTarget":5,"maxDelayTarget":5}}}`
	arn := l.subscribed("quick", map[string]string{"DeliveryPolicy": policy})
	l.rec.statuses = []int{500, 500}
	l.publish(arn, "x")
	l.step()
	l.clk.Advance(5 * time.Second)
	l.step()
	if failed, _ := l.svc.FailedDeliveries(context.Background(), arn, 0); len(failed) != 1 || failed[0].Attempts != 2 {
		t.Fatalf("failed = %+v", failed)
	}
	attrs, err := l.svc.TopicAttributes(context.Background(), arn)
	if err != nil || attrs["DeliveryPolicy"] != policy || attrs["SubscriptionsConfirmed"] != "1" {
		t.Fatalf("attributes = %v, %v", attrs, err)
	}
}

func TestRetryPolicyPhases(t *testing.T) {
	p := notify.RetryPolicy{NumRetries: 6, NumNoDelayRetries: 1, NumMinDelayRetries: 1, NumMaxDelayRetries: 1,
		MinDelayTarget: 2, MaxDelayTarget: 18, BackoffFunction: "linear"}
	want := []time.Duration{0, 2, 2, 10, 18, 18}
	for n, w := range want {
		if got := p.Delay(n + 1); got != w*time.Second {
			t.Errorf("retry %d: delay %v, want %v", n+1, got, w*time.Second)
		}
	}
	for n := 1; n <= 3; n++ {
		if d := notify.DefaultRetryPolicy.Delay(n); d != 20*time.Second {
			t.Errorf("default retry %d: %v", n, d)
		}
	}
}

func TestErrors(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	arn, _ := l.svc.CreateTopic(ctx, "t", nil)
	cases := []struct {
		name string
		err  error
		code string
	}{
		{"unknown topic", second(l.svc.Subscribe(ctx, notify.SubscribeInput{TopicARN: arn + "x", Protocol: "http", Endpoint: "http://a/"})), notify.CodeNotFound},
		{"sqs protocol", second(l.svc.Subscribe(ctx, notify.SubscribeInput{TopicARN: arn, Protocol: "sqs", Endpoint: "arn:aws:sqs:x"})), notify.CodeInvalidParameter},
		{"endpoint mismatch", second(l.svc.Subscribe(ctx, notify.SubscribeInput{TopicARN: arn, Protocol: "https", Endpoint: "http://a/"})), notify.CodeInvalidParameter},
		{"fifo name without FifoTopic", second(l.svc.CreateTopic(ctx, "f.fifo", nil)), notify.CodeInvalidParameter},
		{"other attributes", second(l.svc.CreateTopic(ctx, "t", map[string]string{"DisplayName": "other"})), notify.CodeInvalidParameter},
		{"bad token", second(l.svc.ConfirmSubscription(ctx, arn, "nope", false, false)), notify.CodeInvalidParameter},
		{"publish to nothing", second(l.svc.Publish(ctx, notify.PublishInput{TopicARN: arn + "x", Message: "m"})), notify.CodeNotFound},
	}
	for _, c := range cases {
		var ne *notify.Error
		if !errors.As(c.err, &ne) || ne.Code != c.code {
			t.Errorf("%s: %v, want %s", c.name, c.err, c.code)
		}
	}
	if fifo, err := l.svc.CreateTopic(ctx, "f.fifo", map[string]string{"FifoTopic": "true"}); err != nil || fifo != "arn:aws:sns:us-west-2:000000000000:f.fifo" {
		t.Errorf("FIFO topic: %q, %v", fifo, err)
	}
}

func second[T any](_ T, err error) error { return err }

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
