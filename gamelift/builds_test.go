package gamelift

import (
	"reflect"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

func linux() *api.OperatingSystem {
	os := api.OperatingSystem("AMAZON_LINUX_2023")
	return &os
}

func (f *fixture) createBuild(t *testing.T, name string) *api.Build {
	t.Helper()
	out := ok(f.h.CreateBuild(f.ctx, &api.CreateBuildInput{Name: api.String(name), OperatingSystem: linux()}))(t)
	return out.Build
}

func TestCreateBuild(t *testing.T) {
	f := newFixture(t, testAccount)
	storage := &api.S3Location{Bucket: api.String("b"), Key: api.String("k.zip"), RoleArn: api.String("arn:aws:iam::1:role/r")}
	out := ok(f.h.CreateBuild(f.ctx, &api.CreateBuildInput{
		Name: api.String("server"), Version: api.String("1.2"), OperatingSystem: linux(),
		ServerSdkVersion: api.String("5.2.0"), StorageLocation: storage,
	}))(t)
	id := "build-00000000-0000-4000-8000-000000000001"
	status := api.BuildStatusInitialized
	want := &api.Build{
		BuildId: api.String(id), BuildArn: api.String("arn:aws:gamelift:us-west-2:123456789012:build/" + id),
		Name: api.String("server"), Version: api.String("1.2"), Status: &status, SizeOnDisk: api.Int64(0),
		OperatingSystem: linux(), CreationTime: api.Time(t0), ServerSdkVersion: api.String("5.2.0"),
	}
	if !reflect.DeepEqual(out.Build, want) {
		t.Errorf("Build = %+v\nwant    %+v", out.Build, want)
	}
	if !reflect.DeepEqual(out.StorageLocation, storage) || out.UploadCredentials != nil {
		t.Errorf("StorageLocation = %+v, UploadCredentials = %+v", out.StorageLocation, out.UploadCredentials)
	}
	desc := ok(f.h.DescribeBuild(f.ctx, &api.DescribeBuildInput{BuildId: api.String(id)}))(t)
	if !reflect.DeepEqual(desc.Build, want) {
		t.Errorf("DescribeBuild = %+v\nwant          %+v", desc.Build, want)
	}
}

func TestCreateBuildDefaultsSdkVersion(t *testing.T) {
	f := newFixture(t, "")
	b := f.createBuild(t, "x")
	if got := api.Deref(b.ServerSdkVersion); got != "4.0.2" {
		t.Errorf("ServerSdkVersion = %q, want GameLift's default 4.0.2", got)
	}
	if b.Version != nil {
		t.Errorf("Version = %q, want absent", *b.Version)
	}
}

func TestCreateBuildErrors(t *testing.T) {
	f := newFixture(t, "")
	cases := map[string]struct {
		in   *api.CreateBuildInput
		code api.ErrorCode
	}{
		"no operating system": {&api.CreateBuildInput{Name: api.String("x")}, api.InvalidRequestException},
		"storage without role": {&api.CreateBuildInput{OperatingSystem: linux(),
			StorageLocation: &api.S3Location{Bucket: api.String("b"), Key: api.String("k")}}, api.InvalidRequestException},
		"reserved tag": {&api.CreateBuildInput{OperatingSystem: linux(),
			Tags: []api.Tag{{Key: api.String("AWS:x"), Value: api.String("")}}}, api.TaggingFailedException},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			f.unchanged(t, c.code, func() error { _, err := f.h.CreateBuild(f.ctx, c.in); return err })
		})
	}
}

func TestDescribeBuildByARNAndErrors(t *testing.T) {
	f := newFixture(t, "")
	b := f.createBuild(t, "x")
	got := ok(f.h.DescribeBuild(f.ctx, &api.DescribeBuildInput{BuildId: b.BuildArn}))(t)
	if !reflect.DeepEqual(got.Build, b) {
		t.Errorf("by ARN: %+v, want %+v", got.Build, b)
	}
	_, err := f.h.DescribeBuild(f.ctx, &api.DescribeBuildInput{BuildId: api.String("build-nope")})
	if msg := wantCode(t, err, api.NotFoundException); msg != "Build build-nope not found." {
		t.Errorf("message = %q", msg)
	}
	for _, arn := range []string{
		"arn:aws:gamelift:eu-west-1::build/" + api.Deref(b.BuildId), // another Region
		"arn:aws:gamelift:us-west-2::alias/" + api.Deref(b.BuildId), // another resource type
		"arn:aws:gamelift:us-west-2::build/",                        // malformed
	} {
		_, err := f.h.DescribeBuild(f.ctx, &api.DescribeBuildInput{BuildId: api.String(arn)})
		wantCode(t, err, api.InvalidRequestException)
	}
}

