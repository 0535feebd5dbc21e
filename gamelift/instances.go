package gamelift

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/store"
)

// kindEC2Instance is an instance of a managed fleet, stored with Parent = the fleet ID. The
// instance is also registered as the fleet's compute (compute name = instance ID), so its
// processes authenticate with compute auth tokens exactly as on an Anywhere fleet.
const kindEC2Instance = "ec2instance"

// Instance statuses (GameLift's InstanceStatus). An instance is PENDING from its creation
// until its processes are being launched, then ACTIVE; TERMINATING once it is to stop, until
// the host has removed it.
const (
	ec2Pending     = string(api.InstanceStatusPending)
	ec2Active      = string(api.InstanceStatusActive)
	ec2Terminating = string(api.InstanceStatusTerminating)
)

// ec2InstanceDoc is one instance as stored.
type ec2InstanceDoc struct {
	ID       string `json:"id"`
	FleetID  string `json:"fleetId"`
	Location string `json:"location"`
	IP       string `json:"ip"`
	Status   string `json:"status"`
	Created  int64  `json:"created"`
	DNS      string `json:"dns,omitempty"` // fleets with a GENERATED certificate only
	// Owner is the ID of the server node that runs the instance (instances_owner.go).
	Owner string `json:"owner,omitempty"`
}

func (s *Service) instanceHandlers(h *api.Handlers) {
	h.DescribeInstances = s.DescribeInstances
	h.GetInstanceAccess = s.GetInstanceAccess
}

// newInstanceID returns an EC2-style instance ID: "i-" and 17 hexadecimal digits.
func newInstanceID() string {
	b := make([]byte, 9)
	_, _ = rand.Read(b)
	return "i-" + hex.EncodeToString(b)[:17]
}

// loopbackAddress is the address of the n-th local instance slot: 127.0.0.2 onwards
// (127.0.0.1 is the server), 253 per /24, all inside 127.0.0.0/8, which Linux routes to lo.
func loopbackAddress(n int) string {
	return fmt.Sprintf("127.0.%d.%d", n/253, n%253+2)
}

