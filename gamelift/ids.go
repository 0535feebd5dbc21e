package gamelift

import (
	"strings"
	"time"

	"github.com/hoist-gg/hoist/api"
)

// ARN resource types, the part before the slash.
const (
	arnAlias    = "alias"
	arnBuild    = "build"
	arnLocation = "location"
	arnFleet    = "fleet"
)

// ARN resource types of the hosting operations (fleets.go, computes.go).
const (
	arnCompute = "compute"
	arnScript  = "script"
)

// arn returns arn:aws:gamelift:<region>:<account>:<resourceType>/<id>.
func (s *Service) arn(resourceType, id string) string {
	return "arn:aws:gamelift:" + s.region + ":" + s.account + ":" + resourceType + "/" + id
}

// parsedARN is a GameLift ARN split into its parts.
type parsedARN struct {
	Region       string
	Account      string
	ResourceType string
	ID           string
}

// parseARN splits a GameLift ARN, arn:<partition>:gamelift:<region>:<account>:<type>/<id>.
// It reports false when s is not one.
func parseARN(s string) (parsedARN, bool) {
	parts := strings.SplitN(s, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[1] == "" || parts[2] != "gamelift" {
		return parsedARN{}, false
	}
	typ, id, ok := strings.Cut(parts[5], "/")
	if !ok || typ == "" || id == "" {
		return parsedARN{}, false
	}
	return parsedARN{Region: parts[3], Account: parts[4], ResourceType: typ, ID: id}, true
}

// checkOwner reports an *api.Error when a well-formed ARN does not belong to this Region and
// account. The account part may always be empty (GameLift's documented form); a Hoist
// without a configured account accepts any account.
func (s *Service) checkOwner(a parsedARN, raw string) error {
	if a.Region != s.region {
		return api.Errorf(api.InvalidRequestException,
			"ARN %s is in Region %s; this endpoint serves Region %s.", raw, a.Region, s.region)
	}
	if a.Account != "" && s.account != "" && a.Account != s.account {
		return api.Errorf(api.InvalidRequestException,
			"ARN %s belongs to another account.", raw)
	}
	return nil
}

// resolveID turns an "ID or ARN" input into the ID. An ARN must be a GameLift ARN of
// resourceType in this Region; otherwise the answer is InvalidRequestException.
func (s *Service) resolveID(idOrARN, resourceType string) (string, error) {
	if !strings.HasPrefix(idOrARN, "arn:") {
		return idOrARN, nil
	}
	a, ok := parseARN(idOrARN)
	if !ok || a.ResourceType != resourceType {
		return "", api.Errorf(api.InvalidRequestException, "Invalid %s ARN: %s", resourceType, idOrARN)
	}
	if err := s.checkOwner(a, idOrARN); err != nil {
		return "", err
	}
	return a.ID, nil
}

// stamp converts stored Unix milliseconds to an API timestamp.
func stamp(ms int64) *api.Timestamp { return api.Time(time.UnixMilli(ms)) }

// optional returns a pointer to s, or nil when s is empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// FleetIQ ARN resource type and record kinds (fleetiq.go, gameserver.go).
const (
	arnGameServerGroup = "gameservergroup"

	kindGameServerGroup = "gameservergroup"
	// kindGameServer records have ID = game server ID (unique per account), Parent = group.
	kindGameServer = "gameserver"
	// kindGameServerInstance records have ID = "<group>/<instance ID>", Parent = group.
	kindGameServerInstance = "gameserverinstance"
	// kindGameServerSlot records mark claimable game servers: ID = game server ID, Parent =
	// "<group>/<instance ID>/free" or ".../claimed" (see gameserver_claim.go).
	kindGameServerSlot = "gameserverslot"
)
