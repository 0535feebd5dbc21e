package serversdk

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/hoist-gg/hoist/sdkws/message"
)

// conn returns the link, or ErrNotInitialized.
func (s *SDK) conn() (*link, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.link == nil {
		return nil, ErrNotInitialized
	}
	return s.link, nil
}

// ProcessReady tells the service the process can host a game session (ActivateServerProcess,
// §3, §6.2) and, once it is acknowledged, starts the health loop (§6.3). Callbacks are
// registered before the request, so a CreateGameSession push right after it is not lost.
func (s *SDK) ProcessReady(ctx context.Context, p ProcessParameters) error {
	if p.Port < 1 || p.Port > 60000 {
		return fmt.Errorf("serversdk: port %d is out of range 1..60000", p.Port)
	}
	l, err := s.conn()
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()
	req := message.ActivateServerProcess{
		SdkVersion: SdkVersion, SdkLanguage: SdkLanguage, Port: p.Port, LogPaths: p.LogParameters.LogPaths,
		SdkToolName: s.opt.Getenv("GAMELIFT_SDK_TOOL_NAME"), SdkToolVersion: s.opt.Getenv("GAMELIFT_SDK_TOOL_VERSION"),
	}
	if err := l.call(ctx, req, s.opt.ActivateTimeout, nil); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ready = true
	if s.stopHealth == nil {
		hctx, cancel := context.WithCancel(context.Background())
		s.stopHealth = cancel
		go s.healthLoop(hctx)
	}
	return nil
}

// gameSession returns the link and the current game session ID for the calls that need one
// (§3 notes: refused locally when no game session is set).
func (s *SDK) gameSession() (*link, string, error) {
	l, err := s.conn()
	if err != nil {
		return nil, "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gameSessionID == "" {
		return nil, "", ErrNoGameSession
	}
	return l, s.gameSessionID, nil
}

// ActivateGameSession tells the service the game session is ready for players (§6.5).
func (s *SDK) ActivateGameSession(ctx context.Context) error {
	l, gs, err := s.gameSession()
	if err != nil {
		return err
	}
	return l.call(ctx, message.ActivateGameSession{GameSessionID: gs}, s.opt.CallTimeout, nil)
}

var playerSessionPattern = regexp.MustCompile(`^[a-zA-Z0-9.-]{1,256}$`)

// AcceptPlayerSession validates a connecting player's session (§6.6).
func (s *SDK) AcceptPlayerSession(ctx context.Context, playerSessionID string) error {
	l, gs, err := s.gameSession()
	if err != nil {
		return err
	}
	if !playerSessionPattern.MatchString(playerSessionID) {
		return fmt.Errorf("serversdk: player session ID %q is invalid", playerSessionID)
	}
	return l.call(ctx, message.AcceptPlayerSession{GameSessionID: gs, PlayerSessionID: playerSessionID}, s.opt.CallTimeout, nil)
}

// RemovePlayerSession reports that a player left (§6.6).
func (s *SDK) RemovePlayerSession(ctx context.Context, playerSessionID string) error {
	l, gs, err := s.gameSession()
	if err != nil {
		return err
	}
	if !playerSessionPattern.MatchString(playerSessionID) {
		return fmt.Errorf("serversdk: player session ID %q is invalid", playerSessionID)
	}
	return l.call(ctx, message.RemovePlayerSession{GameSessionID: gs, PlayerSessionID: playerSessionID}, s.opt.CallTimeout, nil)
}

// UpdatePlayerSessionCreationPolicy sets ACCEPT_ALL or DENY_ALL on the game session.
func (s *SDK) UpdatePlayerSessionCreationPolicy(ctx context.Context, policy string) error {
	l, gs, err := s.gameSession()
	if err != nil {
		return err
	}
	if policy != "ACCEPT_ALL" && policy != "DENY_ALL" {
		return fmt.Errorf("serversdk: player session policy %q: want ACCEPT_ALL or DENY_ALL", policy)
	}
	req := message.UpdatePlayerSessionCreationPolicy{GameSessionID: gs, PlayerSessionPolicy: policy}
	return l.call(ctx, req, s.opt.CallTimeout, nil)
}

// DescribePlayerSessions lists player sessions; exactly one of GameSessionID, PlayerID and
// PlayerSessionID must be set (§1.2).
func (s *SDK) DescribePlayerSessions(ctx context.Context, req DescribePlayerSessionsRequest) (DescribePlayerSessionsResult, error) {
	var out DescribePlayerSessionsResult
	l, err := s.conn()
	if err != nil {
		return out, err
	}
	n := 0
	for _, v := range []string{req.GameSessionID, req.PlayerID, req.PlayerSessionID} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		return out, errors.New("serversdk: DescribePlayerSessions needs exactly one of GameSessionID, PlayerID, PlayerSessionID")
	}
	err = l.call(ctx, req, s.opt.CallTimeout, &out)
	return out, err
}

