package gamelift

import (
	"reflect"
	"testing"

	"github.com/hoist-gg/hoist/api"
)

func (f *fixture) createLocation(t *testing.T, name string, tags ...api.Tag) *api.LocationModel {
	t.Helper()
	out := ok(f.h.CreateLocation(f.ctx, &api.CreateLocationInput{LocationName: api.String(name), Tags: tags}))(t)
	return out.Location
}

func locationNames(ls []api.LocationModel) []string {
	var names []string
	for _, l := range ls {
		names = append(names, api.Deref(l.LocationName))
	}
	return names
}

func TestCreateLocation(t *testing.T) {
	f := newFixture(t, testAccount)
	loc := f.createLocation(t, "custom-home-lab")
	if got := api.Deref(loc.LocationName); got != "custom-home-lab" {
		t.Errorf("LocationName = %q", got)
	}
	want := "arn:aws:gamelift:us-west-2:123456789012:location/custom-home-lab"
	if got := api.Deref(loc.LocationArn); got != want {
		t.Errorf("LocationArn = %q, want %q", got, want)
	}
}

func TestCreateLocationEmptyAccountARN(t *testing.T) {
	f := newFixture(t, "")
	loc := f.createLocation(t, "custom-a1")
	if got, want := api.Deref(loc.LocationArn), "arn:aws:gamelift:us-west-2::location/custom-a1"; got != want {
		t.Errorf("LocationArn = %q, want %q", got, want)
	}
}

func TestCreateLocationConflict(t *testing.T) {
	f := newFixture(t, "")
	f.createLocation(t, "custom-dup", api.Tag{Key: api.String("k"), Value: api.String("v")})
	msg := f.unchanged(t, api.ConflictException, func() error {
		_, err := f.h.CreateLocation(f.ctx, &api.CreateLocationInput{LocationName: api.String("custom-dup")})
		return err
	})
	if msg != "Location custom-dup already exists." {
		t.Errorf("message = %q", msg)
	}
}

func TestCreateLocationBadTagsStoresNothing(t *testing.T) {
	f := newFixture(t, "")
	f.unchanged(t, api.TaggingFailedException, func() error {
		_, err := f.h.CreateLocation(f.ctx, &api.CreateLocationInput{LocationName: api.String("custom-x1"),
			Tags: []api.Tag{{Key: api.String("aws:owner"), Value: api.String("me")}}})
		return err
	})
}

func TestListLocationsFilters(t *testing.T) {
	f := newFixture(t, "")
	for _, n := range []string{"custom-c", "custom-a", "custom-b"} {
		f.createLocation(t, n)
	}
	cases := []struct {
		filters []api.LocationFilter
		want    []string
	}{
		{nil, []string{testRegion, "custom-c", "custom-a", "custom-b"}},
		{[]api.LocationFilter{api.LocationFilterAws}, []string{testRegion}},
		{[]api.LocationFilter{api.LocationFilterCustom}, []string{"custom-c", "custom-a", "custom-b"}},
		{[]api.LocationFilter{api.LocationFilterCustom, api.LocationFilterAws}, []string{testRegion, "custom-c", "custom-a", "custom-b"}},
	}
	for _, c := range cases {
		out := ok(f.h.ListLocations(f.ctx, &api.ListLocationsInput{Filters: c.filters}))(t)
		if got := locationNames(out.Locations); !reflect.DeepEqual(got, c.want) {
			t.Errorf("filters %v: got %v, want %v", c.filters, got, c.want)
		}
		if out.NextToken != nil {
			t.Errorf("filters %v: NextToken %q at the end of the list", c.filters, *out.NextToken)
		}
	}
	out := ok(f.h.ListLocations(f.ctx, &api.ListLocationsInput{Filters: []api.LocationFilter{api.LocationFilterAws}}))(t)
	if out.Locations[0].LocationArn != nil {
		t.Errorf("the AWS location has an ARN %q; GameLift gives ARNs to custom locations only", *out.Locations[0].LocationArn)
	}
}

