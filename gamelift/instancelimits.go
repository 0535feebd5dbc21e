package gamelift

import (
	"sort"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// Instance limits: every local instance, of every fleet, type and location, runs on one host,
// so how many more instances of a type can start is what is left of the host's memory and
// CPUs after the live ones (DescribeEC2InstanceLimits; docs/managed-fleets.md, "Resources").

// HostCapacity is what the host that runs the local instances has.
type HostCapacity struct {
	// MemoryBytes is the host's memory; 0 when unknown.
	MemoryBytes int64
	// CPUs is the host's CPU count; 0 when unknown.
	CPUs int
}

// CPUOversubscription is how many instance vCPUs one host CPU backs. Game servers mostly wait
// for their players and each instance's CPU quota caps it at its type's vCPUs, so CPUs are
// shared four ways. Memory is never oversubscribed: an instance that used its type's memory
// on a host that does not have it would be killed.
const CPUOversubscription = 4

// hostUse is what instances take of the host.
type hostUse struct {
	memory int64
	vcpus  int
}

// footprint is what an instance of t takes of h: its type's memory and vCPUs, each at most the
// host's whole (an instance larger than the host takes all of it, and may then run alone).
func (h HostCapacity) footprint(t InstanceType) hostUse {
	u := hostUse{memory: t.MemoryBytes(), vcpus: t.VCPUs}
	if h.MemoryBytes > 0 {
		u.memory = min(u.memory, h.MemoryBytes)
	}
	if h.CPUs > 0 {
		u.vcpus = min(u.vcpus, h.CPUs*CPUOversubscription)
	}
	return u
}

// fit is how many more instances of t the host holds when used is taken: as many as fit in its
// free memory and in its free CPUs times CPUOversubscription, at most DefaultInstanceLimit
// (also when the capacity or the type is unknown).
func (h HostCapacity) fit(t InstanceType, used hostUse) int32 {
	n := int64(DefaultInstanceLimit)
	f := h.footprint(t)
	if h.MemoryBytes > 0 && f.memory > 0 {
		n = min(n, (h.MemoryBytes-used.memory)/f.memory)
	}
	if h.CPUs > 0 && f.vcpus > 0 {
		n = min(n, int64((h.CPUs*CPUOversubscription-used.vcpus)/f.vcpus))
	}
	return int32(max(n, 0))
}

// census is what the live (PENDING and ACTIVE) local instances are.
type census struct {
	used    hostUse                     // what they take of the host
	byLoc   map[string]map[string]int32 // how many, by location and instance type
	byFleet map[string]map[string]int32 // how many, by fleet and location
	host    HostCapacity
}

// takeCensus counts, in tx, the live instances of every managed fleet.
func (s *Service) takeCensus(tx store.Tx) (*census, error) {
	types := map[string]string{}
	if err := eachRecord(tx, kindManaged, func(_ *store.Record, m *managedDoc) { types[m.FleetID] = m.InstanceType }); err != nil {
		return nil, err
	}
	c := &census{byLoc: map[string]map[string]int32{}, byFleet: map[string]map[string]int32{}, host: s.host}
	err := eachRecord(tx, kindEC2Instance, func(_ *store.Record, d *ec2InstanceDoc) {
		if d.Status == ec2Terminating {
			return
		}
		typ := types[d.FleetID]
		t, _ := LookupInstanceType(typ)
		f := s.host.footprint(t)
		c.used.memory, c.used.vcpus = c.used.memory+f.memory, c.used.vcpus+f.vcpus
		addCount(c.byLoc, d.Location, typ)
		addCount(c.byFleet, d.FleetID, d.Location)
	})
	return c, err
}

func addCount(m map[string]map[string]int32, a, b string) {
	if m[a] == nil {
		m[a] = map[string]int32{}
	}
	m[a][b]++
}

// limit is the InstanceLimit of typ in loc: the instances of the type that run there and as
// many more as the host holds, at most DefaultInstanceLimit.
func (c *census) limit(typ, loc string) int32 {
	t, _ := LookupInstanceType(typ)
	return min(DefaultInstanceLimit, c.byLoc[loc][typ]+c.host.fit(t, c.used))
}

// checkRoom refuses to start more instances of type typ (by location) than the host holds
// besides the live ones c counted (LimitExceededException, as GameLift answers past an
// account's instance limit).
func (c *census) checkRoom(typ string, more map[string]int32) error {
	t, _ := LookupInstanceType(typ)
	var total int32
	locs := make([]string, 0, len(more))
	for loc, n := range more {
		total += max(n, 0)
		locs = append(locs, loc)
	}
	sort.Strings(locs)
	fit := c.host.fit(t, c.used)
	for _, loc := range locs {
		if n := more[loc]; n > 0 && (c.byLoc[loc][typ]+n > DefaultInstanceLimit || total > fit) {
			return api.Errorf(api.LimitExceededException,
				"%d more %s instances do not fit on this host: %d run in %s and the limit is %d (DescribeEC2InstanceLimits).",
				n, typ, c.byLoc[loc][typ], loc, c.limit(typ, loc))
		}
	}
	return nil
}

// checkCapacityRoom refuses, in tx, to raise a fleet's live instances in loc to desired past
// what the host holds (census.checkRoom).
func (s *Service) checkCapacityRoom(tx store.Tx, fleetID, typ, loc string, desired int32) error {
	c, err := s.takeCensus(tx)
	if err != nil {
		return err
	}
	return c.checkRoom(typ, map[string]int32{loc: desired - c.byFleet[fleetID][loc]})
}

// checkFleetRoom refuses, in tx, a new fleet whose first instances the host does not hold.
func (s *Service) checkFleetRoom(tx store.Tx, m *managedDoc) error {
	c, err := s.takeCensus(tx)
	if err != nil {
		return err
	}
	more := map[string]int32{}
	for loc, want := range m.Capacity {
		more[loc] = want.Desired
	}
	return c.checkRoom(m.InstanceType, more)
}

// roomFor lowers an autoscaling decision for loc to what the host holds, never below the
// current desired count: the autoscaler stops at the instance limit as it stops at MaxSize.
// limited says whether it had to.
func (s *Service) roomFor(tx store.Tx, fleetID, typ, loc string, cur, next capacityDoc) (capacityDoc, bool, error) {
	if next.Desired <= cur.Desired {
		return next, false, nil
	}
	c, err := s.takeCensus(tx)
	if err != nil {
		return next, false, err
	}
	t, _ := LookupInstanceType(typ)
	most := c.byFleet[fleetID][loc] + min(c.host.fit(t, c.used), DefaultInstanceLimit-c.byLoc[loc][typ])
	if next.Desired <= most {
		return next, false, nil
	}
	next.Desired = max(cur.Desired, most)
	return next, true, nil
}