// reconcileFleet starts and stops instances, in tx, so that every location of a managed fleet
// has its desired number of live (PENDING or ACTIVE) instances. A fleet in ERROR, DELETING or
// TERMINATED gets none. Surplus instances are chosen among those without a protected live
// game session, those hosting fewest sessions first. Their processes are marked TERMINATING
// without a TerminateProcess push: the host stops the instance with SIGTERM (the instance
// shutting down), and a process told both ways would end twice (docs/managed-fleets.md).
func (s *Service) reconcileFleet(tx store.Tx, f *fleetDoc, m *managedDoc) error {
	if f.Status == fleetError || f.Status == fleetDeleting || f.Status == fleetTerminated {
		return nil
	}
	live := map[string][]*store.Record{}
	docs := map[string]*ec2InstanceDoc{}
	err := eachChild(tx, kindEC2Instance, f.ID, func(r *store.Record, d *ec2InstanceDoc) error {
		if d.Status != ec2Terminating {
			live[d.Location] = append(live[d.Location], r)
			docs[r.ID] = d
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, loc := range sortedLocations(m) {
		want := int(m.Capacity[loc].Desired)
		for n := len(live[loc]); n < want; n++ {
			if err := s.addInstance(tx, f, loc); err != nil {
				return err
			}
		}
		if extra := len(live[loc]) - want; extra > 0 {
			if err := s.retireInstances(tx, f, live[loc], docs, extra); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedLocations(m *managedDoc) []string {
	locs := make([]string, 0, len(m.Capacity))
	for l := range m.Capacity {
		locs = append(locs, l)
	}
	sort.Strings(locs)
	return locs
}

// addInstance creates a PENDING instance with the lowest free address (instanceAddress) (and, on a
// fleet with a GENERATED certificate, a DNS name) and registers it as a compute of the fleet.
func (s *Service) addInstance(tx store.Tx, f *fleetDoc, loc string) error {
	fleetID := f.ID
	used := map[string]bool{}
	if err := eachRecord(tx, kindEC2Instance, func(_ *store.Record, d *ec2InstanceDoc) { used[d.IP] = true }); err != nil {
		return err
	}
	ip := ""
	for n := 0; ip == ""; n++ {
		a := s.instanceAddress(n)
		if a == "" {
			return api.Errorf(api.LimitExceededException, "This host has no address left for another instance.")
		}
		if !used[a] {
			ip = a
		}
	}
	owner, err := s.pickOwner(tx)
	if err != nil {
		return err
	}
	d := &ec2InstanceDoc{ID: newInstanceID(), FleetID: fleetID, Location: loc, IP: ip, Status: ec2Pending, Created: s.nowMillis(), Owner: owner}
	if f.Certificate == certificateGenerated {
		d.DNS = InstanceDNSName(d.ID, loc)
	}
	if err := insertChild(tx, kindEC2Instance, d.ID, fleetID, d); err != nil {
		return err
	}
	c := &computeDoc{FleetID: fleetID, Name: d.ID, IPAddress: ip, DNSName: d.DNS, Location: loc, Status: computeActive, Created: d.Created}
	return insertChild(tx, kindCompute, computeKey(fleetID, d.ID), fleetID, c)
}

// retireInstances marks n of the live instances TERMINATING, never one that hosts a protected
// live game session, preferring those with the fewest live sessions and then the newest.
func (s *Service) retireInstances(tx store.Tx, f *fleetDoc, live []*store.Record, docs map[string]*ec2InstanceDoc, n int) error {
	sessions, protected, err := instanceSessions(tx, f.ID)
	if err != nil {
		return err
	}
	var cands []*store.Record
	for _, r := range live {
		if !protected[r.ID] {
			cands = append(cands, r)
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := docs[cands[i].ID], docs[cands[j].ID]
		if sessions[a.ID] != sessions[b.ID] {
			return sessions[a.ID] < sessions[b.ID]
		}
		return a.Created > b.Created
	})
	for _, r := range cands[:min(n, len(cands))] {
		d := docs[r.ID]
		d.Status = ec2Terminating
		if err := putDoc(tx, r, d); err != nil {
			return err
		}
		if err := s.terminateComputeProcesses(tx, f.ID, d.ID, false); err != nil {
			return err
		}
	}
	return nil
}

// instanceSessions counts the live game sessions on each compute of a fleet and notes the
// computes hosting a protected one.
func instanceSessions(tx store.Tx, fleetID string) (map[string]int, map[string]bool, error) {
	count, protected := map[string]int{}, map[string]bool{}
	err := eachChild(tx, kindGameSession, fleetID, func(_ *store.Record, g *gameSessionDoc) error {
		if g.live() {
			count[g.Compute]++
			if g.Protection == string(api.ProtectionPolicyFullProtection) {
				protected[g.Compute] = true
			}
		}
		return nil
	})
	return count, protected, err
}

// DescribeInstances lists a managed fleet's instances, optionally one instance or one
// location's, a page at a time. Anywhere fleets have computes, not instances
// (InvalidRequestException, as GameLift answers).
func (s *Service) DescribeInstances(ctx context.Context, in *api.DescribeInstancesInput) (*api.DescribeInstancesOutput, error) {
	f, err := s.readFleet(ctx, in.FleetId)
	if err != nil {
		return nil, err
	}
	if f.ComputeType != string(api.ComputeTypeEc2) {
		return nil, api.Errorf(api.InvalidRequestException,
			"DescribeInstances is not supported for fleets with ComputeType %s; use ListCompute.", f.ComputeType)
	}
	var m managedDoc
	if err := s.read(ctx, kindManaged, f.ID, &m, managedNotFound(f.ID)); err != nil {
		return nil, err
	}
	id, loc := api.Deref(in.InstanceId), api.Deref(in.Location)
	hash := filterHash("DescribeInstances", f.ID, id, loc)
	cursor, err := decodeToken(in.NextToken, hash)
	if err != nil {
		return nil, err
	}
	var page scanned[ec2InstanceDoc]
	err = s.view(ctx, func(tx store.Tx) error {
		page, err = scanChildren(tx, kindEC2Instance, f.ID, cursor, pageSize(in.Limit), func(d *ec2InstanceDoc) bool {
			return (id == "" || d.ID == id) && (loc == "" || d.Location == loc)
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.DescribeInstancesOutput{Instances: make([]api.Instance, len(page.Items)), NextToken: next(page, hash)}
	for i, d := range page.Items {
		out.Instances[i] = s.apiEC2Instance(d, &m)
	}
	return out, nil
}

func (s *Service) apiEC2Instance(d *ec2InstanceDoc, m *managedDoc) api.Instance {
	status, it := api.InstanceStatus(d.Status), api.EC2InstanceType(m.InstanceType)
	inst := api.Instance{InstanceId: api.String(d.ID), FleetId: api.String(d.FleetID),
		FleetArn: api.String(s.arn(arnFleet, d.FleetID)), IpAddress: api.String(d.IP), DnsName: optional(d.DNS), Location: api.String(d.Location),
		Status: &status, Type: &it, CreationTime: stamp(d.Created)}
	if m.OperatingSystem != "" {
		os := api.OperatingSystem(m.OperatingSystem)
		inst.OperatingSystem = &os
	}
	return inst
}

// GetInstanceAccess answers for a local instance: it is a directory and a loopback address
// on the Hoist server's own host, reached as the operator who runs Hoist, so there are no
// credentials to hand out. The answer carries the instance's address and operating system and
// no Credentials (docs/managed-fleets.md).
func (s *Service) GetInstanceAccess(ctx context.Context, in *api.GetInstanceAccessInput) (*api.GetInstanceAccessOutput, error) {
	f, err := s.readFleet(ctx, in.FleetId)
	if err != nil {
		return nil, err
	}
	id := api.Deref(in.InstanceId)
	var d ec2InstanceDoc
	var m managedDoc
	err = s.view(ctx, func(tx store.Tx) error {
		if _, err := getDoc(tx, kindManaged, f.ID, &m, managedNotFound(f.ID)); err != nil {
			return err
		}
		_, err := getDoc(tx, kindEC2Instance, id, &d, func() error {
			return api.Errorf(api.NotFoundException, "Instance %s not found in fleet %s.", id, f.ID)
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	if d.FleetID != f.ID {
		return nil, api.Errorf(api.NotFoundException, "Instance %s not found in fleet %s.", id, f.ID)
	}
	inst := s.apiEC2Instance(&d, &m)
	return &api.GetInstanceAccessOutput{InstanceAccess: &api.InstanceAccess{FleetId: api.String(f.ID),
		InstanceId: api.String(d.ID), IpAddress: api.String(d.IP), OperatingSystem: inst.OperatingSystem}}, nil
}

// Stages of an instance's setup that the host reports (InstanceProgress). While the fleet is
// being created, the first instance to reach a stage moves the fleet to the matching status.
const (
	// StageDownloading: the build is being copied into the sandbox and its install script run.
	StageDownloading = fleetDownloading
	// StageValidating: the build is installed; the launch paths are being checked.
	StageValidating = fleetValidating
	// StageBuilding: the build is verified; the instance's processes are being set up.
	StageBuilding = fleetBuilding
	// StageActivating: a server process has been launched on the instance.
	StageActivating = fleetActivating
)

// LocalInstance is what the host needs to run one instance: where to get the build, what to
// run, and whether the instance is to run at all.
type LocalInstance struct {
	FleetID, InstanceID, Location, IPAddress string
	// Status is PENDING, ACTIVE or TERMINATING (stop it and call InstanceGone).
	Status string
	// Build is the fleet's build files (path, layout, install script, operating system).
	Build BuildFiles
	// ServerProcesses is the fleet's runtime configuration.
	ServerProcesses []api.ServerProcess
	// DNSName is the instance's DNS name; set only when the fleet's CertificateConfiguration
	// is GENERATED: the host then issues the fleet certificate (CertificateHosts) into the
	// sandbox and reports its path with InstanceCertificate.
	DNSName string
	// Resources are the limits of the fleet's instance type its install script and processes
	// run under (zero when the type is unknown).
	Resources InstanceResources
	// Inbound are the fleet's EC2InboundPermissions, which the host enforces when configured
	// to (docs/isolation-network.md).
	Inbound []api.IpPermission
}

// InstanceTerminating is the LocalInstance status of an instance that is to stop (and of every
// instance of a fleet being deleted or in ERROR).
const InstanceTerminating = ec2Terminating

// LocalInstances lists every instance of every managed fleet, for the host to converge on.
func (s *Service) LocalInstances(ctx context.Context) ([]LocalInstance, error) {
	var out []LocalInstance
	err := s.view(ctx, func(tx store.Tx) error {
		out = nil
		fleets, builds, resources := map[string]*fleetDoc{}, map[string]*buildDoc{}, map[string]*managedDoc{}
		return eachRecord(tx, kindEC2Instance, func(_ *store.Record, d *ec2InstanceDoc) {
			if s.node != "" && d.Owner != s.node {
				return // another node runs it
			}
			f := fleets[d.FleetID]
			if f == nil {
				f = new(fleetDoc)
				if _, err := getDoc(tx, kindFleet, d.FleetID, f, func() error { return errSkip }); err != nil {
					f.Status = fleetTerminated
				}
				fleets[d.FleetID] = f
			}
			b := builds[f.BuildID]
			if b == nil {
				b = new(buildDoc)
				_, _ = getDoc(tx, kindBuild, f.BuildID, b, func() error { return errSkip })
				builds[f.BuildID] = b
			}
			m := resources[d.FleetID]
			if m == nil {
				m = managedOf(tx, d.FleetID)
				resources[d.FleetID] = m
			}
			li := LocalInstance{FleetID: d.FleetID, InstanceID: d.ID, Location: d.Location, IPAddress: d.IP,
				DNSName: d.DNS, Status: d.Status, Build: *b.files(), ServerProcesses: runtimeOf(f).ServerProcesses,
				Resources: resourcesOf(m.InstanceType), Inbound: m.Inbound}
			if f.Status == fleetDeleting || f.Status == fleetTerminated || f.Status == fleetError {
				li.Status = ec2Terminating
			}
			out = append(out, li)
		})
	})
	return out, err
}

// managedOf is, in tx, the managed-fleet part of a fleet (empty when it has none).
func managedOf(tx store.Tx, fleetID string) *managedDoc {
	var m managedDoc
	if _, err := getDoc(tx, kindManaged, fleetID, &m, func() error { return errSkip }); err != nil {
		return &managedDoc{}
	}
	return &m
}

// InstanceProgress records that an instance reached a setup stage (Stage*). A fleet that is
// being created moves forward to the matching status, with its FLEET_STATE_* event; from
// StageActivating on, the instance is ACTIVE.
func (s *Service) InstanceProgress(ctx context.Context, fleetID, instanceID, stage string) error {
	return s.asOwner(ctx, instanceID, func(tx store.Tx) error {
		if stage == StageActivating {
			if err := s.setInstanceStatus(tx, instanceID, ec2Pending, ec2Active); err != nil {
				return err
			}
		}
		return s.advanceFleet(tx, fleetID, stage)
	})
}

// setInstanceStatus moves an instance from one status to another; otherwise nothing.
func (s *Service) setInstanceStatus(tx store.Tx, instanceID, from, to string) error {
	var d ec2InstanceDoc
	rec, err := getDoc(tx, kindEC2Instance, instanceID, &d, func() error { return errSkip })
	if err != nil || d.Status != from {
		return ignoreSkip(err)
	}
	d.Status = to
	return putDoc(tx, rec, &d)
}

// advanceFleet moves a fleet being created forward to status, with its event.
func (s *Service) advanceFleet(tx store.Tx, fleetID, status string) error {
	var f fleetDoc
	rec, err := getDoc(tx, kindFleet, fleetID, &f, func() error { return errSkip })
	if err != nil {
		return ignoreSkip(err)
	}
	cur, creating := fleetProgress[f.Status]
	if !creating || fleetProgress[status] <= cur {
		return nil
	}
	f.Status = status
	if err := s.addEvent(tx, fleetID, api.EventCode("FLEET_STATE_"+status),
		fmt.Sprintf("Fleet %s status changed to %s.", fleetID, status)); err != nil {
		return err
	}
	return putDoc(tx, rec, &f)
}

// InstanceEvent adds an informational event (e.g. FLEET_CREATION_EXTRACTING_BUILD) to a
// fleet's log on behalf of the host.
func (s *Service) InstanceEvent(ctx context.Context, fleetID string, code api.EventCode, msg string) error {
	return s.update(ctx, func(tx store.Tx) error { return s.addEvent(tx, fleetID, code, msg) })
}

// InstanceFailed records that an instance's setup failed, with GameLift's event code for the
// step (FLEET_BINARY_DOWNLOAD_FAILED, FLEET_VALIDATION_LAUNCH_PATH_NOT_FOUND, ...). The
// instance is to stop. A fleet that was being created goes to ERROR (FLEET_STATE_ERROR), as
// GameLift's does; an ACTIVE fleet keeps running and gets a replacement instance.
func (s *Service) InstanceFailed(ctx context.Context, fleetID, instanceID string, code api.EventCode, msg string) error {
	return s.asOwner(ctx, instanceID, func(tx store.Tx) error {
		if err := s.addEvent(tx, fleetID, code, msg); err != nil {
			return err
		}
		for _, from := range []string{ec2Pending, ec2Active} {
			if err := s.setInstanceStatus(tx, instanceID, from, ec2Terminating); err != nil {
				return err
			}
		}
		var f fleetDoc
		rec, err := getDoc(tx, kindFleet, fleetID, &f, func() error { return errSkip })
		if err != nil {
			return ignoreSkip(err)
		}
		if _, creating := fleetProgress[f.Status]; creating && f.Status != fleetActive {
			f.Status = fleetError
			if err := s.addEvent(tx, fleetID, api.EventCodeFleetStateError,
				fmt.Sprintf("Fleet %s status changed to ERROR: %s", fleetID, msg)); err != nil {
				return err
			}
			if err := s.terminateFleetProcesses(tx, fleetID, false); err != nil {
				return err
			}
		}
		return putDoc(tx, rec, &f)
	})
}

// InstanceGone records that the host has stopped an instance and removed its sandbox: the
// instance, its compute and its tokens are deleted, and the fleet's capacity is reconciled
// (a failed instance of an ACTIVE fleet is replaced).
func (s *Service) InstanceGone(ctx context.Context, fleetID, instanceID string) error {
	return s.asOwner(ctx, instanceID, func(tx store.Tx) error {
		if err := deleteIfThere(tx, kindEC2Instance, instanceID); err != nil {
			return err
		}
		if err := deleteIfThere(tx, kindCompute, computeKey(fleetID, instanceID)); err != nil {
			return err
		}
		if err := deleteTokens(tx, fleetID, instanceID); err != nil {
			return err
		}
		return s.reconcileByID(tx, fleetID)
	})
}

// reconcileByID reads a managed fleet and reconciles its instances.
func (s *Service) reconcileByID(tx store.Tx, fleetID string) error {
	var f fleetDoc
	var m managedDoc
	if _, err := getDoc(tx, kindFleet, fleetID, &f, func() error { return errSkip }); err != nil {
		return ignoreSkip(err)
	}
	if _, err := getDoc(tx, kindManaged, fleetID, &m, func() error { return errSkip }); err != nil {
		return ignoreSkip(err)
	}
	return s.reconcileFleet(tx, &f, &m)
}

// InstanceAuthToken issues a compute auth token for an instance's processes, as
// GetComputeAuthToken does for a registered compute.
func (s *Service) InstanceAuthToken(ctx context.Context, fleetID, instanceID string) (string, time.Time, error) {
	out, err := s.GetComputeAuthToken(ctx, &api.GetComputeAuthTokenInput{FleetId: api.String(fleetID), ComputeName: api.String(instanceID)})
	if err != nil {
		return "", time.Time{}, err
	}
	return api.Deref(out.AuthToken), out.ExpirationTimestamp.Time, nil
}

// AdmitProcess admits a server process connecting with a compute auth token: as
// AuthenticateProcess for an ACTIVE fleet, and also while a managed fleet is BUILDING or
// ACTIVATING, since its first process's ProcessReady is what makes it ACTIVE. (The second
// transaction also accepts ACTIVE: the fleet may have activated between the two.)
func (s *Service) AdmitProcess(ctx context.Context, ref ProcessRef, authToken string) error {
	err := s.AuthenticateProcess(ctx, ref, authToken)
	if !hasErrorCode(err, api.InvalidFleetStatusException) {
		return err
	}
	return s.update(ctx, func(tx store.Tx) error {
		if err := s.checkToken(tx, ref.FleetID, ref.ComputeName, authToken); err != nil {
			return err
		}
		var f fleetDoc
		if _, err := getDoc(tx, kindFleet, ref.FleetID, &f, fleetNotFound(ref.FleetID)); err != nil {
			return err
		}
		if f.Status != fleetBuilding && f.Status != fleetActivating && f.Status != fleetActive { // ACTIVE: it just activated
			return api.Errorf(api.InvalidFleetStatusException, "Fleet %s is in status %s.", f.ID, f.Status)
		}
		var p processDoc
		rec, err := getDoc(tx, kindProcess, processKey(ref.FleetID, ref.ProcessID), &p, processNotFound(ref))
		switch {
		case err == nil && (p.Compute != ref.ComputeName || p.Status == processTerminated):
			return api.Errorf(api.InvalidRequestException, "Server process %s cannot connect again.", ref.ProcessID)
		case err == nil:
			p.Connected = true
			return putDoc(tx, rec, &p)
		case !hasErrorCode(err, api.NotFoundException):
			return err
		}
		return insertChild(tx, kindProcess, processKey(ref.FleetID, ref.ProcessID), ref.FleetID, &processDoc{
			FleetID: ref.FleetID, Compute: ref.ComputeName, ProcessID: ref.ProcessID,
			Status: processInitializing, Connected: true, ConnectedAt: s.nowMillis()})
	})
}

// ManagedProcessReady records that a process of a managed fleet called ProcessReady: a fleet
// that is ACTIVATING (or earlier) becomes ACTIVE (FLEET_STATE_ACTIVE). Anything else is left
// as it is.
func (s *Service) ManagedProcessReady(ctx context.Context, fleetID string) error {
	var f fleetDoc
	if err := s.read(ctx, kindFleet, fleetID, &f, func() error { return errSkip }); err != nil {
		return ignoreSkip(err)
	}
	if _, creating := fleetProgress[f.Status]; !creating || f.Status == fleetActive {
		return nil
	}
	return s.update(ctx, func(tx store.Tx) error { return s.advanceFleet(tx, fleetID, fleetActive) })
}

// InstanceMonitor is the loop of managed fleets: it activates fleets whose first process is
// ready (in case the ProcessReady call's own activation was lost) and reconciles every fleet's
// instances with its capacity (retrying scale-down held back by protected game sessions).
type InstanceMonitor struct{ s *Service }

// InstanceMonitor returns the loop of managed fleets.
func (s *Service) InstanceMonitor() *InstanceMonitor { return &InstanceMonitor{s: s} }

// Step runs one pass: instances without a live owner get one, then every fleet is
// reconciled.
func (m *InstanceMonitor) Step(ctx context.Context) error {
	if err := m.s.assignOwners(ctx); err != nil {
		return err
	}
	var ids []string
	err := m.s.view(ctx, func(tx store.Tx) error {
		ids = nil
		return eachRecord(tx, kindManaged, func(_ *store.Record, d *managedDoc) { ids = append(ids, d.FleetID) })
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := m.stepFleet(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

func (m *InstanceMonitor) stepFleet(ctx context.Context, id string) error {
	return m.s.update(ctx, func(tx store.Tx) error {
		var f fleetDoc
		if _, err := getDoc(tx, kindFleet, id, &f, func() error { return errSkip }); err != nil {
			return ignoreSkip(err)
		}
		if f.Status == fleetActivating {
			if n, err := countProcesses(tx, id, processActive); err != nil {
				return err
			} else if n > 0 {
				if err := m.s.advanceFleet(tx, id, fleetActive); err != nil {
					return err
				}
			}
		}
		return m.s.reconcileByID(tx, id)
	})
}

// Run steps the monitor on a ticker of the service's clock until ctx ends.
func (m *InstanceMonitor) Run(ctx context.Context, interval time.Duration, onError func(error)) {
	clock.Every(ctx, m.s.clock, interval, m.Step, onError)
}
