package gamelift

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// Defaults of the hosting settings in Config.
const (
	// DefaultComputeAuthTokenLifetime is how long a compute auth token is valid. GameLift does
	// not document its lifetime; users observe about 15 minutes.
	DefaultComputeAuthTokenLifetime = 15 * time.Minute
	// DefaultHealthCheckInterval is the Server SDK's health-check period.
	DefaultHealthCheckInterval = 60 * time.Second
	// DefaultProcessReadyTimeout is how long a connected process has to call ProcessReady.
	DefaultProcessReadyTimeout = 5 * time.Minute
	// DefaultTerminationGracePeriod is how long GameLift waits for ProcessEnding after telling
	// a process to terminate.
	DefaultTerminationGracePeriod = 5 * time.Minute
)

// healthChecksMissed is how many health periods without a healthy report (or how many
// unhealthy reports in a row) make a process unhealthy, as in GameLift ("unhealthy for more
// than 180 seconds").
const healthChecksMissed = 3

// ProcessRef names one server process: the fleet and compute it runs on and the process ID it
// connected with (the SDK's pID, GAMELIFT_SDK_PROCESS_ID).
type ProcessRef struct{ FleetID, ComputeName, ProcessID string }

// ProcessActivation is what a server process reports with ProcessReady
// (ActivateServerProcess).
type ProcessActivation struct {
	Port        int
	LogPaths    []string
	SdkVersion  string
	SdkLanguage string
}

// hosting holds the hosting settings of a Service, defaults filled in.
type hosting struct {
	sdkEndpoint, agentEndpoint string
	tokenLifetime              time.Duration
	healthInterval             time.Duration
	readyTimeout               time.Duration
	grace                      time.Duration
}

func newHosting(cfg Config) hosting {
	or := func(d, def time.Duration) time.Duration {
		if d <= 0 {
			return def
		}
		return d
	}
	return hosting{
		sdkEndpoint: cfg.SDKEndpoint, agentEndpoint: cfg.AgentEndpoint,
		tokenLifetime:  or(cfg.ComputeAuthTokenLifetime, DefaultComputeAuthTokenLifetime),
		healthInterval: or(cfg.HealthCheckInterval, DefaultHealthCheckInterval),
		readyTimeout:   or(cfg.ProcessReadyTimeout, DefaultProcessReadyTimeout),
		grace:          or(cfg.TerminationGracePeriod, DefaultTerminationGracePeriod),
	}
}

// Server process statuses as stored. A process is INITIALIZING from its first authenticated
// connection until ProcessReady, then ACTIVE; TERMINATING once told to terminate; TERMINATED
// when it has ended (ProcessEnding, exit, or the grace period running out).
const (
	processInitializing = "INITIALIZING"
	processActive       = "ACTIVE"
	processTerminating  = "TERMINATING"
	processTerminated   = "TERMINATED"
)

// processDoc is a server process as stored under processKey, with Parent = the fleet ID.
// Times are Unix milliseconds.
type processDoc struct {
	FleetID       string   `json:"fleetId"`
	Compute       string   `json:"compute"`
	ProcessID     string   `json:"processId"`
	Status        string   `json:"status"`
	Connected     bool     `json:"connected"`
	ConnectedAt   int64    `json:"connectedAt"`
	Activated     int64    `json:"activated,omitempty"`
	LastHeartbeat int64    `json:"lastHeartbeat,omitempty"`
	LastHealthy   int64    `json:"lastHealthy,omitempty"`
	Unhealthy     int      `json:"unhealthy,omitempty"` // unhealthy reports in a row
	Port          int      `json:"port,omitempty"`
	LogPaths      []string `json:"logPaths,omitempty"`
	SdkVersion    string   `json:"sdkVersion,omitempty"`
	SdkLanguage   string   `json:"sdkLanguage,omitempty"`
	TerminateAt   int64    `json:"terminateAt,omitempty"` // when it was told to terminate
	Reason        string   `json:"reason,omitempty"`      // event code of that decision
	Ended         int64    `json:"ended,omitempty"`
}

func processKey(fleetID, processID string) string { return fleetID + "/" + processID }

