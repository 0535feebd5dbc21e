package server

import (
	"context"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/console"
	"github.com/hoist-gg/hoist/gamelift"
	"github.com/hoist-gg/hoist/httpapi"
	"github.com/hoist-gg/hoist/internal/clock"
)

// setupConsole builds the web console (docs/console.md) over the same operation handlers as
// the API, without the API's signature check: the console checks its own session cookie.
// Its sessions expire on the wall clock, so moving a dev-mode server's time does not log
// anybody out.
func (s *Server) setupConsole(handlers *api.Handlers, exts []httpapi.Extension, observe func(op, code string, d time.Duration)) *console.Console {
	var keys func(string) (string, bool)
	if !s.cfg.AllowAnyCredentials {
		creds := s.creds
		keys = func(id string) (string, bool) {
			if id == creds.AccessKeyID {
				return creds.SecretAccessKey, true
			}
			return "", false
		}
	}
	apiHandler := httpapi.New(httpapi.Config{Handlers: handlers, Extensions: exts, Logger: s.log, Unavailable: storeUnavailable, Observe: observe})
	return console.New(console.Config{API: apiHandler, Keys: keys, Clock: clock.Real{}, Changes: s.changes, Logger: s.log,
		Extensions: []string{gamelift.ListServerProcessesTarget}})
}

// consoleExtensions are the Hoist read operations outside GameLift's model the console shows;
// the API serves them too.
func consoleExtensions(svc *gamelift.Service) []httpapi.Extension {
	return []httpapi.Extension{{
		Target:   gamelift.ListServerProcessesTarget,
		NewInput: func() any { return new(gamelift.ListServerProcessesInput) },
		Call: func(ctx context.Context, in any) (any, error) {
			return svc.ListServerProcesses(ctx, in.(*gamelift.ListServerProcessesInput))
		},
	}}
}