// StartMatchBackfill asks for a backfill matchmaking ticket and returns its ID.
func (s *SDK) StartMatchBackfill(ctx context.Context, req StartMatchBackfillRequest) (string, error) {
	l, err := s.conn()
	if err != nil {
		return "", err
	}
	if len(req.Players) == 0 || req.GameSessionArn == "" || req.MatchmakingConfigurationArn == "" {
		return "", errors.New("serversdk: StartMatchBackfill needs GameSessionArn, MatchmakingConfigurationArn and Players")
	}
	var out message.StartMatchBackfillResult
	err = l.call(ctx, req, s.opt.CallTimeout, &out)
	return out.TicketID, err
}

// StopMatchBackfill cancels a backfill ticket.
func (s *SDK) StopMatchBackfill(ctx context.Context, req StopMatchBackfillRequest) error {
	l, err := s.conn()
	if err != nil {
		return err
	}
	if req.TicketID == "" || req.GameSessionArn == "" || req.MatchmakingConfigurationArn == "" {
		return errors.New("serversdk: StopMatchBackfill needs GameSessionArn, MatchmakingConfigurationArn and TicketID")
	}
	return l.call(ctx, req, s.opt.CallTimeout, nil)
}

// GetComputeCertificate returns the path of the compute's TLS certificate and the compute
// name.
func (s *SDK) GetComputeCertificate(ctx context.Context) (GetComputeCertificateResult, error) {
	var out GetComputeCertificateResult
	l, err := s.conn()
	if err != nil {
		return out, err
	}
	err = l.call(ctx, message.GetComputeCertificate{}, s.opt.CallTimeout, &out)
	return out, err
}

// GetFleetRoleCredentials returns credentials of the fleet's IAM role. RoleSessionName
// defaults to "<fleet>-<host>" cut to 64 characters; results are cached per role until 15
// minutes before they expire; an empty AccessKeyID in the answer means the compute has no
// fleet role (§3 notes) and returns ErrNoFleetRole.
func (s *SDK) GetFleetRoleCredentials(ctx context.Context, req GetFleetRoleCredentialsRequest) (FleetRoleCredentials, error) {
	l, err := s.conn()
	if err != nil {
		return FleetRoleCredentials{}, err
	}
	s.mu.Lock()
	cached, ok := s.roleCreds[req.RoleArn]
	if req.RoleSessionName == "" {
		req.RoleSessionName = s.params.FleetID + "-" + s.params.HostID
		req.RoleSessionName = req.RoleSessionName[:min(64, len(req.RoleSessionName))]
	}
	s.mu.Unlock()
	now := s.opt.Clock.Now()
	if ok && now.Add(15*time.Minute).Before(time.UnixMilli(cached.Expiration)) {
		return cached, nil
	}
	var out FleetRoleCredentials
	if err := l.call(ctx, req, s.opt.CallTimeout, &out); err != nil {
		return out, err
	}
	if out.AccessKeyID == "" {
		return out, ErrNoFleetRole
	}
	s.mu.Lock()
	s.roleCreds[req.RoleArn] = out
	s.mu.Unlock()
	return out, nil
}

// GetGameSessionId returns the ID of the game session the process hosts, or
// ErrNoGameSession. It asks nothing of the service.
func (s *SDK) GetGameSessionId() (string, error) { //nolint:revive // the official SDK's name
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gameSessionID == "" {
		return "", ErrNoGameSession
	}
	return s.gameSessionID, nil
}

// GetTerminationTime returns when the process will be stopped, once TerminateProcess has
// arrived; ok is false before.
func (s *SDK) GetTerminationTime() (t time.Time, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.termination, !s.termination.IsZero()
}

// ProcessEnding tells the service the process is shutting down (TerminateServerProcess,
// §6.9) and stops the health loop.
func (s *SDK) ProcessEnding(ctx context.Context) error {
	l, err := s.conn()
	if err != nil {
		return err
	}
	s.stopHealthLoop()
	return l.call(ctx, message.TerminateServerProcess{}, s.opt.CallTimeout, nil)
}

// Destroy stops the health loop and reconnects and closes the connection (§6.10). The SDK can
// be initialised again afterwards.
func (s *SDK) Destroy() error {
	s.stopHealthLoop()
	s.mu.Lock()
	l := s.link
	s.link, s.ready, s.gameSessionID = nil, false, ""
	s.mu.Unlock()
	if l != nil {
		l.close()
	}
	return nil
}

func (s *SDK) stopHealthLoop() {
	s.mu.Lock()
	stop := s.stopHealth
	s.stopHealth = nil
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
}
