package gamelift

import (
	"context"
	"errors"
	"slices"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/gamelift/sessionquery"
	"github.com/hoist-gg/hoist/store"
)

// searchPageMax is the most game sessions one SearchGameSessions page returns, whatever the
// Limit (SearchGameSessions.Limit doc).
const searchPageMax = 20

// gameSessionStatuses are the StatusFilter values DescribeGameSessions accepts.
var gameSessionStatuses = []string{gsActive, gsActivating, gsTerminated, gsTerminating, string(api.GameSessionStatusError)}

// sessionQuery is a DescribeGameSessions or DescribeGameSessionDetails request.
type sessionQuery struct {
	op                     string
	fleet, alias, id       *string
	location, status, next *string
	limit                  *int32
}

// DescribeGameSessions lists game sessions: one by GameSessionId, or those of a fleet (FleetId
// or a SIMPLE alias), optionally in one Location and with one status (StatusFilter), a page at
// a time in creation order.
func (s *Service) DescribeGameSessions(ctx context.Context, in *api.DescribeGameSessionsInput) (*api.DescribeGameSessionsOutput, error) {
	docs, token, err := s.describeSessions(ctx, sessionQuery{op: "DescribeGameSessions", fleet: in.FleetId, alias: in.AliasId,
		id: in.GameSessionId, location: in.Location, status: in.StatusFilter, next: in.NextToken, limit: in.Limit})
	if err != nil {
		return nil, err
	}
	out := &api.DescribeGameSessionsOutput{GameSessions: make([]api.GameSession, len(docs)), NextToken: token}
	for i, d := range docs {
		out.GameSessions[i] = s.apiGameSession(d)
	}
	return out, nil
}

// DescribeGameSessionDetails is DescribeGameSessions with each session's protection policy.
func (s *Service) DescribeGameSessionDetails(ctx context.Context, in *api.DescribeGameSessionDetailsInput) (*api.DescribeGameSessionDetailsOutput, error) {
	docs, token, err := s.describeSessions(ctx, sessionQuery{op: "DescribeGameSessionDetails", fleet: in.FleetId, alias: in.AliasId,
		id: in.GameSessionId, location: in.Location, status: in.StatusFilter, next: in.NextToken, limit: in.Limit})
	if err != nil {
		return nil, err
	}
	out := &api.DescribeGameSessionDetailsOutput{GameSessionDetails: make([]api.GameSessionDetail, len(docs)), NextToken: token}
	for i, d := range docs {
		gs := s.apiGameSession(d)
		pp := api.ProtectionPolicy(d.Protection)
		out.GameSessionDetails[i] = api.GameSessionDetail{GameSession: &gs, ProtectionPolicy: &pp}
	}
	return out, nil
}

