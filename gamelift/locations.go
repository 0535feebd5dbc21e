package gamelift

import (
	"context"
	"errors"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// locationDoc is a custom location as stored; the record ID is its name.
type locationDoc struct {
	Name    string `json:"name"`
	Created int64  `json:"created"`
	tagged
}

func (s *Service) locationHandlers(h *api.Handlers) {
	h.CreateLocation = s.CreateLocation
	h.ListLocations = s.ListLocations
	h.DeleteLocation = s.DeleteLocation
}

func (s *Service) locationModel(name string) api.LocationModel {
	return api.LocationModel{LocationName: api.String(name), LocationArn: api.String(s.arn(arnLocation, name))}
}

func locationNotFound(name string) func() error {
	return func() error { return api.Errorf(api.NotFoundException, "Location %s not found.", name) }
}

// CreateLocation creates a custom location (an Anywhere location). Its name, which the model
// requires to start with "custom-", must not be taken.
func (s *Service) CreateLocation(ctx context.Context, in *api.CreateLocationInput) (*api.CreateLocationOutput, error) {
	name := api.Deref(in.LocationName)
	tags, err := mergeTags(nil, in.Tags)
	if err != nil {
		return nil, err
	}
	doc := &locationDoc{Name: name, Created: s.nowMillis(), tagged: tagged{Tags: tags}}
	err = s.update(ctx, func(tx store.Tx) error {
		return insertDoc(tx, kindLocation, name, doc)
	})
	if errors.Is(err, store.ErrExists) {
		return nil, api.Errorf(api.ConflictException, "Location %s already exists.", name)
	}
	if err != nil {
		return nil, err
	}
	m := s.locationModel(name)
	return &api.CreateLocationOutput{Location: &m}, nil
}

// ListLocations lists the AWS location Hoist has, its home Region, followed by the custom
// locations in creation order. Filters narrow the list to AWS or CUSTOM locations.
func (s *Service) ListLocations(ctx context.Context, in *api.ListLocationsInput) (*api.ListLocationsOutput, error) {
	wantAWS, wantCustom := locationFilters(in.Filters)
	hash := filterHash("ListLocations", boolKey(wantAWS), boolKey(wantCustom))
	cursor, err := decodeToken(in.NextToken, hash)
	if err != nil {
		return nil, err
	}
	limit := pageSize(in.Limit)
	out := &api.ListLocationsOutput{Locations: []api.LocationModel{}}
	if wantAWS && cursor < 0 {
		out.Locations = append(out.Locations, api.LocationModel{LocationName: api.String(s.region)})
		limit--
		cursor = 0
	}
	if !wantCustom {
		return out, nil
	}
	var page scanned[locationDoc]
	err = s.view(ctx, func(tx store.Tx) error {
		page, err = scan(tx, kindLocation, cursor, limit, func(*locationDoc) bool { return true })
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, d := range page.Items {
		out.Locations = append(out.Locations, s.locationModel(d.Name))
	}
	if len(page.Items) == 0 {
		page.Last = cursor // the home Region alone filled the page
	}
	out.NextToken = next(page, hash)
	return out, nil
}

// locationFilters reads ListLocations' Filters: none means both kinds.
func locationFilters(filters []api.LocationFilter) (wantAWS, wantCustom bool) {
	if len(filters) == 0 {
		return true, true
	}
	for _, f := range filters {
		switch f {
		case api.LocationFilterAws:
			wantAWS = true
		case api.LocationFilterCustom:
			wantCustom = true
		}
	}
	return wantAWS, wantCustom
}

func boolKey(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// DeleteLocation deletes a custom location, named by name or ARN.
func (s *Service) DeleteLocation(ctx context.Context, in *api.DeleteLocationInput) (*api.DeleteLocationOutput, error) {
	name, err := s.resolveID(api.Deref(in.LocationName), arnLocation)
	if err != nil {
		return nil, err
	}
	err = s.update(ctx, func(tx store.Tx) error {
		if _, err := tx.Get(kindLocation, name); errors.Is(err, store.ErrNotFound) {
			return locationNotFound(name)()
		} else if err != nil {
			return err
		}
		if err := s.locationInUse(tx, name); err != nil {
			return err
		}
		return tx.Delete(kindLocation, name)
	})
	if err != nil {
		return nil, err
	}
	return &api.DeleteLocationOutput{}, nil
}

// locationInUse is the hook through which DeleteLocation refuses to delete a custom location
// that a fleet still uses: it returns the *api.Error to answer (InvalidRequestException, the
// only fitting error DeleteLocation models), or nil. TERMINATED fleets do not count.
func (s *Service) locationInUse(tx store.Tx, name string) error {
	return s.fleetUsingLocation(tx, name)
}