func (p *processDoc) ref() ProcessRef {
	return ProcessRef{FleetID: p.FleetID, ComputeName: p.Compute, ProcessID: p.ProcessID}
}

func (p *processDoc) describe() string {
	return fmt.Sprintf("Server process %s on compute %s", p.ProcessID, p.Compute)
}

func processNotFound(ref ProcessRef) func() error {
	return func() error {
		return api.Errorf(api.NotFoundException, "Server process %s not found on compute %s of fleet %s.",
			ref.ProcessID, ref.ComputeName, ref.FleetID)
	}
}

// AuthenticateProcess admits a server process connecting to the SDK endpoint: authToken must
// be an unexpired token issued for ref's fleet and compute, the compute registered and the
// fleet ACTIVE. A new process ID is recorded as INITIALIZING (it then has ProcessReadyTimeout
// to call ProcessReady); a known live process reconnecting keeps its state. A process that has
// already ended cannot come back (InvalidRequestException).
func (s *Service) AuthenticateProcess(ctx context.Context, ref ProcessRef, authToken string) error {
	return s.admitProcess(ctx, ref, func(tx store.Tx) error {
		return s.checkToken(tx, ref.FleetID, ref.ComputeName, authToken)
	})
}

// AdmitSignedProcess admits a server process whose connection was signed with the account's
// credentials (the Server SDK's SigV4 mode) rather than a compute auth token: the compute must
// be registered; everything else is as for AuthenticateProcess.
func (s *Service) AdmitSignedProcess(ctx context.Context, ref ProcessRef) error {
	return s.admitProcess(ctx, ref, func(tx store.Tx) error {
		_, err := getDoc(tx, kindCompute, computeKey(ref.FleetID, ref.ComputeName), new(computeDoc), func() error {
			return api.Errorf(api.UnauthorizedException, "Compute %s is not registered with fleet %s.", ref.ComputeName, ref.FleetID)
		})
		return err
	})
}

// admitProcess records a connecting process once check, run in the same transaction, passed.
func (s *Service) admitProcess(ctx context.Context, ref ProcessRef, check func(store.Tx) error) error {
	if ref.ProcessID == "" || ref.FleetID == "" || ref.ComputeName == "" {
		return api.Errorf(api.InvalidRequestException, "A process ID, fleet ID and compute name are required.")
	}
	return s.update(ctx, func(tx store.Tx) error {
		if err := check(tx); err != nil {
			return err
		}
		if _, _, err := s.activeFleetTx(tx, ref.FleetID); err != nil {
			return err
		}
		var p processDoc
		rec, err := getDoc(tx, kindProcess, processKey(ref.FleetID, ref.ProcessID), &p, processNotFound(ref))
		if hasErrorCode(err, api.NotFoundException) {
			now := s.nowMillis()
			return insertChild(tx, kindProcess, processKey(ref.FleetID, ref.ProcessID), ref.FleetID, &processDoc{
				FleetID: ref.FleetID, Compute: ref.ComputeName, ProcessID: ref.ProcessID,
				Status: processInitializing, Connected: true, ConnectedAt: now})
		}
		if err != nil {
			return err
		}
		if p.Compute != ref.ComputeName {
			return api.Errorf(api.UnauthorizedException, "Server process %s belongs to another compute.", ref.ProcessID)
		}
		if p.Status == processTerminated {
			return api.Errorf(api.InvalidRequestException,
				"Server process %s has ended; a new process must connect with a new process ID.", ref.ProcessID)
		}
		p.Connected = true
		return putDoc(tx, rec, &p)
	})
}

// hasErrorCode reports whether err is an *api.Error with code.
func hasErrorCode(err error, code api.ErrorCode) bool {
	var e *api.Error
	return errors.As(err, &e) && e.Code == code
}

// changeProcess runs change on the stored process ref names, in a read-write transaction,
// and writes the process back when change returns nil. ref's compute must be the process's.
func (s *Service) changeProcess(ctx context.Context, ref ProcessRef, change func(tx store.Tx, p *processDoc) error) error {
	return s.update(ctx, func(tx store.Tx) error {
		var p processDoc
		rec, err := getDoc(tx, kindProcess, processKey(ref.FleetID, ref.ProcessID), &p, processNotFound(ref))
		if err != nil {
			return err
		}
		if p.Compute != ref.ComputeName {
			return processNotFound(ref)()
		}
		if err := change(tx, &p); err != nil {
			return err
		}
		return putDoc(tx, rec, &p)
	})
}

