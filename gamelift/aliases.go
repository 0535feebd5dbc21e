package gamelift

import (
	"context"
	"errors"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// Routing strategy types as stored.
const (
	routeSimple   = string(api.RoutingStrategyTypeSimple)
	routeTerminal = string(api.RoutingStrategyTypeTerminal)
)

// aliasDoc is an alias as stored.
type aliasDoc struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Route       route  `json:"route"`
	Created     int64  `json:"created"`
	Updated     int64  `json:"updated"`
	tagged
}

// route is an alias's routing strategy: FleetID for SIMPLE, Message for TERMINAL.
type route struct {
	Type    string `json:"type"`
	FleetID string `json:"fleetId,omitempty"`
	Message string `json:"message,omitempty"`
}

func (s *Service) aliasHandlers(h *api.Handlers) {
	h.CreateAlias = s.CreateAlias
	h.DescribeAlias = s.DescribeAlias
	h.ListAliases = s.ListAliases
	h.UpdateAlias = s.UpdateAlias
	h.DeleteAlias = s.DeleteAlias
	h.ResolveAlias = s.ResolveAlias
}

func (s *Service) apiAlias(d *aliasDoc) *api.Alias {
	typ := api.RoutingStrategyType(d.Route.Type)
	return &api.Alias{
		AliasId:     api.String(d.ID),
		Name:        api.String(d.Name),
		AliasArn:    api.String(s.arn(arnAlias, d.ID)),
		Description: optional(d.Description),
		RoutingStrategy: &api.RoutingStrategy{
			Type: &typ, FleetId: optional(d.Route.FleetID), Message: optional(d.Route.Message),
		},
		CreationTime:    stamp(d.Created),
		LastUpdatedTime: stamp(d.Updated),
	}
}

func aliasNotFound(id string) func() error {
	return func() error { return api.Errorf(api.NotFoundException, "Alias %s not found.", id) }
}

// routeOf checks a routing strategy beyond what the model says: SIMPLE needs a FleetId,
// TERMINAL a Message. GameLift keeps only the member the type uses: a FleetId sent with
// TERMINAL is dropped, not refused (and, by symmetry, a Message sent with SIMPLE).
func routeOf(rs *api.RoutingStrategy) (route, error) {
	switch string(api.Deref(rs.Type)) {
	case routeSimple:
		if api.Deref(rs.FleetId) == "" {
			return route{}, api.Errorf(api.InvalidRequestException,
				"RoutingStrategy of type SIMPLE requires a FleetId.")
		}
		return route{Type: routeSimple, FleetID: *rs.FleetId}, nil
	case routeTerminal:
		if api.Deref(rs.Message) == "" {
			return route{}, api.Errorf(api.InvalidRequestException,
				"RoutingStrategy of type TERMINAL requires a Message.")
		}
		return route{Type: routeTerminal, Message: *rs.Message}, nil
	default:
		return route{}, api.Errorf(api.InvalidRequestException,
			"RoutingStrategy requires a Type: SIMPLE or TERMINAL.")
	}
}

// lookupFleet is the one place alias operations learn about fleets: it returns the ARN of the
// fleet fleetID, or the *api.Error to answer when there is no such fleet (NotFoundException;
// a TERMINATED fleet counts as gone).
func (s *Service) lookupFleet(tx store.Tx, fleetID string) (string, error) {
	if _, err := s.liveFleet(tx, fleetID); err != nil {
		return "", err
	}
	return s.arn(arnFleet, fleetID), nil
}

// checkRoute verifies that a SIMPLE route points at an existing fleet.
func (s *Service) checkRoute(tx store.Tx, r route) error {
	if r.Type != routeSimple {
		return nil
	}
	_, err := s.lookupFleet(tx, r.FleetID)
	return err
}

// CreateAlias creates an alias. Names need not be unique.
func (s *Service) CreateAlias(ctx context.Context, in *api.CreateAliasInput) (*api.CreateAliasOutput, error) {
	r, err := routeOf(in.RoutingStrategy)
	if err != nil {
		return nil, err
	}
	tags, err := mergeTags(nil, in.Tags)
	if err != nil {
		return nil, err
	}
	now := s.nowMillis()
	doc := &aliasDoc{ID: "alias-" + s.newID(), Name: api.Deref(in.Name), Description: api.Deref(in.Description),
		Route: r, Created: now, Updated: now, tagged: tagged{Tags: tags}}
	err = s.update(ctx, func(tx store.Tx) error {
		if err := s.checkRoute(tx, r); err != nil {
			return err
		}
		return insertDoc(tx, kindAlias, doc.ID, doc)
	})
	if err != nil {
		return nil, err
	}
	return &api.CreateAliasOutput{Alias: s.apiAlias(doc)}, nil
}

// DescribeAlias returns an alias by ID or ARN: one store read, one small decode.
func (s *Service) DescribeAlias(ctx context.Context, in *api.DescribeAliasInput) (*api.DescribeAliasOutput, error) {
	doc, err := s.readAlias(ctx, api.Deref(in.AliasId))
	if err != nil {
		return nil, err
	}
	return &api.DescribeAliasOutput{Alias: s.apiAlias(doc)}, nil
}

