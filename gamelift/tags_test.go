package gamelift

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/hoist-gg/hoist/api"
)

func tg(k, v string) api.Tag { return api.Tag{Key: api.String(k), Value: api.String(v)} }

func (f *fixture) tags(t *testing.T, arn *string) []api.Tag {
	t.Helper()
	return ok(f.h.ListTagsForResource(f.ctx, &api.ListTagsForResourceRequest{ResourceARN: arn}))(t).Tags
}

// taggableARNs creates one resource of each taggable type, each with one tag at creation.
func (f *fixture) taggableARNs(t *testing.T) map[string]*string {
	t.Helper()
	first := []api.Tag{tg("team", "core")}
	alias := ok(f.h.CreateAlias(f.ctx, &api.CreateAliasInput{Name: api.String("a"), RoutingStrategy: simple(fleet1), Tags: first}))(t)
	build := ok(f.h.CreateBuild(f.ctx, &api.CreateBuildInput{OperatingSystem: linux(), Tags: first}))(t)
	loc := ok(f.h.CreateLocation(f.ctx, &api.CreateLocationInput{LocationName: api.String("custom-t1"), Tags: first}))(t)
	return map[string]*string{"alias": alias.Alias.AliasArn, "build": build.Build.BuildArn, "location": loc.Location.LocationArn}
}

func TestTagsOnEveryTaggableResource(t *testing.T) {
	f := newFixture(t, testAccount)
	for kind, arn := range f.taggableARNs(t) {
		if got := f.tags(t, arn); !reflect.DeepEqual(got, []api.Tag{tg("team", "core")}) {
			t.Errorf("%s: tags at creation = %v", kind, got)
		}
		ok(f.h.TagResource(f.ctx, &api.TagResourceRequest{ResourceARN: arn,
			Tags: []api.Tag{tg("env", "prod"), tg("team", "games"), tg("empty", "")}}))(t)
		want := []api.Tag{tg("team", "games"), tg("env", "prod"), tg("empty", "")}
		if got := f.tags(t, arn); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: after TagResource = %v, want %v", kind, got, want)
		}
		ok(f.h.UntagResource(f.ctx, &api.UntagResourceRequest{ResourceARN: arn, TagKeys: []string{"team", "never-set"}}))(t)
		want = []api.Tag{tg("env", "prod"), tg("empty", "")}
		if got := f.tags(t, arn); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: after UntagResource = %v, want %v", kind, got, want)
		}
	}
}

func TestTagsSurviveUpdates(t *testing.T) {
	f := newFixture(t, "")
	arns := f.taggableARNs(t)
	ok(f.h.UpdateAlias(f.ctx, &api.UpdateAliasInput{AliasId: arns["alias"], Name: api.String("renamed")}))(t)
	ok(f.h.UpdateBuild(f.ctx, &api.UpdateBuildInput{BuildId: arns["build"], Name: api.String("renamed")}))(t)
	for _, kind := range []string{"alias", "build"} {
		if got := f.tags(t, arns[kind]); len(got) != 1 {
			t.Errorf("%s: tags after update = %v", kind, got)
		}
	}
}

func TestTagLimit(t *testing.T) {
	f := newFixture(t, "")
	arn := f.taggableARNs(t)["alias"]
	var tags []api.Tag
	for i := range 49 {
		tags = append(tags, tg(fmt.Sprintf("k%02d", i), "v"))
	}
	ok(f.h.TagResource(f.ctx, &api.TagResourceRequest{ResourceARN: arn, Tags: tags}))(t) // 50 in all
	ok(f.h.TagResource(f.ctx, &api.TagResourceRequest{ResourceARN: arn, Tags: []api.Tag{tg("k00", "changed")}}))(t)
	f.unchanged(t, api.TaggingFailedException, func() error {
		_, err := f.h.TagResource(f.ctx, &api.TagResourceRequest{ResourceARN: arn, Tags: []api.Tag{tg("one-more", "v")}})
		return err
	})
	var many []api.Tag
	for i := range 51 {
		many = append(many, tg(fmt.Sprintf("m%02d", i), "v"))
	}
	f.unchanged(t, api.TaggingFailedException, func() error {
		_, err := f.h.CreateAlias(f.ctx, &api.CreateAliasInput{Name: api.String("x"), RoutingStrategy: simple(fleet1), Tags: many})
		return err
	})
}

func TestReservedTagPrefix(t *testing.T) {
	f := newFixture(t, "")
	arn := f.taggableARNs(t)["build"]
	for _, key := range []string{"aws:created-by", "AWS:x", "Aws:y"} {
		f.unchanged(t, api.TaggingFailedException, func() error {
			_, err := f.h.TagResource(f.ctx, &api.TagResourceRequest{ResourceARN: arn, Tags: []api.Tag{tg("ok", "1"), tg(key, "v")}})
			return err
		})
		f.unchanged(t, api.TaggingFailedException, func() error {
			_, err := f.h.UntagResource(f.ctx, &api.UntagResourceRequest{ResourceARN: arn, TagKeys: []string{key}})
			return err
		})
	}
	// "aws" without the colon is an ordinary key.
	ok(f.h.TagResource(f.ctx, &api.TagResourceRequest{ResourceARN: arn, Tags: []api.Tag{tg("awsome", "v")}}))(t)
}

func TestTagARNErrors(t *testing.T) {
	f := newFixture(t, testAccount)
	arns := f.taggableARNs(t)
	cases := map[string]struct {
		arn  string
		code api.ErrorCode
	}{
		"not an ARN":          {"alias-123", api.InvalidRequestException},
		"no resource id":      {"arn:aws:gamelift:us-west-2::alias", api.InvalidRequestException},
		"another service":     {"arn:aws:s3:us-west-2::alias/alias-1", api.InvalidRequestException},
		"another Region":      {"arn:aws:gamelift:eu-central-1::alias/alias-1", api.InvalidRequestException},
		"missing alias":       {"arn:aws:gamelift:us-west-2::alias/alias-1", api.NotFoundException},
		"missing location":    {"arn:aws:gamelift:us-west-2:123456789012:location/custom-zz", api.NotFoundException},
		"type not in Hoist":   {"arn:aws:gamelift:us-west-2::script/script-1", api.NotFoundException},
		"missing fleet":       {"arn:aws:gamelift:us-west-2::fleet/fleet-00000000-0000-0000-0000-000000000000", api.NotFoundException},
		"deleted alias again": {*arns["alias"], api.NotFoundException},
	}
	ok(f.h.DeleteAlias(f.ctx, &api.DeleteAliasInput{AliasId: arns["alias"]}))(t)
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			arn := api.String(c.arn)
			f.unchanged(t, c.code, func() error {
				_, err := f.h.TagResource(f.ctx, &api.TagResourceRequest{ResourceARN: arn, Tags: []api.Tag{tg("a", "b")}})
				return err
			})
			f.unchanged(t, c.code, func() error {
				_, err := f.h.UntagResource(f.ctx, &api.UntagResourceRequest{ResourceARN: arn, TagKeys: []string{"a"}})
				return err
			})
			_, err := f.h.ListTagsForResource(f.ctx, &api.ListTagsForResourceRequest{ResourceARN: arn})
			wantCode(t, err, c.code)
		})
	}
}

func TestListTagsEmptyIsNotNil(t *testing.T) {
	f := newFixture(t, "")
	a := f.createAlias(t, "a", simple(fleet1))
	if got := f.tags(t, a.AliasArn); got == nil || len(got) != 0 {
		t.Errorf("tags = %#v, want an empty list", got)
	}
}
