package gamelift

import (
	"context"
	"errors"
	"sync"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/gamelift/flexmatch"
	"github.com/hoist-gg/hoist/store"
)

// FlexMatch rule sets: named, immutable JSON documents that say how players are grouped into
// matches. A rule set is unique per Region and its ARN's resource part is the name. The body
// is stored verbatim (DescribeMatchmakingRuleSets answers it as given) and parsed with
// flexmatch.Parse; parsed rule sets are cached per Service (ruleSetTx), which is safe because
// a rule set never changes: a deleted and re-created one has a new creation time.

// kindRuleSet holds matchmaking rule sets, with ID = the rule set name.
const kindRuleSet = "mmruleset"

// arnRuleSet is the ARN resource type of matchmaking rule sets.
const arnRuleSet = "matchmakingruleset"

// Limits shared by the rule set and configuration operations: resource names (the model's
// MatchmakingIdStringModel) and the page size of their Describe operations, whose Limit the
// API reference caps at 10.
const (
	maxMatchmakingName     = 128
	maxMatchmakingPageSize = 10
)

// ruleSetDoc is a matchmaking rule set as stored under kindRuleSet.
type ruleSetDoc struct {
	Name string `json:"name"`
	ARN  string `json:"arn"`
	// Body is RuleSetBody exactly as given.
	Body string `json:"body"`
	// Created is the creation time in Unix milliseconds.
	Created int64 `json:"created"`
	tagged
}

// ruleSetCache holds parsed rule sets by name, each with the creation time of the rule set it
// was parsed from; an entry whose time differs from the stored record's is ignored.
type ruleSetCache struct {
	mu      sync.Mutex
	entries map[string]cachedRuleSet
}

// cachedRuleSet is one parsed rule set and the creation time of its record.
type cachedRuleSet struct {
	created int64
	parsed  *flexmatch.RuleSet
}

// newRuleSetCache returns an empty cache.
func newRuleSetCache() *ruleSetCache {
	return &ruleSetCache{entries: map[string]cachedRuleSet{}}
}

// get returns the parsed rule set of name as created at created, or nil.
func (c *ruleSetCache) get(name string, created int64) *flexmatch.RuleSet {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[name]; ok && e.created == created {
		return e.parsed
	}
	return nil
}

// put remembers the parsed rule set of name as created at created.
func (c *ruleSetCache) put(name string, created int64, parsed *flexmatch.RuleSet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[name] = cachedRuleSet{created: created, parsed: parsed}
}

// drop forgets the rule set name (it was deleted).
func (c *ruleSetCache) drop(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, name)
}

func (s *Service) ruleSetHandlers(h *api.Handlers) {
	h.CreateMatchmakingRuleSet = s.CreateMatchmakingRuleSet
	h.DescribeMatchmakingRuleSets = s.DescribeMatchmakingRuleSets
	h.DeleteMatchmakingRuleSet = s.DeleteMatchmakingRuleSet
	h.ValidateMatchmakingRuleSet = s.ValidateMatchmakingRuleSet
}

// ruleSetNotFound answers a rule set name that names no rule set.
func ruleSetNotFound(name string) func() error {
	return func() error {
		return api.Errorf(api.NotFoundException, "Matchmaking rule set %s not found.", name)
	}
}

// ruleSetName turns a rule set name or ARN into the name.
func (s *Service) ruleSetName(nameOrARN string) (string, error) {
	return s.resolveID(nameOrARN, arnRuleSet)
}

// readRuleSetTx reads the rule set named by a name or ARN, or answers NotFoundException.
func (s *Service) readRuleSetTx(tx store.Tx, nameOrARN string) (*store.Record, *ruleSetDoc, error) {
	name, err := s.ruleSetName(nameOrARN)
	if err != nil {
		return nil, nil, err
	}
	doc := &ruleSetDoc{}
	rec, err := getDoc(tx, kindRuleSet, name, doc, ruleSetNotFound(name))
	if err != nil {
		return nil, nil, err
	}
	return rec, doc, nil
}