// errUnchanged is returned by a change function that has nothing to write.
var errUnchanged = errors.New("unchanged")

// ignoreUnchanged turns errUnchanged into success.
func ignoreUnchanged(err error) error {
	if errors.Is(err, errUnchanged) {
		return nil
	}
	return err
}

// ActivateServerProcess records a process's ProcessReady: it becomes ACTIVE, available to host
// game sessions, with the port and log paths it reported, and its health checks start. A
// second call from an ACTIVE process updates port and log paths; a process that is
// terminating or has ended cannot activate (InvalidRequestException).
func (s *Service) ActivateServerProcess(ctx context.Context, ref ProcessRef, a ProcessActivation) error {
	if a.Port < 1 || a.Port > 65535 {
		return api.Errorf(api.InvalidRequestException, "Port %d is not a valid port: use 1 to 65535.", a.Port)
	}
	return s.changeProcess(ctx, ref, func(tx store.Tx, p *processDoc) error {
		switch p.Status {
		case processInitializing:
			now := s.nowMillis()
			p.Status, p.Activated, p.LastHeartbeat, p.LastHealthy, p.Unhealthy = processActive, now, now, now, 0
			msg := fmt.Sprintf("%s is ready for game sessions on port %d (ProcessReady).", p.describe(), a.Port)
			if err := s.addEvent(tx, p.FleetID, api.EventCodeGenericEvent, msg); err != nil {
				return err
			}
			if err := s.tally(tx, tallyFleet, p.FleetID, func(d *tallyDoc) { d.add(tallyActivations, 1) }); err != nil {
				return err
			}
			if err := s.offerProcess(tx, p); err != nil {
				return err
			}
		case processActive:
		default:
			return api.Errorf(api.InvalidRequestException, "Server process %s is %s and cannot activate.", p.ProcessID, p.Status)
		}
		p.Port, p.LogPaths, p.SdkVersion, p.SdkLanguage = a.Port, a.LogPaths, a.SdkVersion, a.SdkLanguage
		p.Connected = true
		_, c, err := readCompute(tx, p.FleetID, p.Compute)
		if err != nil {
			return err
		}
		return s.tellAgent(tx, c, MessageAgentProcessRegistered, AgentNotice{ProcessID: p.ProcessID, LogPaths: a.LogPaths})
	})
}

// HeartbeatServerProcess records a health report of an ACTIVE process. An unhealthy report
// counts towards termination (three in a row, or three health periods without a healthy
// one). Reports from a process already told to terminate are accepted and ignored; a process
// that has not called ProcessReady, or has ended, gets InvalidRequestException.
func (s *Service) HeartbeatServerProcess(ctx context.Context, ref ProcessRef, healthy bool) error {
	err := s.changeProcess(ctx, ref, func(tx store.Tx, p *processDoc) error {
		switch p.Status {
		case processActive:
		case processTerminating:
			return errUnchanged
		default:
			return api.Errorf(api.InvalidRequestException,
				"Server process %s is %s; health reports are accepted after ProcessReady.", p.ProcessID, p.Status)
		}
		now := s.nowMillis()
		p.LastHeartbeat, p.Connected = now, true
		if healthy {
			p.LastHealthy, p.Unhealthy = now, 0
		} else {
			p.Unhealthy++
		}
		return nil
	})
	return ignoreUnchanged(err)
}

// ServerProcessEnding records a process's ProcessEnding: it has ended cleanly and is
// TERMINATED (no fleet event: nothing went wrong). Calling it again is harmless.
func (s *Service) ServerProcessEnding(ctx context.Context, ref ProcessRef) error {
	err := s.changeProcess(ctx, ref, func(tx store.Tx, p *processDoc) error {
		if p.Status == processTerminated {
			return errUnchanged
		}
		p.Status, p.Ended, p.Connected = processTerminated, s.nowMillis(), false
		return s.processEnded(tx, p)
	})
	return ignoreUnchanged(err)
}

