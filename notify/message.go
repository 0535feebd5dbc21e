package notify

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"time"
)

// Request is one HTTP POST of a message to a subscriber's endpoint.
type Request struct {
	Endpoint string
	Header   map[string]string
	Body     []byte
}

// HTTPMessage is the JSON body SNS posts to HTTP/S subscribers (Amazon SNS Developer Guide,
// "Parsing message formats"). Fields that a message type does not have are left out.
type HTTPMessage struct {
	Type              string               `json:"Type"`
	MessageID         string               `json:"MessageId"`
	Token             string               `json:"Token,omitempty"`
	TopicARN          string               `json:"TopicArn"`
	Subject           string               `json:"Subject,omitempty"`
	Message           string               `json:"Message"`
	SubscribeURL      string               `json:"SubscribeURL,omitempty"`
	Timestamp         string               `json:"Timestamp"`
	SignatureVersion  string               `json:"SignatureVersion"`
	Signature         string               `json:"Signature"`
	SigningCertURL    string               `json:"SigningCertURL"`
	UnsubscribeURL    string               `json:"UnsubscribeURL,omitempty"`
	MessageAttributes map[string]attrValue `json:"MessageAttributes,omitempty"`
}

// StringToSign is the text SNS signs for m: name and value of each signed field, one per
// line, in this order — for a Notification Message, MessageId, Subject (when there is one),
// Timestamp, TopicArn, Type; for a SubscriptionConfirmation Message, MessageId, SubscribeURL,
// Timestamp, Token, TopicArn, Type (Amazon SNS Developer Guide, "Verifying the signatures of
// Amazon SNS messages").
func (m *HTTPMessage) StringToSign() []byte {
	var b bytes.Buffer
	field := func(name, value string) {
		b.WriteString(name + "\n" + value + "\n")
	}
	field("Message", m.Message)
	field("MessageId", m.MessageID)
	if m.Type == TypeNotification {
		if m.Subject != "" {
			field("Subject", m.Subject)
		}
	} else {
		field("SubscribeURL", m.SubscribeURL)
	}
	field("Timestamp", m.Timestamp)
	if m.Type != TypeNotification {
		field("Token", m.Token)
	}
	field("TopicArn", m.TopicARN)
	field("Type", m.Type)
	return b.Bytes()
}

// SignatureHash is the hash of a SignatureVersion: SHA1 for "1", SHA256 for "2".
func SignatureHash(version string) crypto.Hash {
	if version == "2" {
		return crypto.SHA256
	}
	return crypto.SHA1
}

// sign signs m with key (RSA PKCS #1 v1.5 over the hash of its SignatureVersion).
func (m *HTTPMessage) sign(key *SigningKey) error {
	data := m.StringToSign()
	var digest []byte
	if SignatureHash(m.SignatureVersion) == crypto.SHA256 {
		d := sha256.Sum256(data)
		digest = d[:]
	} else {
		d := sha1.Sum(data)
		digest = d[:]
	}
	sig, err := key.Signer.Sign(rand.Reader, digest, SignatureHash(m.SignatureVersion))
	if err != nil {
		return err
	}
	m.Signature, m.SigningCertURL = base64.StdEncoding.EncodeToString(sig), key.CertURL
	return nil
}

// timestamp formats a Unix millisecond time as SNS messages do.
func timestamp(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }

// render makes the signed HTTP request of delivery d, for a topic whose SignatureVersion is
// sigVersion, with the Content-Type ctype.
func (s *Service) render(ctx context.Context, d *deliveryDoc, sigVersion, ctype string) (*Request, error) {
	topicARN, subARN := s.topicARN(d.Topic), s.subARN(d.Topic, d.Sub)
	m := &HTTPMessage{Type: d.Type, MessageID: d.MessageID, TopicARN: topicARN, Subject: d.Subject, Message: d.Message,
		Timestamp: timestamp(d.Time), SignatureVersion: sigVersion, MessageAttributes: d.Attributes}
	if d.Type == TypeSubscriptionConfirmation {
		m.Token, m.SubscribeURL = d.Token, s.links.SubscribeURL(topicARN, d.Token)
	} else {
		m.UnsubscribeURL = s.links.UnsubscribeURL(subARN, d.UnsubToken)
	}
	key, err := s.key(ctx)
	if err != nil {
		return nil, err
	}
	if err := m.sign(key); err != nil {
		return nil, err
	}
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	h := map[string]string{"x-amz-sns-message-type": d.Type, "x-amz-sns-message-id": d.MessageID,
		"x-amz-sns-topic-arn": topicARN, "Content-Type": ctype, "User-Agent": "Amazon Simple Notification Service Agent"}
	if d.Type == TypeNotification {
		h["x-amz-sns-subscription-arn"] = subARN
	}
	return &Request{Endpoint: d.Endpoint, Header: h, Body: body.Bytes()}, nil
}