// ruleSetTx reads the rule set named by a name or ARN and returns it with its parsed form,
// parsing the body only when the cache has no entry for this rule set. The parsed rule set is
// shared: callers must not change it.
func (s *Service) ruleSetTx(tx store.Tx, nameOrARN string) (*ruleSetDoc, *flexmatch.RuleSet, error) {
	_, doc, err := s.readRuleSetTx(tx, nameOrARN)
	if err != nil {
		return nil, nil, err
	}
	if parsed := s.ruleSets.get(doc.Name, doc.Created); parsed != nil {
		return doc, parsed, nil
	}
	parsed, err := flexmatch.Parse([]byte(doc.Body))
	if err != nil {
		// Only a parser stricter than the one that accepted the body gets here.
		return nil, nil, api.Errorf(api.InvalidRequestException,
			"Matchmaking rule set %s no longer parses; create it again: %s", doc.Name, err.Error())
	}
	s.ruleSets.put(doc.Name, doc.Created, parsed)
	return doc, parsed, nil
}

// parseRuleSetBody parses a rule set body; a body the parser refuses is an
// InvalidRequestException carrying the parser's message.
func parseRuleSetBody(body string) (*flexmatch.RuleSet, error) {
	parsed, err := flexmatch.Parse([]byte(body))
	if err != nil {
		return nil, api.Errorf(api.InvalidRequestException, "%s", err.Error())
	}
	return parsed, nil
}

// checkMatchmakingName checks a rule set or configuration name given as member: 1 to 128 of
// [a-zA-Z0-9-.] (the model's pattern, and what keeps the name usable as an ARN part).
func checkMatchmakingName(member, name string) error {
	if name == "" {
		return api.Errorf(api.InvalidRequestException, "%s is required.", member)
	}
	if len(name) > maxMatchmakingName {
		return api.Errorf(api.InvalidRequestException, "%s %s is longer than %d characters.", member, name, maxMatchmakingName)
	}
	for _, r := range name {
		ok := r == '-' || r == '.' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')
		if !ok {
			return api.Errorf(api.InvalidRequestException, "%s %q may hold only letters, digits, '-' and '.'.", member, name)
		}
	}
	return nil
}

// matchmakingPageSize is the page size of the matchmaking Describe operations: Limit, at
// most maxMatchmakingPageSize, which is also the default.
func matchmakingPageSize(limit *int32) int {
	if limit == nil || *limit <= 0 {
		return maxMatchmakingPageSize
	}
	return min(int(*limit), maxMatchmakingPageSize)
}

