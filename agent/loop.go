package agent

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/hoist-gg/hoist/agent/supervisor"
)

// runDue does whatever timed work has come due: token check, runtime configuration read,
// (re)connecting the link, heartbeat, and reporting ended processes.
func (a *Agent) runDue(ctx context.Context, now time.Time) {
	if !now.Before(a.nextToken) && !a.stopping {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		next, err := a.tokens.Check(cctx)
		cancel()
		if err != nil {
			a.log.Error("token refresh failed", "err", err)
		}
		a.nextToken = now.Add(next)
	}
	haveToken := a.tokens.Current().Value != ""
	if !now.Before(a.nextConfig) && haveToken && !a.stopping {
		a.readConfig(ctx)
		a.nextConfig = now.Add(a.cfg.ConfigInterval)
	}
	if a.link == nil && haveToken && !now.Before(a.nextConnect) && a.Registration().AgentEndpoint != "" {
		a.connect(ctx, now)
	}
	if a.link != nil && !now.Before(a.nextHeartbeat) {
		a.sendHeartbeat(ctx)
	}
	a.collectExits()
	a.flush(ctx)
	a.sendGameMetrics(ctx, now)
}

// nextWake is how long until the earliest timed work that can actually run now.
func (a *Agent) nextWake(now time.Time) time.Duration {
	haveToken := a.tokens.Current().Value != ""
	var due []time.Time
	if !a.stopping {
		due = append(due, a.nextToken)
		if haveToken {
			due = append(due, a.nextConfig)
		}
	}
	if a.link == nil && haveToken && a.Registration().AgentEndpoint != "" {
		due = append(due, a.nextConnect)
	}
	if a.link != nil {
		due = append(due, a.nextHeartbeat)
	}
	if t := a.gameMetricsDue(); !t.IsZero() {
		due = append(due, t)
	}
	if len(due) == 0 {
		return a.cfg.HeartbeatInterval // only events can make work; look again now and then
	}
	return max(slices.MinFunc(due, time.Time.Compare).Sub(now), time.Millisecond)
}

// readConfig reads the runtime configuration through the control plane and applies it; if
// that fails and the link is up, it asks over the link too (the answer arrives as a Message).
func (a *Agent) readConfig(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	rc, err := a.cp.DescribeRuntimeConfiguration(cctx, a.cfg.Compute.FleetID)
	cancel()
	if err == nil {
		a.applyConfig(rc)
		return
	}
	a.log.Warn("read runtime configuration", "err", err)
	if a.link != nil {
		if err := a.link.RequestRuntimeConfiguration(ctx); err != nil {
			a.log.Warn("request runtime configuration over the link", "err", err)
		}
	}
}

func (a *Agent) applyConfig(rc RuntimeConfiguration) {
	if a.stopping {
		return
	}
	a.sup.SetConfig(rc.ServerProcesses)
	a.status = StatusActive
}

func (a *Agent) connect(ctx context.Context, now time.Time) {
	p := LinkParams{FleetID: a.cfg.Compute.FleetID, ComputeName: a.cfg.Compute.ComputeName, AuthToken: a.tokens.Current().Value}
	var l Link
	var err error
	for _, p.Endpoint = range a.linkEndpoints() {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		l, err = a.cp.Connect(cctx, p, a.deliver)
		cancel()
		if err == nil || errors.Is(err, ErrUnauthorized) {
			break
		}
	}
	if err != nil {
		a.reconnectDelay = min(max(2*a.reconnectDelay, a.cfg.ReconnectMin), a.cfg.ReconnectMax)
		a.nextConnect = now.Add(a.reconnectDelay)
		a.log.Warn("agent link: connect failed", "err", err, "retry_in", a.reconnectDelay)
		if errors.Is(err, ErrUnauthorized) {
			a.tokens.Invalidate()
			a.nextToken = now
		}
		return
	}
	a.log.Info("agent link connected", "endpoint", p.Endpoint)
	a.link = l
	a.reconnectDelay = 0
	a.nextHeartbeat = now
}

