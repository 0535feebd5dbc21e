package snsapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"time"

	"github.com/hoist-gg/hoist/notify"
)

// SendTimeout is how long an endpoint has to answer a message, as in SNS (15 seconds).
const SendTimeout = 15 * time.Second

// Sender posts messages to HTTP/S endpoints (notify.Sender). Redirects are not followed.
type Sender struct {
	Client *http.Client
}

// NewSender returns a Sender with its own client.
func NewSender() *Sender {
	return &Sender{Client: &http.Client{Timeout: SendTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Send posts r and returns the status of the answer.
func (s *Sender) Send(ctx context.Context, r *notify.Request) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.Endpoint, bytes.NewReader(r.Body))
	if err != nil {
		return 0, err
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode, nil
}