// CreateMatchmakingRuleSet creates a rule set. Its name is unique in the Region; a body the
// parser refuses is an InvalidRequestException with the parser's message.
func (s *Service) CreateMatchmakingRuleSet(ctx context.Context, in *api.CreateMatchmakingRuleSetInput) (*api.CreateMatchmakingRuleSetOutput, error) {
	name := api.Deref(in.Name)
	if err := checkMatchmakingName("Name", name); err != nil {
		return nil, err
	}
	tags, err := mergeTags(nil, in.Tags)
	if err != nil {
		return nil, err
	}
	parsed, err := parseRuleSetBody(api.Deref(in.RuleSetBody))
	if err != nil {
		return nil, err
	}
	doc := &ruleSetDoc{Name: name, ARN: s.arn(arnRuleSet, name), Body: api.Deref(in.RuleSetBody),
		Created: s.nowMillis(), tagged: tagged{Tags: tags}}
	err = s.update(ctx, func(tx store.Tx) error {
		err := insertDoc(tx, kindRuleSet, name, doc)
		if errors.Is(err, store.ErrExists) {
			return api.Errorf(api.InvalidRequestException, "Matchmaking rule set %s already exists.", name)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	s.ruleSets.put(name, doc.Created, parsed)
	return &api.CreateMatchmakingRuleSetOutput{RuleSet: apiRuleSet(doc)}, nil
}

// DescribeMatchmakingRuleSets lists rule sets in creation order, or the named ones (names or
// ARNs) in the order given; a name that names no rule set is NotFoundException.
func (s *Service) DescribeMatchmakingRuleSets(ctx context.Context, in *api.DescribeMatchmakingRuleSetsInput) (*api.DescribeMatchmakingRuleSetsOutput, error) {
	var out api.DescribeMatchmakingRuleSetsOutput
	var err error
	if len(in.Names) > 0 {
		out.RuleSets, out.NextToken, err = pageNames(s, ctx, in.Names, filterHash("DescribeMatchmakingRuleSets", in.Names...),
			in.NextToken, matchmakingPageSize(in.Limit), func(tx store.Tx, name string) (api.MatchmakingRuleSet, error) {
				_, r, err := s.readRuleSetTx(tx, name)
				if err != nil {
					return api.MatchmakingRuleSet{}, err
				}
				return *apiRuleSet(r), nil
			})
	} else {
		out.RuleSets, out.NextToken, err = pageKind(s, ctx, kindRuleSet, filterHash("DescribeMatchmakingRuleSets"), in.NextToken,
			matchmakingPageSize(in.Limit), func(*ruleSetDoc) bool { return true }, func(r *ruleSetDoc) api.MatchmakingRuleSet { return *apiRuleSet(r) })
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteMatchmakingRuleSet deletes a rule set that no matchmaking configuration uses.
func (s *Service) DeleteMatchmakingRuleSet(ctx context.Context, in *api.DeleteMatchmakingRuleSetInput) (*api.DeleteMatchmakingRuleSetOutput, error) {
	var name string
	err := s.update(ctx, func(tx store.Tx) error {
		_, r, err := s.readRuleSetTx(tx, api.Deref(in.Name))
		if err != nil {
			return err
		}
		name = r.Name
		if err := ruleSetUnused(tx, r.Name); err != nil {
			return err
		}
		return tx.Delete(kindRuleSet, r.Name)
	})
	if err != nil {
		return nil, err
	}
	s.ruleSets.drop(name)
	return &api.DeleteMatchmakingRuleSetOutput{}, nil
}

// ruleSetUnused answers InvalidRequestException, naming one user, when a matchmaking
// configuration uses the rule set name.
func ruleSetUnused(tx store.Tx, name string) error {
	page, err := scan(tx, kindMatchConfig, startCursor, 1, func(c *matchConfigDoc) bool { return c.RuleSetName == name })
	if err != nil {
		return err
	}
	if len(page.Items) > 0 {
		return api.Errorf(api.InvalidRequestException,
			"Matchmaking rule set %s is used by matchmaking configuration %s; delete or update the configuration first.",
			name, page.Items[0].Name)
	}
	return nil
}

// ValidateMatchmakingRuleSet checks a rule set body as CreateMatchmakingRuleSet would. A valid
// body answers Valid true; an invalid one is an InvalidRequestException carrying the reason
// (docs/flexmatch.md explains the choice).
func (s *Service) ValidateMatchmakingRuleSet(_ context.Context, in *api.ValidateMatchmakingRuleSetInput) (*api.ValidateMatchmakingRuleSetOutput, error) {
	if _, err := parseRuleSetBody(api.Deref(in.RuleSetBody)); err != nil {
		return nil, err
	}
	return &api.ValidateMatchmakingRuleSetOutput{Valid: api.Bool(true)}, nil
}

// apiRuleSet converts a stored rule set.
func apiRuleSet(r *ruleSetDoc) *api.MatchmakingRuleSet {
	return &api.MatchmakingRuleSet{RuleSetName: api.String(r.Name), RuleSetArn: api.String(r.ARN),
		RuleSetBody: api.String(r.Body), CreationTime: stamp(r.Created)}
}
