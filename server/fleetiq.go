package server

import (
	"context"

	"github.com/hoist-gg/hoist/gamelift"
	"github.com/hoist-gg/hoist/httpapi"
)

// fleetIQExtensions are the Hoist operations outside GameLift's model that FleetIQ needs.
func fleetIQExtensions(svc *gamelift.Service) []httpapi.Extension {
	return []httpapi.Extension{{
		Target:   gamelift.SetGameServerInstanceStatusTarget,
		NewInput: func() any { return new(gamelift.SetGameServerInstanceStatusInput) },
		Call: func(ctx context.Context, in any) (any, error) {
			return svc.SetGameServerInstanceStatus(ctx, in.(*gamelift.SetGameServerInstanceStatusInput))
		},
	}}
}
