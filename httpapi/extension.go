package httpapi

import (
	"net/http"

	"github.com/hoist-gg/hoist/api"
)

// Extension is an operation outside GameLift's model that Hoist serves over awsJson1_1 only,
// e.g. Hoist.SetGameServerInstanceStatus. It is authenticated, decoded (JSON into NewInput's
// value), logged and answered exactly like a GameLift operation; api.Validate applies to
// input types that implement it.
type Extension struct {
	// Target is the full X-Amz-Target value, e.g. "Hoist.SetGameServerInstanceStatus". It
	// must not start with "GameLift.".
	Target string
	// NewInput returns a new zero input (a pointer to a struct).
	NewInput func() any
	// Call handles a decoded input.
	Call api.HandlerFunc
}

// addExtensions puts the extensions into the operation table under their targets.
func (s *server) addExtensions(exts []Extension) {
	for _, e := range exts {
		s.ops[e.Target] = &operation{name: e.Target, newInput: e.NewInput, call: e.Call, implemented: true}
		s.extTargets[e.Target] = true
	}
}

// extensionTarget returns r's X-Amz-Target when it names an extension, else "".
func (s *server) extensionTarget(r *http.Request) string {
	if t := r.Header[headerTarget]; len(t) > 0 && s.extTargets[t[0]] {
		return t[0]
	}
	return ""
}