func TestUpdateBuild(t *testing.T) {
	f := newFixture(t, "")
	b := f.createBuild(t, "old")
	f.clock.Advance(time.Hour)
	out := ok(f.h.UpdateBuild(f.ctx, &api.UpdateBuildInput{BuildId: b.BuildId, Version: api.String("2")}))(t)
	if api.Deref(out.Build.Name) != "old" || api.Deref(out.Build.Version) != "2" {
		t.Errorf("after version update: %+v", out.Build)
	}
	out = ok(f.h.UpdateBuild(f.ctx, &api.UpdateBuildInput{BuildId: b.BuildArn, Name: api.String("new")}))(t)
	if api.Deref(out.Build.Name) != "new" || api.Deref(out.Build.Version) != "2" || !out.Build.CreationTime.Equal(t0) {
		t.Errorf("after name update: %+v", out.Build)
	}
	desc := ok(f.h.DescribeBuild(f.ctx, &api.DescribeBuildInput{BuildId: b.BuildId}))(t)
	if !reflect.DeepEqual(desc.Build, out.Build) {
		t.Errorf("stored %+v, returned %+v", desc.Build, out.Build)
	}
	f.unchanged(t, api.NotFoundException, func() error {
		_, err := f.h.UpdateBuild(f.ctx, &api.UpdateBuildInput{BuildId: api.String("build-nope"), Name: api.String("n")})
		return err
	})
}

func TestDeleteBuild(t *testing.T) {
	f := newFixture(t, "")
	b := f.createBuild(t, "x")
	ok(f.h.DeleteBuild(f.ctx, &api.DeleteBuildInput{BuildId: b.BuildArn}))(t)
	_, err := f.h.DescribeBuild(f.ctx, &api.DescribeBuildInput{BuildId: b.BuildId})
	wantCode(t, err, api.NotFoundException)
	f.unchanged(t, api.NotFoundException, func() error {
		_, err := f.h.DeleteBuild(f.ctx, &api.DeleteBuildInput{BuildId: b.BuildId})
		return err
	})
}

// setBuildStatus changes a stored build's status, as the upload work will.
func (f *fixture) setBuildStatus(t *testing.T, id, status string) {
	t.Helper()
	err := f.svc.update(f.ctx, func(tx store.Tx) error {
		var d buildDoc
		rec, err := getDoc(tx, kindBuild, id, &d, buildNotFound(id))
		if err != nil {
			return err
		}
		d.Status = status
		return putDoc(tx, rec, &d)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestListBuildsStatusFilterAcrossPages(t *testing.T) {
	f := newFixture(t, "")
	var ready []string
	for i := range 7 {
		b := f.createBuild(t, "b")
		if i%2 == 0 {
			f.setBuildStatus(t, *b.BuildId, "READY")
			ready = append(ready, *b.BuildId)
		}
	}
	status := api.BuildStatus("READY")
	in := &api.ListBuildsInput{Status: &status, Limit: api.Int32(2)}
	var got []string
	var sizes []int
	for {
		out := ok(f.h.ListBuilds(f.ctx, in))(t)
		sizes = append(sizes, len(out.Builds))
		for _, b := range out.Builds {
			got = append(got, *b.BuildId)
		}
		if out.NextToken == nil {
			break
		}
		in.NextToken = out.NextToken
	}
	if !reflect.DeepEqual(got, ready) || !reflect.DeepEqual(sizes, []int{2, 2}) {
		t.Errorf("READY pages %v: %v, want %v", sizes, got, ready)
	}
	all := ok(f.h.ListBuilds(f.ctx, &api.ListBuildsInput{}))(t)
	if len(all.Builds) != 7 || all.NextToken != nil {
		t.Errorf("unfiltered: %d builds, token %v", len(all.Builds), all.NextToken)
	}
}

func TestListBuildsTokenOfOtherFilter(t *testing.T) {
	f := newFixture(t, "")
	f.createBuild(t, "a")
	f.createBuild(t, "b")
	out := ok(f.h.ListBuilds(f.ctx, &api.ListBuildsInput{Limit: api.Int32(1)}))(t)
	if out.NextToken == nil {
		t.Fatal("no NextToken with one of two builds returned")
	}
	status := api.BuildStatusInitialized
	_, err := f.h.ListBuilds(f.ctx, &api.ListBuildsInput{Status: &status, NextToken: out.NextToken})
	wantCode(t, err, api.InvalidRequestException)
	_, err = f.h.ListAliases(f.ctx, &api.ListAliasesInput{NextToken: out.NextToken})
	wantCode(t, err, api.InvalidRequestException)
}
