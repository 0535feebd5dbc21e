package server_test

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/internal/pgtest"
	"github.com/hoist-gg/hoist/server"
)

// snsMessage is the JSON body SNS posts to HTTP/S subscribers, as a subscriber reads it.
type snsMessage struct {
	Type, MessageId, Token, TopicArn, Subject, Message, SubscribeURL, Timestamp string
	SignatureVersion, Signature, SigningCertURL, UnsubscribeURL                 string
	MessageAttributes                                                           map[string]struct{ Type, Value string }
	header                                                                      http.Header
}

// subscriber is a real HTTP endpoint on 127.0.0.1 that records what SNS posts to it and
// answers 500 while it is told to be down.
type subscriber struct {
	t    *testing.T
	srv  *httptest.Server
	got  chan snsMessage
	mu   sync.Mutex
	down int // requests still to refuse
}

func newSubscriber(t *testing.T) *subscriber {
	s := &subscriber{t: t, got: make(chan snsMessage, 64)}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m snsMessage
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &m); err != nil {
			t.Errorf("subscriber: body is not JSON: %q", body)
		}
		m.header = r.Header
		s.mu.Lock()
		refuse := s.down > 0
		if refuse {
			s.down--
		}
		s.mu.Unlock()
		if refuse {
			w.WriteHeader(http.StatusInternalServerError)
			m.Type = "refused:" + m.Type
		}
		s.got <- m
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *subscriber) refuse(n int) {
	s.mu.Lock()
	s.down = n
	s.mu.Unlock()
}

// next waits for the next message posted (the leader's delivery loop is woken by the store).
func (s *subscriber) next() snsMessage {
	s.t.Helper()
	select {
	case m := <-s.got:
		return m
	case <-time.After(10 * time.Second):
		s.t.Fatal("no message reached the subscriber")
	}
	return snsMessage{}
}

// verifySNSSignature checks m's signature as AWS documents it: the string to sign is the
// name and value of the signed fields, one per line, in alphabetical order; SignatureVersion
// 1 is SHA1withRSA, 2 SHA256withRSA; the key is the certificate's at SigningCertURL.
func verifySNSSignature(t *testing.T, m snsMessage) {
	t.Helper()
	fields := []string{"Message", m.Message, "MessageId", m.MessageId}
	if m.Type == "Notification" {
		if m.Subject != "" {
			fields = append(fields, "Subject", m.Subject)
		}
		fields = append(fields, "Timestamp", m.Timestamp, "TopicArn", m.TopicArn, "Type", m.Type)
	} else {
		fields = append(fields, "SubscribeURL", m.SubscribeURL, "Timestamp", m.Timestamp, "Token", m.Token,
			"TopicArn", m.TopicArn, "Type", m.Type)
	}
	text := strings.Join(fields, "\n") + "\n"
	resp, err := http.Get(m.SigningCertURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("SigningCertURL %s: not a PEM certificate: %q", m.SigningCertURL, data)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := base64.StdEncoding.DecodeString(m.Signature)
	if err != nil {
		t.Fatal(err)
	}
	hash, digest := crypto.SHA1, sha1.Sum([]byte(text))
	sum := digest[:]
	if m.SignatureVersion == "2" {
		d := sha256.Sum256([]byte(text))
		hash, sum = crypto.SHA256, d[:]
	}
	if err := rsa.VerifyPKCS1v15(cert.PublicKey.(*rsa.PublicKey), hash, sum, sig); err != nil {
		t.Fatalf("signature of %s %s (version %s) does not verify: %v", m.Type, m.MessageId, m.SignatureVersion, err)
	}
}

// snsClient is the real aws-sdk-go-v2 SNS client (awsQuery) pointed at url.
func snsClient(url string) *sns.Client {
	return sns.New(sns.Options{Region: "us-west-2", BaseEndpoint: aws.String(url), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider(testKeyID, testSecret, "")})
}

// snsLab is a server on a fake clock, its SNS client, a topic and a confirmed subscriber.
type snsLab struct {
	t      *testing.T
	clk    *clock.Fake
	srv    *server.Server
	sns    *sns.Client
	gl     *gamelift.Client
	sub    *subscriber
	topic  string
	subARN string
}

func newSNSLab(t *testing.T) *snsLab { return newSNSLabWith(t, server.Config{}) }

// newSNSLabWith is newSNSLab with a server configuration (its clock is set here).
func newSNSLabWith(t *testing.T, cfg server.Config) *snsLab {
	l := &snsLab{t: t, clk: clock.NewFake(time.Now())}
	cfg.Clock = l.clk
	l.srv = startServer(t, cfg)
	l.sns, l.gl, l.sub = snsClient(l.srv.URL()), client(l.srv.URL(), testKeyID, testSecret), newSubscriber(t)
	ctx := context.Background()
	out, err := l.sns.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("game-events"), Attributes: map[string]string{"DisplayName": "Game events"}})
	if err != nil {
		t.Fatal(err)
	}
	l.topic = *out.TopicArn
	sub, err := l.sns.Subscribe(ctx, &sns.SubscribeInput{TopicArn: out.TopicArn, Protocol: aws.String("http"), Endpoint: aws.String(l.sub.srv.URL + "/events")})
	if err != nil || *sub.SubscriptionArn != "pending confirmation" {
		t.Fatalf("Subscribe = %v, %v", sub, err)
	}
	l.confirm()
	return l
}

