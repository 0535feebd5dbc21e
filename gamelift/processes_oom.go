package gamelift

import (
	"context"
	"fmt"

	"github.com/hoist-gg/hoist/api"
)

// InstanceProcessOutOfMemory records that the kernel's OOM killer ended a server process of a
// local instance because the instance's processes reached the memory of its type (limitBytes),
// as an out-of-memory on an EC2 instance ends one. The process becomes TERMINATED like any
// crashed one, with the fleet event SERVER_PROCESS_CRASHED (GameLift has no code of its own
// for it) whose message names the out-of-memory kill and the limit.
func (s *Service) InstanceProcessOutOfMemory(ctx context.Context, fleetID, instanceID, processID string, limitBytes int64) error {
	why := fmt.Sprintf("killed out of memory: the instance's processes reached its instance type's memory limit of %s.", formatBytes(limitBytes))
	return s.processExit(ctx, ProcessRef{FleetID: fleetID, ComputeName: instanceID, ProcessID: processID},
		api.EventCodeServerProcessCrashed, why)
}

// formatBytes writes n in MiB, or GiB when it is a whole number of them.
func formatBytes(n int64) string {
	if n >= 1<<30 && n%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}