// linkEndpoints lists where the agent websocket may be dialled, in order: the registration's
// agent endpoint, then (unless --agent-endpoint fixed it) the agent endpoint of every
// control-plane URL, so that the link moves to a live node when the registration's is gone.
func (a *Agent) linkEndpoints() []string {
	out := []string{a.Registration().AgentEndpoint}
	if a.cfg.AgentEndpoint != "" {
		return out
	}
	for _, s := range a.cfg.Servers {
		if u := agentEndpointOf(s); u != "" && !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out
}

// agentEndpointOf is the agent websocket URL a server serves at control-plane URL server:
// the same host, ws or wss, path AgentPath ("" when server is not a URL).
func agentEndpointOf(server string) string {
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return ""
	}
	scheme := "ws"
	if u.Scheme == "https" || u.Scheme == "wss" {
		scheme = "wss"
	}
	return scheme + "://" + u.Host + "/agent"
}

// deliver hands a Message from the link's reader to the Run goroutine.
func (a *Agent) deliver(m Message) {
	select {
	case a.msgs <- m:
	case <-a.quit:
	}
}

// linkLost forgets the link; runDue dials again after the backoff.
func (a *Agent) linkLost(why string) {
	if a.link == nil {
		return
	}
	a.log.Warn("agent link lost", "why", why)
	_ = a.link.Close()
	a.link = nil
	a.reconnectDelay = min(max(2*a.reconnectDelay, a.cfg.ReconnectMin), a.cfg.ReconnectMax)
	a.nextConnect = a.clk.Now().Add(a.reconnectDelay)
}

func (a *Agent) sendHeartbeat(ctx context.Context) {
	a.nextHeartbeat = a.clk.Now().Add(a.cfg.HeartbeatInterval)
	if a.link == nil {
		return
	}
	hb := Heartbeat{Status: a.status, Time: a.clk.Now(), ProcessList: []string{}}
	for _, p := range a.sup.Processes() {
		hb.ProcessList = append(hb.ProcessList, p.ID)
	}
	if err := a.link.SendHeartbeat(ctx, hb); err != nil {
		a.linkLost(err.Error())
	}
}

// collectExits turns the supervisor's exits into pending termination reports.
func (a *Agent) collectExits() {
	a.mu.Lock()
	exits := a.exits
	a.exits = nil
	a.mu.Unlock()
	for _, e := range exits {
		delete(a.unregistered, e.ID)
		code, reason := eventCode(e)
		a.pending = append(a.pending, Termination{ProcessID: e.ID, EventCode: code, TerminationReason: reason})
	}
}

// flush sends the pending termination reports while the link is up.
func (a *Agent) flush(ctx context.Context) {
	for a.link != nil && len(a.pending) > 0 {
		if err := a.link.NotifyTermination(ctx, a.pending[0]); err != nil {
			a.linkLost(err.Error())
			return
		}
		a.pending = a.pending[1:]
	}
}

// handle acts on one Message from the control plane.
func (a *Agent) handle(ctx context.Context, m Message) {
	if m.StatusCode != 0 && m.StatusCode != 200 {
		a.log.Warn("control plane refused a request", "action", m.Action, "status", m.StatusCode, "error", m.ErrorMessage)
		return
	}
	switch m.Action {
	case ActionForceExitServerProcess, ActionForceExitProcess:
		if !a.sup.Terminate(m.ProcessID, ReasonForceExit) {
			a.log.Warn("force exit: no such live process", "id", m.ProcessID)
		}
	case ActionCrashServerProcess:
		if !a.crashProcess(m.ProcessID) {
			a.log.Warn("crash fault: no such live process", "id", m.ProcessID)
		}
	case ActionStartComputeTermination:
		a.beginShutdown(ctx, "StartComputeTermination")
	case ActionRefreshConnection:
		a.refreshConnection(m)
	case ActionNotifyProcessRegistered:
		delete(a.unregistered, m.ProcessID)
		a.log.Info("server process registered", "id", m.ProcessID, "log_paths", m.LogPaths)
	case ActionSendHeartbeat:
		a.heartbeatAnswer(ctx, m)
	case ActionDescribeRuntimeConfiguration:
		if len(m.ServerProcesses) > 0 {
			a.applyConfig(m.RuntimeConfiguration())
		}
	}
}

