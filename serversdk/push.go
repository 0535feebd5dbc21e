package serversdk

import (
	"context"
	"encoding/json"
	"time"

	"github.com/hoist-gg/hoist/sdkws/message"
)

// push handles a push frame (§4) and reports whether action is a push at all. Pushes that
// arrive before ProcessReady succeeded are ignored, as the SDKs do. Callbacks run on their
// own goroutines.
func (s *SDK) push(action string, frame []byte) bool {
	var handle func([]byte)
	switch action {
	case message.ActionCreateGameSession:
		handle = s.onCreateGameSession
	case message.ActionUpdateGameSession:
		handle = s.onUpdateGameSession
	case message.ActionTerminateProcess:
		handle = s.onTerminateProcess
	case message.ActionRefreshConnection:
		handle = s.onRefreshConnection
	default:
		return false
	}
	go handle(frame)
	return true
}

// readyProc returns the ProcessParameters once ProcessReady has succeeded.
func (s *SDK) readyProc() (ProcessParameters, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc, s.ready
}

func (s *SDK) onCreateGameSession(frame []byte) {
	var m message.CreateGameSession
	if err := json.Unmarshal(frame, &m); err != nil {
		s.log.Warn("serversdk: dropping a malformed CreateGameSession", "err", err)
		return
	}
	p, ok := s.readyProc()
	if !ok {
		return
	}
	s.mu.Lock()
	s.gameSessionID = m.GameSessionID
	fleet := s.params.FleetID
	s.mu.Unlock()
	gs := GameSession{
		GameSessionID: m.GameSessionID, Name: m.GameSessionName, FleetID: fleet,
		GameSessionData: m.GameSessionData, MatchmakerData: m.MatchmakerData,
		IPAddress: m.IPAddress, DNSName: m.DNSName, Port: m.Port,
		MaximumPlayerSessionCount: m.MaximumPlayerSessionCount, GameProperties: m.GameProperties,
	}
	if p.OnStartGameSession != nil {
		p.OnStartGameSession(gs)
	}
}

func (s *SDK) onUpdateGameSession(frame []byte) {
	var m message.UpdateGameSession
	if err := json.Unmarshal(frame, &m); err != nil {
		s.log.Warn("serversdk: dropping a malformed UpdateGameSession", "err", err)
		return
	}
	if p, ok := s.readyProc(); ok && p.OnUpdateGameSession != nil {
		p.OnUpdateGameSession(UpdateGameSession{GameSession: m.GameSession, UpdateReason: m.UpdateReason, BackfillTicketID: m.BackfillTicketID})
	}
}

// onTerminateProcess stores the termination time (epoch ms on the wire; now + 270 s when
// absent) and calls OnProcessTerminate, or, without one, ends the process itself: ProcessEnding,
// Destroy and exit 0 (-1 when ProcessEnding failed) (§4).
func (s *SDK) onTerminateProcess(frame []byte) {
	var m message.TerminateProcess
	_ = json.Unmarshal(frame, &m)
	t := time.UnixMilli(m.TerminationTime)
	if m.TerminationTime <= 0 {
		t = s.opt.Clock.Now().Add(DefaultTerminationFallback)
	}
	s.mu.Lock()
	s.termination = t
	p := s.proc
	s.mu.Unlock()
	if p.OnProcessTerminate != nil {
		p.OnProcessTerminate()
		return
	}
	code := 0
	if err := s.ProcessEnding(context.Background()); err != nil {
		s.log.Error("serversdk: ProcessEnding after TerminateProcess failed", "err", err)
		code = -1
	}
	s.Destroy()
	s.opt.Exit(code)
}

// onRefreshConnection moves the connection to the endpoint and token in the push, in token
// mode (§1.2, §4).
func (s *SDK) onRefreshConnection(frame []byte) {
	var m message.RefreshConnection
	if err := json.Unmarshal(frame, &m); err != nil || m.RefreshConnectionEndpoint == "" {
		s.log.Warn("serversdk: dropping a malformed RefreshConnection")
		return
	}
	l, err := s.conn()
	if err != nil {
		return
	}
	s.mu.Lock()
	p := s.params
	s.mu.Unlock()
	p.WebSocketURL, p.AuthToken = m.RefreshConnectionEndpoint, m.AuthToken
	p.AwsRegion, p.AccessKey, p.SecretKey, p.SessionToken = "", "", "", ""
	u, err := buildURL(p, s.opt.Clock.Now())
	if err == nil {
		err = l.refresh(u)
	}
	if err != nil {
		s.log.Error("serversdk: RefreshConnection failed", "err", err)
		return
	}
	s.mu.Lock()
	s.params = p
	s.mu.Unlock()
}