// confirm takes the SubscriptionConfirmation and GETs its SubscribeURL, as a subscriber does.
func (l *snsLab) confirm() {
	m := l.sub.next()
	if m.Type != "SubscriptionConfirmation" || m.header.Get("x-amz-sns-message-type") != "SubscriptionConfirmation" {
		l.t.Fatalf("first message: %+v", m)
	}
	verifySNSSignature(l.t, m)
	resp, err := http.Get(m.SubscribeURL)
	if err != nil {
		l.t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "<ConfirmSubscriptionResult><SubscriptionArn>"+l.topic+":") {
		l.t.Fatalf("SubscribeURL: %d %s", resp.StatusCode, body)
	}
	list, err := l.sns.ListSubscriptionsByTopic(context.Background(), &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(l.topic)})
	if err != nil || len(list.Subscriptions) != 1 || !strings.HasPrefix(*list.Subscriptions[0].SubscriptionArn, l.topic+":") {
		l.t.Fatalf("ListSubscriptionsByTopic = %+v, %v", list, err)
	}
	l.subARN = *list.Subscriptions[0].SubscriptionArn
}

// event takes the next Notification and returns its EventBridge event.
func (l *snsLab) event() (snsMessage, map[string]any) {
	l.t.Helper()
	m := l.sub.next()
	if m.Type != "Notification" || m.header.Get("x-amz-sns-subscription-arn") != l.subARN || m.TopicArn != l.topic {
		l.t.Fatalf("not a notification of the subscription: %+v", m)
	}
	verifySNSSignature(l.t, m)
	var ev map[string]any
	if err := json.Unmarshal([]byte(m.Message), &ev); err != nil {
		l.t.Fatalf("Message is not an event: %q", m.Message)
	}
	return m, ev
}

func detailType(ev map[string]any) string {
	d, _ := ev["detail"].(map[string]any)
	t, _ := d["type"].(string)
	return t
}

func TestNotificationsDeliverGameLiftEvents(t *testing.T) {
	l := newSNSLab(t)
	ctx := context.Background()

	// A placement event: a queue whose NotificationTarget is the topic, a placement stopped.
	_, err := l.gl.CreateGameSessionQueue(ctx, &gamelift.CreateGameSessionQueueInput{Name: aws.String("notified"),
		NotificationTarget: aws.String(l.topic), TimeoutInSeconds: aws.Int32(600)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.gl.StartGameSessionPlacement(ctx, &gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("p1"),
		GameSessionQueueName: aws.String("notified"), MaximumPlayerSessionCount: aws.Int32(2)})
	if err != nil {
		t.Fatal(err)
	}
	l.gl.StopGameSessionPlacement(ctx, &gamelift.StopGameSessionPlacementInput{PlacementId: aws.String("p1")})
	_, ev := l.event()
	if ev["detail-type"] != "GameLift Queue Placement Event" {
		t.Fatalf("placement event: %v", ev)
	}

	// FlexMatch events, sent while the subscriber is down: they arrive, in order, after the
	// retries (20 s apart on the fake clock).
	l.sub.refuse(1)
	l.standaloneMatch()
	if m := l.sub.next(); m.Type != "refused:Notification" {
		t.Fatalf("expected a refused attempt, got %+v", m)
	}
	l.clk.Advance(20 * time.Second) // the leader's delivery loop ticks on the fake clock
	var types []string
	for len(types) == 0 || types[len(types)-1] != "MatchmakingSucceeded" {
		_, ev := l.event()
		if ev["detail-type"] != "GameLift Matchmaking Event" {
			t.Fatalf("matchmaking event: %v", ev)
		}
		types = append(types, detailType(ev))
	}
	want := "MatchmakingSearching MatchmakingSearching PotentialMatchCreated MatchmakingSucceeded"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("matchmaking events %q, want %q", got, want)
	}
}