// readAlias loads an alias by ID or ARN in a read-only transaction.
func (s *Service) readAlias(ctx context.Context, idOrARN string) (*aliasDoc, error) {
	id, err := s.resolveID(idOrARN, arnAlias)
	if err != nil {
		return nil, err
	}
	doc := new(aliasDoc)
	if err := s.read(ctx, kindAlias, id, doc, aliasNotFound(id)); err != nil {
		return nil, err
	}
	return doc, nil
}

// ListAliases lists aliases in creation order, optionally only those of a routing type and/or
// with exactly a Name.
func (s *Service) ListAliases(ctx context.Context, in *api.ListAliasesInput) (*api.ListAliasesOutput, error) {
	typ, name := string(api.Deref(in.RoutingStrategyType)), api.Deref(in.Name)
	hash := filterHash("ListAliases", typ, name)
	cursor, err := decodeToken(in.NextToken, hash)
	if err != nil {
		return nil, err
	}
	var page scanned[aliasDoc]
	err = s.view(ctx, func(tx store.Tx) error {
		page, err = scan(tx, kindAlias, cursor, pageSize(in.Limit), func(d *aliasDoc) bool {
			return (typ == "" || d.Route.Type == typ) && (name == "" || d.Name == name)
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.ListAliasesOutput{Aliases: make([]api.Alias, len(page.Items)), NextToken: next(page, hash)}
	for i, d := range page.Items {
		out.Aliases[i] = *s.apiAlias(d)
	}
	return out, nil
}

// UpdateAlias changes an alias's Name, Description and/or RoutingStrategy and stamps
// LastUpdatedTime.
func (s *Service) UpdateAlias(ctx context.Context, in *api.UpdateAliasInput) (*api.UpdateAliasOutput, error) {
	id, err := s.resolveID(api.Deref(in.AliasId), arnAlias)
	if err != nil {
		return nil, err
	}
	var r *route
	if in.RoutingStrategy != nil {
		rr, err := routeOf(in.RoutingStrategy)
		if err != nil {
			return nil, err
		}
		r = &rr
	}
	var doc aliasDoc
	err = s.update(ctx, func(tx store.Tx) error {
		doc = aliasDoc{}
		rec, err := getDoc(tx, kindAlias, id, &doc, aliasNotFound(id))
		if err != nil {
			return err
		}
		if err := s.applyAliasUpdate(tx, &doc, in, r); err != nil {
			return err
		}
		return putDoc(tx, rec, &doc)
	})
	if err != nil {
		return nil, err
	}
	return &api.UpdateAliasOutput{Alias: s.apiAlias(&doc)}, nil
}

func (s *Service) applyAliasUpdate(tx store.Tx, doc *aliasDoc, in *api.UpdateAliasInput, r *route) error {
	if r != nil {
		if err := s.checkRoute(tx, *r); err != nil {
			return err
		}
		doc.Route = *r
	}
	if in.Name != nil {
		doc.Name = *in.Name
	}
	if in.Description != nil {
		doc.Description = *in.Description
	}
	doc.Updated = s.nowMillis()
	return nil
}

// DeleteAlias deletes an alias by ID or ARN.
func (s *Service) DeleteAlias(ctx context.Context, in *api.DeleteAliasInput) (*api.DeleteAliasOutput, error) {
	id, err := s.resolveID(api.Deref(in.AliasId), arnAlias)
	if err != nil {
		return nil, err
	}
	err = s.update(ctx, func(tx store.Tx) error {
		err := tx.Delete(kindAlias, id)
		if errors.Is(err, store.ErrNotFound) {
			return aliasNotFound(id)()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &api.DeleteAliasOutput{}, nil
}

// ResolveAlias returns the fleet a SIMPLE alias points at; a TERMINAL alias answers
// TerminalRoutingStrategyException carrying the alias's message.
func (s *Service) ResolveAlias(ctx context.Context, in *api.ResolveAliasInput) (*api.ResolveAliasOutput, error) {
	id, err := s.resolveID(api.Deref(in.AliasId), arnAlias)
	if err != nil {
		return nil, err
	}
	var out api.ResolveAliasOutput
	err = s.view(ctx, func(tx store.Tx) error {
		var doc aliasDoc
		if _, err := getDoc(tx, kindAlias, id, &doc, aliasNotFound(id)); err != nil {
			return err
		}
		if doc.Route.Type == routeTerminal {
			return &api.Error{Code: api.TerminalRoutingStrategyException, Message: doc.Route.Message}
		}
		fleetARN, err := s.lookupFleet(tx, doc.Route.FleetID)
		if err != nil {
			return err
		}
		out = api.ResolveAliasOutput{FleetId: api.String(doc.Route.FleetID), FleetArn: api.String(fleetARN)}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}