func (s *Service) describeSessions(ctx context.Context, q sessionQuery) ([]*gameSessionDoc, *string, error) {
	status := api.Deref(q.status)
	if status != "" && !slices.Contains(gameSessionStatuses, status) {
		return nil, nil, api.Errorf(api.InvalidRequestException,
			"StatusFilter %q is not a game session status: use ACTIVE, ACTIVATING, TERMINATING, TERMINATED or ERROR.", status)
	}
	if q.id != nil {
		d, err := s.readSession(ctx, *q.id)
		if err != nil {
			return nil, nil, err
		}
		if status != "" && d.Status != status {
			return []*gameSessionDoc{}, nil, nil
		}
		return []*gameSessionDoc{d}, nil, nil
	}
	fleetID, err := s.sessionTarget(ctx, q.fleet, q.alias)
	if err != nil {
		return nil, nil, err
	}
	if _, err := s.readFleet(ctx, &fleetID); err != nil {
		return nil, nil, err
	}
	location := api.Deref(q.location)
	hash := filterHash(q.op, fleetID, location, status)
	cursor, err := decodeToken(q.next, hash)
	if err != nil {
		return nil, nil, err
	}
	var page scanned[gameSessionDoc]
	err = s.view(ctx, func(tx store.Tx) error {
		page, err = scanChildren(tx, kindGameSession, fleetID, cursor, pageSize(q.limit), func(d *gameSessionDoc) bool {
			return (location == "" || d.Location == location) && (status == "" || d.Status == status)
		})
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return page.Items, next(page, hash), nil
}

// SearchGameSessions finds ACTIVE game sessions of one fleet (FleetId or a SIMPLE alias),
// optionally in one Location, that match FilterExpression, ordered by SortExpression (creation
// order without one), at most 20 a page. A malformed expression is InvalidRequestException
// saying what is wrong and where. The scan runs over the fleet's ACTIVE sessions in the
// per-node cache, validated against the store's record versions (fleetSessions).
func (s *Service) SearchGameSessions(ctx context.Context, in *api.SearchGameSessionsInput) (*api.SearchGameSessionsOutput, error) {
	filter, sort, err := parseSearch(in)
	if err != nil {
		return nil, err
	}
	fleetID, err := s.sessionTarget(ctx, in.FleetId, in.AliasId)
	if err != nil {
		return nil, err
	}
	if _, err := s.readFleet(ctx, &fleetID); err != nil {
		return nil, err
	}
	location := api.Deref(in.Location)
	hash := filterHash("SearchGameSessions", fleetID, location, filter.String(), sort.String())
	cursor, err := decodeToken(in.NextToken, hash)
	if err != nil {
		return nil, err
	}
	idx, err := s.fleetSessions(ctx, fleetID)
	if err != nil {
		return nil, err
	}
	start := int(max(cursor+1, 0)) // the cursor is the index of the last session returned
	page, more := searchPage(idx.active, location, filter, sort, start, min(pageSize(in.Limit), searchPageMax))
	out := &api.SearchGameSessionsOutput{GameSessions: make([]api.GameSession, len(page))}
	for i, c := range page {
		out.GameSessions[i] = s.apiGameSession(c.doc)
	}
	if more {
		out.NextToken = encodeToken(int64(start+len(page)-1), hash)
	}
	return out, nil
}

// searchPage returns the sessions start to start+n-1 of those in active that are in location
// (any when empty) and match filter, in sort's order (active's without one), and whether more
// follow. Without a sort it stops at the first session past the page.
func searchPage(active []cachedView, location string, filter *sessionquery.Filter, sort *sessionquery.Sort, start, n int) ([]cachedView, bool) {
	keep := func(c cachedView) bool {
		return (location == "" || c.doc.Location == location) && filter.Match(c.view)
	}
	if sort == nil {
		var page []cachedView
		seen := 0
		for _, c := range active {
			if !keep(c) {
				continue
			}
			if seen >= start+n {
				return page, true
			}
			if seen >= start {
				page = append(page, c)
			}
			seen++
		}
		return page, false
	}
	var hits []cachedView
	for _, c := range active {
		if keep(c) {
			hits = append(hits, c)
		}
	}
	slices.SortStableFunc(hits, func(a, b cachedView) int { return sort.Compare(a.view, b.view) })
	end := min(start+n, len(hits))
	if start >= end {
		return nil, false
	}
	return hits[start:end], end < len(hits)
}

// parseSearch compiles a search's expressions; nil when absent.
func parseSearch(in *api.SearchGameSessionsInput) (*sessionquery.Filter, *sessionquery.Sort, error) {
	var filter *sessionquery.Filter
	var sort *sessionquery.Sort
	var err error
	if in.FilterExpression != nil {
		if filter, err = sessionquery.ParseFilter(*in.FilterExpression); err != nil {
			return nil, nil, invalidExpression(err)
		}
	}
	if in.SortExpression != nil {
		if sort, err = sessionquery.ParseSort(*in.SortExpression); err != nil {
			return nil, nil, invalidExpression(err)
		}
	}
	return filter, sort, nil
}

func invalidExpression(err error) error {
	var qe *sessionquery.Error
	if errors.As(err, &qe) {
		return api.Errorf(api.InvalidRequestException, "%s", qe.Error())
	}
	return err
}

// describeUtilization is DescribeFleetUtilization with the game session and player counts of
// each fleet taken from its live sessions: ACTIVE sessions, their current player sessions
// (RESERVED or ACTIVE) and their maximum players.
func (s *Service) describeUtilization(ctx context.Context, in *api.DescribeFleetUtilizationInput) (*api.DescribeFleetUtilizationOutput, error) {
	out, err := s.DescribeFleetUtilization(ctx, in)
	if err != nil {
		return nil, err
	}
	for i := range out.FleetUtilization {
		u := &out.FleetUtilization[i]
		idx, err := s.fleetSessions(ctx, api.Deref(u.FleetId))
		if err != nil {
			return nil, err
		}
		var active, players, maxPlayers int32
		for _, c := range idx.active {
			active, players, maxPlayers = active+1, players+c.doc.Players, maxPlayers+c.doc.Max
		}
		u.ActiveGameSessionCount, u.CurrentPlayerSessionCount, u.MaximumPlayerSessionCount = &active, &players, &maxPlayers
	}
	return out, nil
}

// DescribePlayerSessions lists player sessions selected by exactly one of PlayerSessionId,
// GameSessionId (optionally only those in PlayerSessionStatusFilter) and PlayerId, a page at
// a time in creation order. Limit and NextToken do not apply to PlayerSessionId; the status
// filter applies to GameSessionId only (DescribePlayerSessions doc).
func (s *Service) DescribePlayerSessions(ctx context.Context, in *api.DescribePlayerSessionsInput) (*api.DescribePlayerSessionsOutput, error) {
	n := 0
	for _, sel := range []*string{in.PlayerSessionId, in.GameSessionId, in.PlayerId} {
		if api.Deref(sel) != "" {
			n++
		}
	}
	if n != 1 {
		return nil, api.Errorf(api.InvalidRequestException, "Specify exactly one of PlayerSessionId, GameSessionId and PlayerId.")
	}
	status := api.Deref(in.PlayerSessionStatusFilter)
	if status != "" && !slices.Contains([]string{psReserved, psActive, psCompleted, psTimedOut}, status) {
		return nil, api.Errorf(api.InvalidRequestException,
			"PlayerSessionStatusFilter %q is not a player session status: use RESERVED, ACTIVE, COMPLETED or TIMEDOUT.", status)
	}
	var docs []*playerSessionDoc
	var token *string
	var err error
	switch {
	case in.PlayerSessionId != nil:
		d := new(playerSessionDoc)
		err = s.read(ctx, kindPlayerSession, *in.PlayerSessionId, d, playerSessionNotFound(*in.PlayerSessionId))
		docs = []*playerSessionDoc{d}
	case in.GameSessionId != nil:
		docs, token, err = s.gamePlayers(ctx, *in.GameSessionId, status, in.Limit, in.NextToken)
	default:
		docs, token, err = s.playerHistory(ctx, *in.PlayerId, in.Limit, in.NextToken)
	}
	if err != nil {
		return nil, err
	}
	out := &api.DescribePlayerSessionsOutput{PlayerSessions: make([]api.PlayerSession, len(docs)), NextToken: token}
	for i, d := range docs {
		out.PlayerSessions[i] = s.apiPlayerSession(d)
	}
	return out, nil
}

// gamePlayers pages through the player sessions of a game session.
func (s *Service) gamePlayers(ctx context.Context, gameSessionID, status string, limit *int32, tok *string) ([]*playerSessionDoc, *string, error) {
	gs, err := s.readSession(ctx, gameSessionID)
	if err != nil {
		return nil, nil, err
	}
	hash := filterHash("DescribePlayerSessions/game", gs.Key, status)
	cursor, err := decodeToken(tok, hash)
	if err != nil {
		return nil, nil, err
	}
	var page scanned[playerSessionDoc]
	err = s.view(ctx, func(tx store.Tx) error {
		page, err = scanChildren(tx, kindPlayerSession, gs.Key, cursor, pageSize(limit), func(d *playerSessionDoc) bool {
			return status == "" || d.Status == status
		})
		return err
	})
	return page.Items, next(page, hash), err
}

// playerHistory pages through the player sessions of a player, through the player index.
func (s *Service) playerHistory(ctx context.Context, playerID string, limit *int32, tok *string) ([]*playerSessionDoc, *string, error) {
	hash := filterHash("DescribePlayerSessions/player", playerID)
	cursor, err := decodeToken(tok, hash)
	if err != nil {
		return nil, nil, err
	}
	var docs []*playerSessionDoc
	var token *string
	err = s.view(ctx, func(tx store.Tx) error {
		docs = nil
		recs, err := tx.List(kindPlayerIndex, store.ListOptions{Parent: "p/" + playerID, AfterSeq: max(cursor, 0), Limit: pageSize(limit) + 1})
		if err != nil {
			return err
		}
		token = nil
		if len(recs) > pageSize(limit) {
			recs = recs[:pageSize(limit)]
			token = encodeToken(recs[len(recs)-1].Seq, hash)
		}
		for _, r := range recs {
			d := new(playerSessionDoc)
			if _, err := getDoc(tx, kindPlayerSession, r.ID, d, playerSessionNotFound(r.ID)); err != nil {
				return err
			}
			docs = append(docs, d)
		}
		return nil
	})
	return docs, token, err
}