// standaloneMatch makes a STANDALONE configuration notifying the topic and matches two
// tickets.
func (l *snsLab) standaloneMatch() {
	ctx := context.Background()
	_, err := l.gl.CreateMatchmakingRuleSet(ctx, &gamelift.CreateMatchmakingRuleSetInput{Name: aws.String("duo"), RuleSetBody: aws.String(teamRules)})
	if err != nil {
		l.t.Fatal(err)
	}
	_, err = l.gl.CreateMatchmakingConfiguration(ctx, &gamelift.CreateMatchmakingConfigurationInput{Name: aws.String("duo"),
		RuleSetName: aws.String("duo"), RequestTimeoutSeconds: aws.Int32(600), AcceptanceRequired: aws.Bool(false),
		FlexMatchMode: types.FlexMatchModeStandalone, NotificationTarget: aws.String(l.topic)})
	if err != nil {
		l.t.Fatal(err)
	}
	for _, ticket := range []string{"t1", "t2"} {
		_, err := l.gl.StartMatchmaking(ctx, &gamelift.StartMatchmakingInput{TicketId: aws.String(ticket), ConfigurationName: aws.String("duo"),
			Players: []types.Player{{PlayerId: aws.String("player-" + ticket), LatencyInMs: map[string]int32{"us-west-2": 20}}}})
		if err != nil {
			l.t.Fatal(err)
		}
	}
}

func TestSNSPublishSignaturesAndTeardown(t *testing.T) {
	l := newSNSLab(t)
	ctx := context.Background()
	_, err := l.sns.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(l.topic), Subject: aws.String("Hello"), Message: aws.String("first <&> message"),
		MessageAttributes: map[string]snstypes.MessageAttributeValue{"kind": {DataType: aws.String("String"), StringValue: aws.String("greeting")}}})
	if err != nil {
		t.Fatal(err)
	}
	m := l.sub.next()
	verifySNSSignature(t, m)
	if m.Subject != "Hello" || m.Message != "first <&> message" || m.MessageAttributes["kind"].Value != "greeting" || m.SignatureVersion != "1" {
		t.Fatalf("published message: %+v", m)
	}

	// SignatureVersion 2 signs with SHA256.
	if _, err := l.sns.SetTopicAttributes(ctx, &sns.SetTopicAttributesInput{TopicArn: aws.String(l.topic),
		AttributeName: aws.String("SignatureVersion"), AttributeValue: aws.String("2")}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.sns.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(l.topic), Message: aws.String("second")}); err != nil {
		t.Fatal(err)
	}
	if m := l.sub.next(); m.SignatureVersion != "2" || m.Message != "second" {
		t.Fatalf("second message: %+v", m)
	} else {
		verifySNSSignature(t, m)
	}

	attrs, err := l.sns.GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String(l.topic)})
	if err != nil || attrs.Attributes["SubscriptionsConfirmed"] != "1" || attrs.Attributes["DisplayName"] != "Game events" ||
		!strings.Contains(attrs.Attributes["EffectiveDeliveryPolicy"], `"numRetries":3`) {
		t.Fatalf("GetTopicAttributes = %v, %v", attrs, err)
	}

	// The UnsubscribeURL of a message unsubscribes without a signature.
	resp, err := http.Get(m.UnsubscribeURL)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("UnsubscribeURL: %v %v", resp, err)
	}
	resp.Body.Close()
	subs, err := l.sns.ListSubscriptions(ctx, &sns.ListSubscriptionsInput{})
	if err != nil || len(subs.Subscriptions) != 0 {
		t.Fatalf("ListSubscriptions after unsubscribing = %+v, %v", subs, err)
	}
	if _, err := l.sns.DeleteTopic(ctx, &sns.DeleteTopicInput{TopicArn: aws.String(l.topic)}); err != nil {
		t.Fatal(err)
	}
	topics, err := l.sns.ListTopics(ctx, &sns.ListTopicsInput{})
	if err != nil || len(topics.Topics) != 0 {
		t.Fatalf("ListTopics after DeleteTopic = %+v, %v", topics, err)
	}
}