// ServerProcessDisconnected records that a process's connection closed. A process that was
// told to terminate has thereby ended (TERMINATED); any other stays as it is, since the SDK
// reconnects, and the health checks (or the ProcessReady timeout) end it if it does not come
// back. An unknown process is not an error.
func (s *Service) ServerProcessDisconnected(ctx context.Context, ref ProcessRef) error {
	err := s.changeProcess(ctx, ref, func(tx store.Tx, p *processDoc) error {
		switch p.Status {
		case processTerminated:
			return errUnchanged
		case processTerminating:
			p.Status, p.Ended = processTerminated, s.nowMillis()
			if err := s.processEnded(tx, p); err != nil {
				return err
			}
		}
		p.Connected = false
		return nil
	})
	if hasErrorCode(err, api.NotFoundException) {
		return nil
	}
	return ignoreUnchanged(err)
}

// AgentProcessExited records a host agent's report that a process it launched has exited,
// with the agent's event code (SERVER_PROCESS_CRASHED, SERVER_PROCESS_SDK_INITIALIZATION_TIMEOUT,
// ...; "" when it has none). The process becomes TERMINATED. The fleet event carries the
// agent's code; a process that exits while INITIALIZING or ACTIVE without one crashed
// (SERVER_PROCESS_CRASHED). A process that never connected gets an event when there is a code.
func (s *Service) AgentProcessExited(ctx context.Context, fleetID, computeName, processID, eventCode string) error {
	code := api.EventCode(eventCode)
	if eventCode != "" && !processEventCodes[code] {
		return api.Errorf(api.InvalidRequestException, "%q is not a server process event code.", eventCode)
	}
	return s.processExit(ctx, ProcessRef{FleetID: fleetID, ComputeName: computeName, ProcessID: processID}, code, "")
}

// processExit records a process's exit with its event code (see AgentProcessExited); why,
// when not empty, says more in the fleet event's message.
func (s *Service) processExit(ctx context.Context, ref ProcessRef, code api.EventCode, why string) error {
	fleetID, computeName, processID := ref.FleetID, ref.ComputeName, ref.ProcessID
	return s.update(ctx, func(tx store.Tx) error {
		var fleet fleetDoc
		if _, err := getDoc(tx, kindFleet, fleetID, &fleet, fleetNotFound(fleetID)); err != nil {
			return err
		}
		var p processDoc
		rec, err := getDoc(tx, kindProcess, processKey(fleetID, processID), &p, processNotFound(ref))
		if hasErrorCode(err, api.NotFoundException) {
			if code == "" {
				return nil
			}
			p = processDoc{FleetID: fleetID, Compute: computeName, ProcessID: processID}
			return s.addEvent(tx, fleetID, code, exitMessage(&p, code, why))
		}
		if err != nil || p.Status == processTerminated {
			return err
		}
		if p.Compute != computeName {
			return processNotFound(ref)()
		}
		return s.exited(tx, rec, &p, code, why)
	})
}

// exitMessage is the fleet event message of a process's exit.
func exitMessage(p *processDoc, code api.EventCode, why string) string {
	if why != "" {
		return p.describe() + " exited: " + string(code) + ": " + why
	}
	return p.describe() + " exited: " + string(code) + "."
}

// exited marks a live process TERMINATED after its exit, with the fleet event that fits.
func (s *Service) exited(tx store.Tx, rec *store.Record, p *processDoc, code api.EventCode, why string) error {
	if code == "" && p.Status != processTerminating {
		code = api.EventCodeServerProcessCrashed
	}
	if code != "" && string(code) != p.Reason {
		if err := s.addEvent(tx, p.FleetID, code, exitMessage(p, code, why)); err != nil {
			return err
		}
	}
	p.Status, p.Ended, p.Connected = processTerminated, s.nowMillis(), false
	if err := s.processEnded(tx, p); err != nil {
		return err
	}
	return putDoc(tx, rec, p)
}

// processEventCodes are the event codes a host agent may report for a process exit.
var processEventCodes = map[api.EventCode]bool{
	api.EventCodeServerProcessInvalidPath:              true,
	api.EventCodeServerProcessSdkInitializationTimeout: true,
	api.EventCodeServerProcessProcessReadyTimeout:      true,
	api.EventCodeServerProcessCrashed:                  true,
	api.EventCodeServerProcessTerminatedUnhealthy:      true,
	api.EventCodeServerProcessForceTerminated:          true,
	api.EventCodeServerProcessProcessExitTimeout:       true,
	api.EventCodeServerProcessSdkInitializationFailed:  true,
}