// listAllLocations pages through ListLocations with limit and returns the pages' names.
func (f *fixture) listAllLocations(t *testing.T, limit int32, filters ...api.LocationFilter) [][]string {
	t.Helper()
	var pages [][]string
	in := &api.ListLocationsInput{Filters: filters, Limit: api.Int32(limit)}
	for {
		out := ok(f.h.ListLocations(f.ctx, in))(t)
		pages = append(pages, locationNames(out.Locations))
		if out.NextToken == nil {
			return pages
		}
		if len(pages) > 20 {
			t.Fatal("pagination does not end")
		}
		in.NextToken = out.NextToken
	}
}

func TestListLocationsPages(t *testing.T) {
	f := newFixture(t, "")
	for _, n := range []string{"custom-1a", "custom-2b", "custom-3c"} {
		f.createLocation(t, n)
	}
	got := f.listAllLocations(t, 2)
	want := [][]string{{testRegion, "custom-1a"}, {"custom-2b", "custom-3c"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("limit 2: %v, want %v", got, want)
	}
	got = f.listAllLocations(t, 1)
	want = [][]string{{testRegion}, {"custom-1a"}, {"custom-2b"}, {"custom-3c"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("limit 1: %v, want %v", got, want)
	}
	got = f.listAllLocations(t, 2, api.LocationFilterCustom)
	want = [][]string{{"custom-1a", "custom-2b"}, {"custom-3c"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("limit 2, CUSTOM: %v, want %v", got, want)
	}
}

func TestListLocationsHomeRegionAloneHasNoToken(t *testing.T) {
	f := newFixture(t, "")
	out := ok(f.h.ListLocations(f.ctx, &api.ListLocationsInput{Limit: api.Int32(1)}))(t)
	if !reflect.DeepEqual(locationNames(out.Locations), []string{testRegion}) || out.NextToken != nil {
		t.Errorf("got %v, token %v", locationNames(out.Locations), out.NextToken)
	}
}

func TestListLocationsBadToken(t *testing.T) {
	f := newFixture(t, "")
	f.createLocation(t, "custom-1a")
	f.createLocation(t, "custom-2b")
	out := ok(f.h.ListLocations(f.ctx, &api.ListLocationsInput{Limit: api.Int32(1)}))(t)
	for name, in := range map[string]*api.ListLocationsInput{
		"garbage":       {NextToken: api.String("not a token")},
		"other filters": {NextToken: out.NextToken, Filters: []api.LocationFilter{api.LocationFilterCustom}},
	} {
		_, err := f.h.ListLocations(f.ctx, in)
		if msg := wantCode(t, err, api.InvalidRequestException); msg[:17] != "Invalid NextToken" {
			t.Errorf("%s: message %q", name, msg)
		}
	}
}

func TestDeleteLocation(t *testing.T) {
	f := newFixture(t, testAccount)
	f.createLocation(t, "custom-gone")
	loc := f.createLocation(t, "custom-arn")
	ok(f.h.DeleteLocation(f.ctx, &api.DeleteLocationInput{LocationName: api.String("custom-gone")}))(t)
	ok(f.h.DeleteLocation(f.ctx, &api.DeleteLocationInput{LocationName: loc.LocationArn}))(t)
	out := ok(f.h.ListLocations(f.ctx, &api.ListLocationsInput{}))(t)
	if got := locationNames(out.Locations); !reflect.DeepEqual(got, []string{testRegion}) {
		t.Errorf("after deletes: %v", got)
	}
	msg := f.unchanged(t, api.NotFoundException, func() error {
		_, err := f.h.DeleteLocation(f.ctx, &api.DeleteLocationInput{LocationName: api.String("custom-gone")})
		return err
	})
	if msg != "Location custom-gone not found." {
		t.Errorf("message = %q", msg)
	}
}

func TestDeleteLocationForeignARN(t *testing.T) {
	f := newFixture(t, "")
	f.createLocation(t, "custom-here")
	f.unchanged(t, api.InvalidRequestException, func() error {
		_, err := f.h.DeleteLocation(f.ctx, &api.DeleteLocationInput{
			LocationName: api.String("arn:aws:gamelift:eu-west-1::location/custom-here")})
		return err
	})
}