func TestSNSErrors(t *testing.T) {
	srv := startServer(t, server.Config{})
	c := snsClient(srv.URL())
	ctx := context.Background()
	_, err := c.GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String("arn:aws:sns:us-west-2:000000000000:nope")})
	if apiCode(err) != "NotFound" {
		t.Errorf("unknown topic: %v", err)
	}
	topic, err := c.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("t")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: aws.String("arn:aws:sqs:us-west-2:000000000000:q")})
	if apiCode(err) != "InvalidParameter" || !strings.Contains(err.Error(), "http and https") {
		t.Errorf("sqs protocol: %v", err)
	}
	_, err = c.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(*topic.TopicArn + "-missing"), Message: aws.String("m")})
	if apiCode(err) != "NotFound" {
		t.Errorf("publish to an unknown topic: %v", err)
	}
	bad := sns.New(sns.Options{Region: "us-west-2", BaseEndpoint: aws.String(srv.URL()), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider(testKeyID, "wrong-secret", "")})
	if _, err := bad.ListTopics(ctx, &sns.ListTopicsInput{}); apiCode(err) != "SignatureDoesNotMatch" {
		t.Errorf("wrong secret: %v", err)
	}
	resp, err := http.Get(srv.URL() + "/hoist/notifications/failed")
	if err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("unsigned failed-deliveries read: %v %v", resp, err)
	}
	// A queue accepts the ARN CreateTopic returns as its NotificationTarget.
	if _, err := client(srv.URL(), testKeyID, testSecret).CreateGameSessionQueue(ctx, &gamelift.CreateGameSessionQueueInput{
		Name: aws.String("q"), NotificationTarget: topic.TopicArn}); err != nil {
		t.Errorf("queue with the topic as NotificationTarget: %v", err)
	}
}

// TestSNSOnTwoPostgresNodes checks that topics, subscriptions and the signing key are the
// cluster's: set up through one node, confirmed and published through the other, delivered
// by the leader, verified with either node's certificate.
func TestSNSOnTwoPostgresNodes(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := startServer(t, server.Config{Store: dsn}), startServer(t, server.Config{Store: dsn})
	ctx := context.Background()
	sub := newSubscriber(t)
	topic, err := snsClient(a.URL()).CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("cluster")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snsClient(b.URL()).Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("http"),
		Endpoint: aws.String(sub.srv.URL)}); err != nil {
		t.Fatal(err)
	}
	m := sub.next()
	verifySNSSignature(t, m)
	if resp, err := http.Get(m.SubscribeURL); err != nil || resp.StatusCode != 200 {
		t.Fatalf("SubscribeURL: %v %v", resp, err)
	}
	if _, err := snsClient(b.URL()).Publish(ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String("across nodes")}); err != nil {
		t.Fatal(err)
	}
	m = sub.next()
	if m.Message != "across nodes" {
		t.Fatalf("got %+v", m)
	}
	verifySNSSignature(t, m)
	for _, node := range []*server.Server{a, b} {
		m.SigningCertURL = node.URL() + m.SigningCertURL[strings.LastIndex(m.SigningCertURL, "/"):]
		verifySNSSignature(t, m)
	}
}

// TestEventsTopicTakesEveryEvent: with --events-topic, fleet events (which have no
// NotificationTarget) reach the topic's subscribers, and events whose own target is that
// topic arrive once.
func TestEventsTopicTakesEveryEvent(t *testing.T) {
	l := newSNSLabWith(t, server.Config{EventsTopic: "arn:aws:sns:us-west-2:000000000000:game-events"})
	if l.topic != "arn:aws:sns:us-west-2:000000000000:game-events" {
		t.Fatalf("topic %s", l.topic)
	}
	fleet := createAnywhereFleet(t, l.gl, "custom-events")
	var codes []string
	for len(codes) == 0 || codes[len(codes)-1] != "FLEET_STATE_ACTIVE" {
		_, ev := l.event()
		d, _ := ev["detail"].(map[string]any)
		if ev["detail-type"] != "GameLift Fleet Event" || d["resourceId"] != fleet {
			t.Fatalf("fleet event: %v", ev)
		}
		codes = append(codes, d["eventCode"].(string))
	}
	if got := strings.Join(codes, " "); got != "FLEET_CREATED FLEET_STATE_ACTIVE" {
		t.Errorf("fleet events %s", got)
	}
	l.standaloneMatch() // its configuration notifies the same topic
	var types []string
	for len(types) == 0 || types[len(types)-1] != "MatchmakingSucceeded" {
		_, ev := l.event()
		types = append(types, detailType(ev))
	}
	want := "MatchmakingSearching MatchmakingSearching PotentialMatchCreated MatchmakingSucceeded"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("matchmaking events %q, want %q (each once)", got, want)
	}
}
