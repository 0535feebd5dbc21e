package gamelift

import (
	"context"
	"errors"
	"slices"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// FlexMatch matchmaking configurations: a matchmaker's settings (its rule set, timeouts,
// acceptance, and in WITH_QUEUE mode the queues that place its matches). A configuration is
// unique per Region and its ARN's resource part is the name.

// Record kinds of matchmaking.
const (
	// kindMatchConfig holds matchmaking configurations, with ID = the configuration name.
	kindMatchConfig = "mmconfig"
	// kindMatchTicket holds matchmaking tickets: Parent = the configuration name, and a JSON
	// document with a "status" field (the ticket code owns the rest of it).
	kindMatchTicket = "mmticket"
)

// arnMatchConfig is the ARN resource type of matchmaking configurations.
const arnMatchConfig = "matchmakingconfiguration"

// Configuration limits, from the API reference (operations.md §2.23).
const (
	minMatchRequestTimeout    = 1
	maxMatchRequestTimeout    = 43200
	minMatchAcceptanceTimeout = 1
	maxMatchAcceptanceTimeout = 600
	maxMatchDescription       = 1024
	maxMatchCustomEventData   = 256
	maxMatchGameSessionData   = 4096
)

// matchConfigDoc is a matchmaking configuration as stored under kindMatchConfig. Other
// matchmaking code (tickets, the matcher) reads it.
type matchConfigDoc struct {
	Name        string `json:"name"`
	ARN         string `json:"arn"`
	Description string `json:"description,omitempty"`
	// RuleSetName and RuleSetARN name the rule set; it exists as long as the configuration
	// uses it (DeleteMatchmakingRuleSet refuses otherwise).
	RuleSetName string `json:"ruleSetName"`
	RuleSetARN  string `json:"ruleSetArn"`
	// RequestTimeout and AcceptanceTimeout are in seconds; AcceptanceTimeout is 0 when it was
	// never given (it is required while AcceptanceRequired is true).
	RequestTimeout     int32 `json:"requestTimeout"`
	AcceptanceTimeout  int32 `json:"acceptanceTimeout,omitempty"`
	AcceptanceRequired bool  `json:"acceptanceRequired"`
	// Queues are the game session queue ARNs, in the order given.
	Queues            []string `json:"queues,omitempty"`
	AdditionalPlayers int32    `json:"additionalPlayers,omitempty"`
	// BackfillMode is an api.BackfillMode, FlexMatchMode an api.FlexMatchMode.
	BackfillMode       string         `json:"backfillMode"`
	FlexMatchMode      string         `json:"flexMatchMode"`
	CustomEventData    string         `json:"customEventData,omitempty"`
	NotificationTarget string         `json:"notificationTarget,omitempty"`
	GameProps          []gameProperty `json:"gameProps,omitempty"`
	GameSessionData    string         `json:"gameSessionData,omitempty"`
	// Created is the creation time in Unix milliseconds.
	Created int64 `json:"created"`
	tagged
}

func (s *Service) matchConfigHandlers(h *api.Handlers) {
	h.CreateMatchmakingConfiguration = s.CreateMatchmakingConfiguration
	h.DescribeMatchmakingConfigurations = s.DescribeMatchmakingConfigurations
	h.UpdateMatchmakingConfiguration = s.UpdateMatchmakingConfiguration
	h.DeleteMatchmakingConfiguration = s.DeleteMatchmakingConfiguration
}

// matchConfigNotFound answers a configuration name that names no configuration.
func matchConfigNotFound(name string) func() error {
	return func() error {
		return api.Errorf(api.NotFoundException, "Matchmaking configuration %s not found.", name)
	}
}

// matchConfigName turns a configuration name or ARN into the name.
func (s *Service) matchConfigName(nameOrARN string) (string, error) {
	return s.resolveID(nameOrARN, arnMatchConfig)
}

// matchConfigTx reads the configuration named by a name or ARN, or answers NotFoundException.
func (s *Service) matchConfigTx(tx store.Tx, nameOrARN string) (*store.Record, *matchConfigDoc, error) {
	name, err := s.matchConfigName(nameOrARN)
	if err != nil {
		return nil, nil, err
	}
	c := &matchConfigDoc{}
	rec, err := getDoc(tx, kindMatchConfig, name, c, matchConfigNotFound(name))
	if err != nil {
		return nil, nil, err
	}
	return rec, c, nil
}

// CreateMatchmakingConfiguration creates a configuration. Its name is unique in the Region;
// FlexMatchMode defaults to WITH_QUEUE and BackfillMode to MANUAL.
func (s *Service) CreateMatchmakingConfiguration(ctx context.Context, in *api.CreateMatchmakingConfigurationInput) (*api.CreateMatchmakingConfigurationOutput, error) {
	name := api.Deref(in.Name)
	if err := checkCreateMatchConfig(in); err != nil {
		return nil, err
	}
	tags, err := mergeTags(nil, in.Tags)
	if err != nil {
		return nil, err
	}
	c := &matchConfigDoc{Name: name, ARN: s.arn(arnMatchConfig, name), Created: s.nowMillis(),
		BackfillMode: string(api.BackfillModeManual), FlexMatchMode: string(api.FlexMatchModeWithQueue),
		tagged: tagged{Tags: tags}}
	err = s.update(ctx, func(tx store.Tx) error {
		if err := s.applyMatchConfig(tx, c, matchConfigSettings(*in)); err != nil {
			return err
		}
		err := insertDoc(tx, kindMatchConfig, name, c)
		if errors.Is(err, store.ErrExists) {
			return api.Errorf(api.InvalidRequestException, "Matchmaking configuration %s already exists.", name)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &api.CreateMatchmakingConfigurationOutput{Configuration: apiMatchConfig(c)}, nil
}

// checkCreateMatchConfig checks the name and the members CreateMatchmakingConfiguration
// requires (UpdateMatchmakingConfiguration does not).
func checkCreateMatchConfig(in *api.CreateMatchmakingConfigurationInput) error {
	if err := checkMatchmakingName("Name", api.Deref(in.Name)); err != nil {
		return err
	}
	switch {
	case in.RequestTimeoutSeconds == nil:
		return api.Errorf(api.InvalidRequestException, "RequestTimeoutSeconds is required.")
	case in.AcceptanceRequired == nil:
		return api.Errorf(api.InvalidRequestException, "AcceptanceRequired is required.")
	case in.RuleSetName == nil:
		return api.Errorf(api.InvalidRequestException, "RuleSetName is required.")
	}
	return nil
}

// matchConfigSettings is the part of CreateMatchmakingConfiguration's input that
// UpdateMatchmakingConfiguration shares: both go through applyMatchConfig.
func matchConfigSettings(in api.CreateMatchmakingConfigurationInput) *api.UpdateMatchmakingConfigurationInput {
	return &api.UpdateMatchmakingConfigurationInput{Name: in.Name, Description: in.Description,
		GameSessionQueueArns: in.GameSessionQueueArns, RequestTimeoutSeconds: in.RequestTimeoutSeconds,
		AcceptanceTimeoutSeconds: in.AcceptanceTimeoutSeconds, AcceptanceRequired: in.AcceptanceRequired,
		RuleSetName: in.RuleSetName, NotificationTarget: in.NotificationTarget,
		AdditionalPlayerCount: in.AdditionalPlayerCount, CustomEventData: in.CustomEventData,
		GameProperties: in.GameProperties, GameSessionData: in.GameSessionData,
		BackfillMode: in.BackfillMode, FlexMatchMode: in.FlexMatchMode}
}

// applyMatchConfig applies every setting in (a member left out keeps its value; a list given
// replaces the list, so an empty one clears it), then checks the result as a whole.
func (s *Service) applyMatchConfig(tx store.Tx, c *matchConfigDoc, in *api.UpdateMatchmakingConfigurationInput) error {
	if err := applyMatchTimeouts(c, in); err != nil {
		return err
	}
	if err := applyMatchInfo(c, in); err != nil {
		return err
	}
	if err := s.applyMatchHosting(tx, c, in); err != nil {
		return err
	}
	if in.RuleSetName != nil {
		r, _, err := s.ruleSetTx(tx, *in.RuleSetName)
		if err != nil {
			return err
		}
		c.RuleSetName, c.RuleSetARN = r.Name, r.ARN
	}
	return s.checkMatchConfig(tx, c)
}

// applyMatchTimeouts applies RequestTimeoutSeconds, AcceptanceTimeoutSeconds and
// AcceptanceRequired.
func applyMatchTimeouts(c *matchConfigDoc, in *api.UpdateMatchmakingConfigurationInput) error {
	if t := in.RequestTimeoutSeconds; t != nil {
		if *t < minMatchRequestTimeout || *t > maxMatchRequestTimeout {
			return api.Errorf(api.InvalidRequestException, "RequestTimeoutSeconds must be between %d and %d; got %d.",
				minMatchRequestTimeout, maxMatchRequestTimeout, *t)
		}
		c.RequestTimeout = *t
	}
	if t := in.AcceptanceTimeoutSeconds; t != nil {
		if *t < minMatchAcceptanceTimeout || *t > maxMatchAcceptanceTimeout {
			return api.Errorf(api.InvalidRequestException, "AcceptanceTimeoutSeconds must be between %d and %d; got %d.",
				minMatchAcceptanceTimeout, maxMatchAcceptanceTimeout, *t)
		}
		c.AcceptanceTimeout = *t
	}
	if in.AcceptanceRequired != nil {
		c.AcceptanceRequired = *in.AcceptanceRequired
	}
	return nil
}

// applyMatchInfo applies Description, CustomEventData and NotificationTarget.
func applyMatchInfo(c *matchConfigDoc, in *api.UpdateMatchmakingConfigurationInput) error {
	if err := checkMaxLen("Description", in.Description, maxMatchDescription); err != nil {
		return err
	}
	if err := checkMaxLen("CustomEventData", in.CustomEventData, maxMatchCustomEventData); err != nil {
		return err
	}
	if t := in.NotificationTarget; t != nil && *t != "" && !isSNSTopicARN(*t) {
		return api.Errorf(api.InvalidRequestException, "NotificationTarget %s is not an SNS topic ARN.", *t)
	}
	setIfGiven(&c.Description, in.Description)
	setIfGiven(&c.CustomEventData, in.CustomEventData)
	setIfGiven(&c.NotificationTarget, in.NotificationTarget)
	return nil
}

// applyMatchHosting applies the members about game sessions: FlexMatchMode, BackfillMode,
// GameSessionQueueArns, AdditionalPlayerCount, GameProperties and GameSessionData.
func (s *Service) applyMatchHosting(tx store.Tx, c *matchConfigDoc, in *api.UpdateMatchmakingConfigurationInput) error {
	if err := applyMatchModes(c, in); err != nil {
		return err
	}
	if in.GameSessionQueueArns != nil {
		queues, err := s.matchQueues(tx, in.GameSessionQueueArns)
		if err != nil {
			return err
		}
		c.Queues = queues
	}
	if n := in.AdditionalPlayerCount; n != nil {
		if *n < 0 {
			return api.Errorf(api.InvalidRequestException, "AdditionalPlayerCount must be 0 or more; got %d.", *n)
		}
		c.AdditionalPlayers = *n
	}
	if in.GameProperties != nil {
		props, err := matchGameProperties(in.GameProperties)
		if err != nil {
			return err
		}
		c.GameProps = props
	}
	if err := checkMaxLen("GameSessionData", in.GameSessionData, maxMatchGameSessionData); err != nil {
		return err
	}
	setIfGiven(&c.GameSessionData, in.GameSessionData)
	return nil
}

// matchGameProperties checks GameProperties (at most 16) and returns them as stored; a key
// given twice keeps its last value.
func matchGameProperties(in []api.GameProperty) ([]gameProperty, error) {
	if len(in) > maxGameProperties {
		return nil, api.Errorf(api.InvalidRequestException, "GameProperties holds at most %d properties; got %d.",
			maxGameProperties, len(in))
	}
	return mergeProperties(nil, in)
}

// applyMatchModes applies FlexMatchMode and BackfillMode, refusing values outside the enums.
func applyMatchModes(c *matchConfigDoc, in *api.UpdateMatchmakingConfigurationInput) error {
	if m := in.FlexMatchMode; m != nil {
		if *m != api.FlexMatchModeStandalone && *m != api.FlexMatchModeWithQueue {
			return api.Errorf(api.InvalidRequestException, "FlexMatchMode must be STANDALONE or WITH_QUEUE; got %s.", *m)
		}
		c.FlexMatchMode = string(*m)
	}
	if m := in.BackfillMode; m != nil {
		if *m != api.BackfillModeAutomatic && *m != api.BackfillModeManual {
			return api.Errorf(api.InvalidRequestException, "BackfillMode must be AUTOMATIC or MANUAL; got %s.", *m)
		}
		c.BackfillMode = string(*m)
	}
	return nil
}

// matchQueues checks GameSessionQueueArns: game session queue ARNs of this Region, each
// naming a queue that exists, each listed once. It returns them in canonical form.
func (s *Service) matchQueues(tx store.Tx, in []string) ([]string, error) {
	out := make([]string, 0, len(in))
	for _, raw := range in {
		a, ok := parseARN(raw)
		if !ok || a.ResourceType != arnQueue {
			return nil, api.Errorf(api.InvalidRequestException, "GameSessionQueueArns: %q is not a game session queue ARN.", raw)
		}
		if err := s.checkOwner(a, raw); err != nil {
			return nil, err
		}
		if _, _, err := s.readQueueTx(tx, a.ID); err != nil {
			return nil, err
		}
		arn := s.arn(arnQueue, a.ID)
		if slices.Contains(out, arn) {
			return nil, api.Errorf(api.InvalidRequestException, "GameSessionQueueArns lists %s more than once.", raw)
		}
		out = append(out, arn)
	}
	return out, nil
}

// checkMaxLen answers InvalidRequestException when a given string member is longer than most.
func checkMaxLen(member string, v *string, most int) error {
	if v != nil && len(*v) > most {
		return api.Errorf(api.InvalidRequestException, "%s is %d characters long; the most is %d.", member, len(*v), most)
	}
	return nil
}

// setIfGiven sets *dst to *v when v is not nil.
func setIfGiven(dst *string, v *string) {
	if v != nil {
		*dst = *v
	}
}

// checkMatchConfig checks a configuration as a whole after an update: the FlexMatch mode
// against the hosting members, acceptance, and the room AdditionalPlayerCount leaves.
func (s *Service) checkMatchConfig(tx store.Tx, c *matchConfigDoc) error {
	if err := checkMatchMode(c); err != nil {
		return err
	}
	if c.AcceptanceRequired && c.AcceptanceTimeout == 0 {
		return api.Errorf(api.InvalidRequestException,
			"AcceptanceTimeoutSeconds is required when AcceptanceRequired is true.")
	}
	if c.AdditionalPlayers == 0 {
		return nil
	}
	_, parsed, err := s.ruleSetTx(tx, c.RuleSetName)
	if err != nil {
		return err
	}
	most := 0
	for _, t := range parsed.Teams {
		most += t.MaxPlayers * max(t.Quantity, 1)
	}
	if int(c.AdditionalPlayers) >= most {
		return api.Errorf(api.InvalidRequestException,
			"AdditionalPlayerCount %d must be less than the %d players rule set %s's teams hold.", c.AdditionalPlayers, most, c.RuleSetName)
	}
	return nil
}

// checkMatchMode checks the hosting members against FlexMatchMode: WITH_QUEUE needs a queue;
// STANDALONE refuses every member about game sessions (operations.md §2.23, flexmatch.md §2.4).
func checkMatchMode(c *matchConfigDoc) error {
	if c.FlexMatchMode == string(api.FlexMatchModeWithQueue) {
		if len(c.Queues) == 0 {
			return api.Errorf(api.InvalidRequestException,
				"GameSessionQueueArns needs at least one queue ARN when FlexMatchMode is WITH_QUEUE.")
		}
		return nil
	}
	refuse := func(member string, v any) error {
		return api.Errorf(api.InvalidRequestException, "%s cannot be %v when FlexMatchMode is STANDALONE.", member, v)
	}
	switch {
	case len(c.Queues) > 0:
		return refuse("GameSessionQueueArns", c.Queues)
	case c.AdditionalPlayers > 0:
		return refuse("AdditionalPlayerCount", c.AdditionalPlayers)
	case c.BackfillMode == string(api.BackfillModeAutomatic):
		return refuse("BackfillMode", c.BackfillMode)
	case len(c.GameProps) > 0:
		return refuse("GameProperties", "set")
	case c.GameSessionData != "":
		return refuse("GameSessionData", "set")
	}
	return nil
}

// DescribeMatchmakingConfigurations lists configurations in creation order, or the named ones
// (names or ARNs) in the order given, optionally only those using RuleSetName. Names that name
// no configuration are left out, as GameLift documents.
func (s *Service) DescribeMatchmakingConfigurations(ctx context.Context, in *api.DescribeMatchmakingConfigurationsInput) (*api.DescribeMatchmakingConfigurationsOutput, error) {
	ruleSet := ""
	if in.RuleSetName != nil {
		name, err := s.ruleSetName(*in.RuleSetName)
		if err != nil {
			return nil, err
		}
		ruleSet = name
	}
	keep := func(c *matchConfigDoc) bool { return ruleSet == "" || c.RuleSetName == ruleSet }
	if len(in.Names) > 0 {
		return s.describeNamedMatchConfigs(ctx, in, ruleSet, keep)
	}
	var out api.DescribeMatchmakingConfigurationsOutput
	var err error
	out.Configurations, out.NextToken, err = pageKind(s, ctx, kindMatchConfig, filterHash("DescribeMatchmakingConfigurations", ruleSet),
		in.NextToken, matchmakingPageSize(in.Limit), keep, func(c *matchConfigDoc) api.MatchmakingConfiguration { return *apiMatchConfig(c) })
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// describeNamedMatchConfigs pages through the named configurations that exist and that keep
// accepts; the token's cursor is the index of the first name the next page starts from.
func (s *Service) describeNamedMatchConfigs(ctx context.Context, in *api.DescribeMatchmakingConfigurationsInput, ruleSet string,
	keep func(*matchConfigDoc) bool) (*api.DescribeMatchmakingConfigurationsOutput, error) {
	hash := filterHash("DescribeMatchmakingConfigurations", append([]string{ruleSet}, in.Names...)...)
	cursor, err := decodeToken(in.NextToken, hash)
	if err != nil {
		return nil, err
	}
	limit := matchmakingPageSize(in.Limit)
	out := &api.DescribeMatchmakingConfigurationsOutput{}
	err = s.view(ctx, func(tx store.Tx) error {
		out.Configurations, out.NextToken = []api.MatchmakingConfiguration{}, nil
		for i := int(max(cursor, 0)); i < len(in.Names); i++ {
			c, err := s.findMatchConfigTx(tx, in.Names[i])
			if err != nil {
				return err
			}
			if c == nil || !keep(c) {
				continue
			}
			if len(out.Configurations) == limit {
				out.NextToken = encodeToken(int64(i), hash)
				return nil
			}
			out.Configurations = append(out.Configurations, *apiMatchConfig(c))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// findMatchConfigTx reads the configuration named by a name or ARN; nil when there is none.
func (s *Service) findMatchConfigTx(tx store.Tx, nameOrARN string) (*matchConfigDoc, error) {
	_, c, err := s.matchConfigTx(tx, nameOrARN)
	var e *api.Error
	if errors.As(err, &e) && e.Code == api.NotFoundException {
		return nil, nil
	}
	return c, err
}

// UpdateMatchmakingConfiguration changes the settings given; the others keep their values.
// The result is checked as a whole, as on create.
func (s *Service) UpdateMatchmakingConfiguration(ctx context.Context, in *api.UpdateMatchmakingConfigurationInput) (*api.UpdateMatchmakingConfigurationOutput, error) {
	var c *matchConfigDoc
	err := s.update(ctx, func(tx store.Tx) error {
		rec, doc, err := s.matchConfigTx(tx, api.Deref(in.Name))
		if err != nil {
			return err
		}
		if err := s.applyMatchConfig(tx, doc, in); err != nil {
			return err
		}
		c = doc
		if err := putDoc(tx, rec, doc); err != nil {
			return err
		}
		return s.tellMatchmaker(tx, configNote+doc.Name) // its pool follows a new rule set
	})
	if err != nil {
		return nil, err
	}
	return &api.UpdateMatchmakingConfigurationOutput{Configuration: apiMatchConfig(c)}, nil
}

// DeleteMatchmakingConfiguration deletes a configuration. GameLift refuses while the
// configuration is "being used in any active matchmaking tickets": InvalidRequestException.
func (s *Service) DeleteMatchmakingConfiguration(ctx context.Context, in *api.DeleteMatchmakingConfigurationInput) (*api.DeleteMatchmakingConfigurationOutput, error) {
	err := s.update(ctx, func(tx store.Tx) error {
		_, c, err := s.matchConfigTx(tx, api.Deref(in.Name))
		if err != nil {
			return err
		}
		active, err := activeMatchTickets(tx, c.Name)
		if err != nil {
			return err
		}
		if active > 0 {
			return api.Errorf(api.InvalidRequestException,
				"Matchmaking configuration %s has %d active matchmaking tickets; delete it once they have ended.", c.Name, active)
		}
		return tx.Delete(kindMatchConfig, c.Name)
	})
	if err != nil {
		return nil, err
	}
	return &api.DeleteMatchmakingConfigurationOutput{}, nil
}

// ticketStatus is the part of a stored matchmaking ticket this file reads.
type ticketStatus struct {
	Status string `json:"status"`
}

// activeMatchTickets counts the tickets of configuration name that have not ended.
func activeMatchTickets(tx store.Tx, name string) (int, error) {
	n := 0
	err := eachChild(tx, kindMatchTicket, name, func(_ *store.Record, t *ticketStatus) error {
		switch api.MatchmakingConfigurationStatus(t.Status) {
		case api.MatchmakingConfigurationStatusCompleted, api.MatchmakingConfigurationStatusFailed,
			api.MatchmakingConfigurationStatusCancelled, api.MatchmakingConfigurationStatusTimedOut:
		default:
			n++
		}
		return nil
	})
	return n, err
}

// apiMatchConfig converts a stored configuration.
func apiMatchConfig(c *matchConfigDoc) *api.MatchmakingConfiguration {
	mode, backfill := api.FlexMatchMode(c.FlexMatchMode), api.BackfillMode(c.BackfillMode)
	out := &api.MatchmakingConfiguration{Name: api.String(c.Name), ConfigurationArn: api.String(c.ARN),
		Description: optional(c.Description), RuleSetName: api.String(c.RuleSetName), RuleSetArn: api.String(c.RuleSetARN),
		RequestTimeoutSeconds: api.Int32(c.RequestTimeout), AcceptanceRequired: api.Bool(c.AcceptanceRequired),
		GameSessionQueueArns:  append(make([]string, 0, len(c.Queues)), c.Queues...),
		AdditionalPlayerCount: api.Int32(c.AdditionalPlayers), BackfillMode: &backfill, FlexMatchMode: &mode,
		CustomEventData: optional(c.CustomEventData), NotificationTarget: optional(c.NotificationTarget),
		GameSessionData: optional(c.GameSessionData), CreationTime: stamp(c.Created),
		GameProperties: make([]api.GameProperty, len(c.GameProps))}
	if c.AcceptanceTimeout != 0 {
		out.AcceptanceTimeoutSeconds = api.Int32(c.AcceptanceTimeout)
	}
	for i, p := range c.GameProps {
		out.GameProperties[i] = api.GameProperty{Key: api.String(p.Key), Value: api.String(p.Value)}
	}
	return out
}