func (a *Agent) refreshConnection(m Message) {
	if m.RefreshConnectionEndpoint != "" {
		a.mu.Lock()
		a.reg.AgentEndpoint = m.RefreshConnectionEndpoint
		a.mu.Unlock()
	}
	if m.AuthToken != "" {
		a.tokens.Set(Token{Value: m.AuthToken, Expires: time.Unix(m.ExpirationTime, 0)})
	}
	a.linkLost("RefreshConnection")
	a.reconnectDelay = 0
	a.nextConnect = a.clk.Now()
}

// heartbeatAnswer terminates the processes the control plane calls unhealthy, and those it
// has listed as unregistered too many times in a row.
func (a *Agent) heartbeatAnswer(ctx context.Context, m Message) {
	for _, id := range m.UnhealthyProcesses {
		a.sup.Terminate(id, ReasonUnhealthy)
	}
	listed := map[string]bool{}
	for _, id := range m.UnregisteredProcesses {
		listed[id] = true
		a.unregistered[id]++
		if a.unregistered[id] >= unregisteredLimit {
			a.sup.Terminate(id, ReasonUnregistered)
		}
	}
	for id := range a.unregistered {
		if !listed[id] {
			delete(a.unregistered, id)
		}
	}
	if s := strings.ToUpper(m.Status); s == "TERMINATING" || s == "TERMINATED" {
		a.beginShutdown(ctx, "control plane reports the compute "+m.Status)
	}
}

// Termination reasons the agent gives the supervisor.
const (
	ReasonForceExit    = "force-exit"
	ReasonUnhealthy    = "unhealthy"
	ReasonUnregistered = "unregistered"
)

// eventCode maps how a process ended to the EventCode and TerminationReason reported in
// NotifyServerProcessTermination.
func eventCode(e supervisor.Exit) (code, reason string) {
	switch {
	case e.LaunchErr != nil:
		return "SERVER_PROCESS_INVALID_PATH", "LAUNCH_FAILED"
	case e.Reason == ReasonForceExit:
		return "SERVER_PROCESS_FORCE_TERMINATED", "FORCE_EXIT"
	case e.Reason == ReasonUnhealthy:
		return "SERVER_PROCESS_TERMINATED_UNHEALTHY", "UNHEALTHY"
	case e.Reason == ReasonUnregistered:
		return "SERVER_PROCESS_SDK_INITIALIZATION_TIMEOUT", "SDK_INITIALIZATION_TIMEOUT"
	case e.Reason != "" && e.Killed:
		return "SERVER_PROCESS_PROCESS_EXIT_TIMEOUT", "EXIT_TIMEOUT"
	case e.Reason == supervisor.ReasonShutdown:
		return "", "COMPUTE_SHUTDOWN"
	case e.Reason != "":
		return "", "RETIRED"
	case e.Code != 0:
		return "SERVER_PROCESS_CRASHED", "CRASHED"
	default:
		return "", "NORMAL_TERMINATION"
	}
}

// supervisorConfig wires the agent's hooks in front of the caller's.
func (a *Agent) supervisorConfig() supervisor.Config {
	sc := a.cfg.Supervisor
	if sc.Clock == nil {
		sc.Clock = a.clk
	}
	if sc.Logger == nil {
		sc.Logger = a.log
	}
	user := sc.Hooks
	sc.Hooks.Env = func(l *supervisor.Launch) []string {
		env := append(a.processEnv(l.ID), a.telemetryEnv(l.ID)...)
		if user.Env != nil {
			env = append(env, user.Env(l)...)
		}
		return env
	}
	sc.Hooks.Exited = func(e supervisor.Exit) {
		a.telemetryEnded(e.ID)
		a.mu.Lock()
		a.exits = append(a.exits, e)
		a.mu.Unlock()
		select {
		case a.exitC <- struct{}{}:
		default:
		}
		if user.Exited != nil {
			user.Exited(e)
		}
	}
	return sc
}

// processEnv is the Server SDK environment of one process (protocol notes §1.1).
func (a *Agent) processEnv(processID string) []string {
	c := a.cfg.Compute
	return []string{
		"GAMELIFT_SDK_WEBSOCKET_URL=" + a.sdkURL(),
		"GAMELIFT_SDK_AUTH_TOKEN=" + a.tokens.Current().Value,
		"GAMELIFT_SDK_FLEET_ID=" + c.FleetID,
		"GAMELIFT_SDK_HOST_ID=" + c.ComputeName,
		"GAMELIFT_SDK_PROCESS_ID=" + processID,
	}
}
