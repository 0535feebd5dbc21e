package serversdk

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"
)

// InitSDK resolves the parameters (§1.1: each GAMELIFT_* environment variable that is set and
// non-empty overrides its parameter), validates them (§1.2) and opens the websocket (§1.3),
// trying ConnectAttempts times with a doubling backoff. A 403 from the service is final.
// Nothing is sent on connect (§6.1).
func (s *SDK) InitSDK(ctx context.Context, params ServerParameters) error {
	p := s.resolve(params)
	if err := validateParams(p); err != nil {
		return err
	}
	u, err := buildURL(p, s.opt.Clock.Now())
	if err != nil {
		return err
	}
	l := newLink(s, u)
	ws, err := s.connect(ctx, l)
	if err != nil {
		return err
	}
	s.mu.Lock()
	old := s.link
	s.params, s.link = p, l
	s.mu.Unlock()
	if old != nil {
		old.close()
	}
	l.install(ws)
	return nil
}

// connect dials the link's URL with retries.
func (s *SDK) connect(ctx context.Context, l *link) (ws *websocket.Conn, err error) {
	wait := s.opt.ConnectBackoff
	for attempt := 1; ; attempt++ {
		ws, err = l.dial(ctx, l.url)
		var e *Error
		if err == nil || errors.As(err, &e) || attempt >= s.opt.ConnectAttempts {
			return ws, err
		}
		s.log.Warn("serversdk: connect failed", "attempt", attempt, "err", err, "retry_in", wait)
		select {
		case <-s.opt.Clock.After(wait):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		wait = min(2*wait, s.opt.MaxConnectBackoff)
	}
}

// resolve applies the environment over params (§1.1; like the Go SDK, an empty variable does
// not override).
func (s *SDK) resolve(p ServerParameters) ServerParameters {
	env := func(dst *string, name string) {
		if v := s.opt.Getenv(name); v != "" {
			*dst = v
		}
	}
	env(&p.WebSocketURL, "GAMELIFT_SDK_WEBSOCKET_URL")
	env(&p.ProcessID, "GAMELIFT_SDK_PROCESS_ID")
	env(&p.HostID, "GAMELIFT_SDK_HOST_ID")
	env(&p.FleetID, "GAMELIFT_SDK_FLEET_ID")
	env(&p.AuthToken, "GAMELIFT_SDK_AUTH_TOKEN")
	env(&p.AwsRegion, "GAMELIFT_REGION")
	env(&p.AccessKey, "GAMELIFT_ACCESS_KEY")
	env(&p.SecretKey, "GAMELIFT_SECRET_KEY")
	env(&p.SessionToken, "GAMELIFT_SESSION_TOKEN")
	if p.ProcessID == "ManagedResource" {
		p.ProcessID = uuid.NewString()
	}
	if p.AuthToken != "" {
		p.AwsRegion, p.AccessKey, p.SecretKey, p.SessionToken = "", "", "", ""
	}
	return p
}

var (
	fleetIDPattern = regexp.MustCompile(`^[a-zA-Z0-9.-]+$`)
	hostIDPattern  = regexp.MustCompile(`^[a-zA-Z0-9\-]+(/[a-zA-Z0-9\-]+)?$`)
)

// validateParams applies the SDKs' client-side checks (§1.2).
func validateParams(p ServerParameters) error {
	switch {
	case p.WebSocketURL == "":
		return errors.New("serversdk: WebSocketURL (GAMELIFT_SDK_WEBSOCKET_URL) is required")
	case p.ProcessID == "":
		return errors.New("serversdk: ProcessID (GAMELIFT_SDK_PROCESS_ID) is required")
	case len(p.FleetID) > 256 || !fleetIDPattern.MatchString(p.FleetID):
		return fmt.Errorf("serversdk: FleetID %q is invalid", p.FleetID)
	case len(p.HostID) > 256 || !hostIDPattern.MatchString(p.HostID):
		return fmt.Errorf("serversdk: HostID %q is invalid", p.HostID)
	case p.AuthToken == "" && (p.AwsRegion == "" || p.AccessKey == "" || p.SecretKey == ""):
		return errors.New("serversdk: give an AuthToken, or AwsRegion, AccessKey and SecretKey")
	}
	return nil
}

// buildURL puts the connect parameters of §1.3 on the configured URL, replacing any query
// there (as the Go SDK does), with one IdempotencyToken per InitSDK.
func buildURL(p ServerParameters, now time.Time) (string, error) {
	u, err := url.Parse(p.WebSocketURL)
	if err != nil {
		return "", fmt.Errorf("serversdk: WebSocketURL: %w", err)
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		return "", fmt.Errorf("serversdk: WebSocketURL %q: want ws:// or wss://", p.WebSocketURL)
	}
	q := url.Values{
		"pID":              {p.ProcessID},
		"sdkVersion":       {SdkVersion},
		"sdkLanguage":      {SdkLanguage},
		"ComputeId":        {p.HostID},
		"FleetId":          {p.FleetID},
		"IdempotencyToken": {uuid.NewString()},
	}
	if p.AuthToken != "" {
		q.Set("Authorization", p.AuthToken)
	} else {
		signQuery(q, p, now)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// signQuery adds the SigV4 parameters of the SDK's own variant (§1.2): the signed "canonical
// request" is ComputeId, FleetId and pID only.
func signQuery(q url.Values, p ServerParameters, now time.Time) {
	date, datetime := now.UTC().Format("20060102"), now.UTC().Format("20060102T150405Z")
	canonical := "ComputeId=" + url.QueryEscape(p.HostID) + "&FleetId=" + url.QueryEscape(p.FleetID) +
		"&pID=" + url.QueryEscape(p.ProcessID)
	sum := sha256.Sum256([]byte(canonical))
	scope := date + "/" + p.AwsRegion + "/gamelift/aws4_request"
	toSign := "AWS4-HMAC-SHA256\n" + datetime + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
	key := mac([]byte("AWS4"+p.SecretKey), date)
	for _, part := range []string{p.AwsRegion, "gamelift", "aws4_request"} {
		key = mac(key, part)
	}
	q.Set("Authorization", "SigV4")
	q.Set("X-Amz-Algorithm", "AWS4-HMAC-SHA256")
	q.Set("X-Amz-Credential", p.AccessKey+"/"+scope)
	q.Set("X-Amz-Date", datetime)
	q.Set("X-Amz-Signature", hex.EncodeToString(mac(key, toSign)))
	if p.SessionToken != "" {
		q.Set("X-Amz-Security-Token", p.SessionToken)
	}
}

func mac(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}
