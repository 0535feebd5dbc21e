package gamelift

import (
	"context"
	"errors"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// buildInitialized is the status of a build without files.
const buildInitialized = string(api.BuildStatusInitialized)

// defaultServerSdkVersion is what GameLift records when CreateBuild names no server SDK
// version (documented on CreateBuildInput.ServerSdkVersion).
const defaultServerSdkVersion = "4.0.2"

// buildDoc is a build as stored. A build uploaded to Hoist (no StorageLocation) or read from
// this host (StorageLocation in LocalBucket) gets files, a status from them and a size; a build
// in someone's S3 bucket stays a record, INITIALIZED with SizeOnDisk 0.
type buildDoc struct {
	ID               string  `json:"id"`
	Name             string  `json:"name,omitempty"`
	Version          string  `json:"version,omitempty"`
	OperatingSystem  string  `json:"os"`
	ServerSdkVersion string  `json:"sdk"`
	Status           string  `json:"status"`
	SizeOnDisk       int64   `json:"size"`
	Created          int64   `json:"created"`
	Storage          *s3Spot `json:"storage,omitempty"`
	// Files is the zip file or directory on this host; Layout is LayoutZip or LayoutDir.
	Files  string `json:"files,omitempty"`
	Layout string `json:"layout,omitempty"`
	// Owned: Files is an upload Hoist keeps (and deletes with the build).
	Owned bool `json:"owned,omitempty"`
	// Blob is the key of the uploaded zip in the store's blobs, which every node can read.
	Blob          string `json:"blob,omitempty"`
	InstallScript string `json:"installScript,omitempty"`
	FailureReason string `json:"failureReason,omitempty"`
	tagged
}

// s3Spot is a build's StorageLocation as given to CreateBuild.
type s3Spot struct {
	Bucket        string `json:"bucket"`
	Key           string `json:"key"`
	RoleArn       string `json:"roleArn"`
	ObjectVersion string `json:"objectVersion,omitempty"`
}

func (s *Service) buildHandlers(h *api.Handlers) {
	h.CreateBuild = s.CreateBuild
	h.DescribeBuild = s.DescribeBuild
	h.ListBuilds = s.ListBuilds
	h.UpdateBuild = s.UpdateBuild
	h.DeleteBuild = s.DeleteBuild
	h.RequestUploadCredentials = s.RequestUploadCredentials
}

func (s *Service) apiBuild(d *buildDoc) *api.Build {
	return &api.Build{
		BuildId:          api.String(d.ID),
		BuildArn:         api.String(s.arn(arnBuild, d.ID)),
		Name:             optional(d.Name),
		Version:          optional(d.Version),
		Status:           (*api.BuildStatus)(optional(d.Status)),
		SizeOnDisk:       api.Int64(d.SizeOnDisk),
		OperatingSystem:  (*api.OperatingSystem)(optional(d.OperatingSystem)),
		CreationTime:     stamp(d.Created),
		ServerSdkVersion: optional(d.ServerSdkVersion),
	}
}

func buildNotFound(id string) func() error {
	return func() error { return api.Errorf(api.NotFoundException, "Build %s not found.", id) }
}

// CreateBuild records a new build. OperatingSystem is required (GameLift has no default for
// it). Without a StorageLocation the build is INITIALIZED and the answer carries upload
// credentials and the S3 location to upload its zip to. With a StorageLocation in LocalBucket,
// the files are on this host and the build is READY or FAILED at once. Any other
// StorageLocation must name a bucket, a key and a role, and is only recorded.
func (s *Service) CreateBuild(ctx context.Context, in *api.CreateBuildInput) (*api.CreateBuildOutput, error) {
	doc, err := s.newBuild(in)
	if err != nil {
		return nil, err
	}
	if doc.Storage != nil && doc.Storage.Bucket == LocalBucket {
		if err := localBuild(doc); err != nil {
			return nil, err
		}
	}
	var creds *api.AwsCredentials
	err = s.update(ctx, func(tx store.Tx) error {
		if err := insertDoc(tx, kindBuild, doc.ID, doc); err != nil || doc.Storage != nil {
			return err
		}
		creds, err = s.issueUploadKey(tx, doc.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.CreateBuildOutput{Build: s.apiBuild(doc), StorageLocation: in.StorageLocation, UploadCredentials: creds}
	if doc.Storage == nil {
		out.StorageLocation = uploadLocation(doc.ID)
	}
	return out, nil
}

// newBuild checks a CreateBuild request beyond the model and returns the document to store.
func (s *Service) newBuild(in *api.CreateBuildInput) (*buildDoc, error) {
	if in.OperatingSystem == nil {
		return nil, api.Errorf(api.InvalidRequestException,
			"OperatingSystem is required: specify the operating system your game server binaries run on.")
	}
	storage, err := storageSpot(in.StorageLocation)
	if err != nil {
		return nil, err
	}
	tags, err := mergeTags(nil, in.Tags)
	if err != nil {
		return nil, err
	}
	sdk := api.Deref(in.ServerSdkVersion)
	if sdk == "" {
		sdk = defaultServerSdkVersion
	}
	return &buildDoc{
		ID: "build-" + s.newID(), Name: api.Deref(in.Name), Version: api.Deref(in.Version),
		OperatingSystem: string(*in.OperatingSystem), ServerSdkVersion: sdk,
		Status: buildInitialized, Created: s.nowMillis(), Storage: storage, tagged: tagged{Tags: tags},
	}, nil
}

func storageSpot(l *api.S3Location) (*s3Spot, error) {
	if l == nil {
		return nil, nil
	}
	spot := &s3Spot{Bucket: api.Deref(l.Bucket), Key: api.Deref(l.Key), RoleArn: api.Deref(l.RoleArn),
		ObjectVersion: api.Deref(l.ObjectVersion)}
	if spot.Bucket == LocalBucket && spot.Key != "" {
		return spot, nil // a path on this host: no role needed
	}
	if spot.Bucket == "" || spot.Key == "" || spot.RoleArn == "" {
		return nil, api.Errorf(api.InvalidRequestException,
			"StorageLocation must specify Bucket, Key and RoleArn.")
	}
	return spot, nil
}

// DescribeBuild returns a build by ID or ARN.
func (s *Service) DescribeBuild(ctx context.Context, in *api.DescribeBuildInput) (*api.DescribeBuildOutput, error) {
	id, err := s.resolveID(api.Deref(in.BuildId), arnBuild)
	if err != nil {
		return nil, err
	}
	var doc buildDoc
	if err := s.read(ctx, kindBuild, id, &doc, buildNotFound(id)); err != nil {
		return nil, err
	}
	return &api.DescribeBuildOutput{Build: s.apiBuild(&doc)}, nil
}

// ListBuilds lists builds in creation order, optionally only those with a Status.
func (s *Service) ListBuilds(ctx context.Context, in *api.ListBuildsInput) (*api.ListBuildsOutput, error) {
	status := string(api.Deref(in.Status))
	hash := filterHash("ListBuilds", status)
	cursor, err := decodeToken(in.NextToken, hash)
	if err != nil {
		return nil, err
	}
	var page scanned[buildDoc]
	err = s.view(ctx, func(tx store.Tx) error {
		page, err = scan(tx, kindBuild, cursor, pageSize(in.Limit), func(d *buildDoc) bool {
			return status == "" || d.Status == status
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.ListBuildsOutput{Builds: make([]api.Build, len(page.Items)), NextToken: next(page, hash)}
	for i, d := range page.Items {
		out.Builds[i] = *s.apiBuild(d)
	}
	return out, nil
}

// UpdateBuild changes a build's Name and/or Version.
func (s *Service) UpdateBuild(ctx context.Context, in *api.UpdateBuildInput) (*api.UpdateBuildOutput, error) {
	id, err := s.resolveID(api.Deref(in.BuildId), arnBuild)
	if err != nil {
		return nil, err
	}
	var doc buildDoc
	err = s.update(ctx, func(tx store.Tx) error {
		doc = buildDoc{}
		rec, err := getDoc(tx, kindBuild, id, &doc, buildNotFound(id))
		if err != nil {
			return err
		}
		if in.Name != nil {
			doc.Name = *in.Name
		}
		if in.Version != nil {
			doc.Version = *in.Version
		}
		return putDoc(tx, rec, &doc)
	})
	if err != nil {
		return nil, err
	}
	return &api.UpdateBuildOutput{Build: s.apiBuild(&doc)}, nil
}

// DeleteBuild deletes a build by ID or ARN, with its upload credentials, and then the files
// Hoist keeps for it (an uploaded zip; files read in place are left alone).
func (s *Service) DeleteBuild(ctx context.Context, in *api.DeleteBuildInput) (*api.DeleteBuildOutput, error) {
	id, err := s.resolveID(api.Deref(in.BuildId), arnBuild)
	if err != nil {
		return nil, err
	}
	var doc buildDoc
	err = s.update(ctx, func(tx store.Tx) error {
		doc = buildDoc{}
		if _, err := getDoc(tx, kindBuild, id, &doc, buildNotFound(id)); err != nil {
			return err
		}
		if err := s.buildInUse(tx, id); err != nil {
			return err
		}
		if err := s.dropUploadKeys(tx, id, func(*uploadKeyDoc) bool { return true }); err != nil {
			return err
		}
		err := tx.Delete(kindBuild, id)
		if errors.Is(err, store.ErrNotFound) {
			return buildNotFound(id)()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	removeOwnedFiles(&doc)
	s.deleteBlob(ctx, doc.Blob)
	return &api.DeleteBuildOutput{}, nil
}

// buildInUse is the hook through which DeleteBuild could refuse to delete a build that fleets
// use. GameLift documents the opposite (deleting a build does not affect fleets using it; it
// only stops new fleets from using it), so it allows everything; the fleets work decides.
func (s *Service) buildInUse(tx store.Tx, id string) error { return nil }