// markTerminating records, in tx, that a live process is told to terminate now, with the fleet
// event code (and message) of the reason; code "" (fleet deletion, deregistration) adds no
// event. The TerminateProcess push goes into the outbox in the same transaction; undelivered,
// it is given up when the grace period ends, which ends the process all the same.
func (s *Service) markTerminating(tx store.Tx, rec *store.Record, p *processDoc, code api.EventCode, msg string) error {
	return s.setTerminating(tx, rec, p, code, msg, true)
}

// setTerminating is markTerminating, with the push only when push is set: a process whose
// instance the host is shutting down is stopped by the host instead (docs/managed-fleets.md).
func (s *Service) setTerminating(tx store.Tx, rec *store.Record, p *processDoc, code api.EventCode, msg string, push bool) error {
	p.Status, p.TerminateAt, p.Reason = processTerminating, s.nowMillis(), string(code)
	if err := s.withdrawProcess(tx, p); err != nil {
		return err
	}
	if push {
		end := p.TerminateAt + s.hosting.grace.Milliseconds()
		if err := s.enqueue(tx, ProcessAddress(p.FleetID, p.ProcessID), MessageTerminateProcess,
			ProcessTermination{Time: time.UnixMilli(end)}, end); err != nil {
			return err
		}
	}
	if code != "" {
		if err := s.addEvent(tx, p.FleetID, code, msg); err != nil {
			return err
		}
	}
	return putDoc(tx, rec, p)
}

// terminateFleetProcesses marks every INITIALIZING or ACTIVE process of a fleet TERMINATING;
// push says whether each is told so (see setTerminating).
func (s *Service) terminateFleetProcesses(tx store.Tx, fleetID string, push bool) error {
	return s.terminateWhere(tx, fleetID, func(*processDoc) bool { return true }, push)
}

// terminateComputeProcesses is terminateFleetProcesses for the processes of one compute.
func (s *Service) terminateComputeProcesses(tx store.Tx, fleetID, compute string, push bool) error {
	return s.terminateWhere(tx, fleetID, func(p *processDoc) bool { return p.Compute == compute }, push)
}

func (s *Service) terminateWhere(tx store.Tx, fleetID string, match func(*processDoc) bool, push bool) error {
	return eachChild(tx, kindProcess, fleetID, func(r *store.Record, p *processDoc) error {
		if (p.Status != processInitializing && p.Status != processActive) || !match(p) {
			return nil
		}
		return s.setTerminating(tx, r, p, "", "", push)
	})
}

// countProcesses counts a fleet's processes in status.
func countProcesses(tx store.Tx, fleetID, status string) (int, error) {
	n := 0
	err := eachChild(tx, kindProcess, fleetID, func(_ *store.Record, p *processDoc) error {
		if p.Status == status {
			n++
		}
		return nil
	})
	return n, err
}

// AgentProcessReport answers a host agent's heartbeat, which lists the processes it is
// running on compute: ended are those the control plane has already ended (TERMINATED, e.g.
// after a health or ProcessReady timeout whose TerminateProcess the process ignored), which the
// agent must stop; unknown are those that have never connected, which the agent stops once
// they stay unknown for several heartbeats (server-sdk-protocol.md §7.3).
func (s *Service) AgentProcessReport(ctx context.Context, fleetID, compute string, running []string) (ended, unknown []string, err error) {
	ended, unknown = []string{}, []string{}
	err = s.view(ctx, func(tx store.Tx) error {
		for _, id := range running {
			var p processDoc
			_, err := getDoc(tx, kindProcess, processKey(fleetID, id), &p, processNotFound(ProcessRef{fleetID, compute, id}))
			switch {
			case hasErrorCode(err, api.NotFoundException):
				unknown = append(unknown, id)
			case err != nil:
				return err
			case p.Compute == compute && p.Status == processTerminated:
				ended = append(ended, id)
			}
		}
		return nil
	})
	return ended, unknown, err
}
