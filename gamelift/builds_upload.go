package gamelift

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// Where uploaded builds go, as CreateBuild and RequestUploadCredentials report it.
const (
	// UploadBucket is the S3 bucket every build upload is addressed to; the object key is
	// UploadKey(buildID).
	UploadBucket = "hoist-builds"
	// UploadCredentialsLifetime is how long upload credentials stay valid. GameLift documents
	// only "a limited life span"; one hour is the default lifetime of the temporary
	// credentials AWS STS issues (AssumeRole's DurationSeconds default, 3600).
	UploadCredentialsLifetime = time.Hour
)

// kindUploadKey is the record kind of upload credentials: ID = access key ID, Parent = build.
const kindUploadKey = "buildupload"

// UploadKey returns the object key a build's zip is uploaded to.
func UploadKey(buildID string) string { return buildID + ".zip" }

// uploadKeyDoc is one set of upload credentials as stored.
type uploadKeyDoc struct {
	AccessKeyID string `json:"id"`
	Secret      string `json:"secret"`
	Token       string `json:"token"`
	BuildID     string `json:"build"`
	Expires     int64  `json:"expires"` // Unix milliseconds
}

// Errors UploadGrant returns; the S3 endpoint turns them into S3's errors.
var (
	// ErrUploadKeyUnknown: no upload credentials have this access key ID (InvalidAccessKeyId).
	ErrUploadKeyUnknown = errors.New("gamelift: unknown upload access key")
	// ErrUploadKeyExpired: the credentials' lifetime is over (ExpiredToken).
	ErrUploadKeyExpired = errors.New("gamelift: upload credentials have expired")
	// ErrUploadClosed: the build no longer takes an upload: it is READY, FAILED or deleted
	// (AccessDenied).
	ErrUploadClosed = errors.New("gamelift: the build no longer accepts uploads")
)

// UploadGrant is what a set of upload credentials allows: writing the one object Bucket/Key of
// build BuildID until Expires, signed with SecretAccessKey and carrying SessionToken.
type UploadGrant struct {
	// BuildID is the build the credentials were issued for.
	BuildID string
	// Bucket and Key name the only object the credentials may write.
	Bucket, Key string
	// SecretAccessKey is the key requests must be signed with.
	SecretAccessKey string
	// SessionToken must come with every request (X-Amz-Security-Token).
	SessionToken string
	// Expires is when the credentials stop working.
	Expires time.Time
	// Open reports whether the build still takes an upload (it is INITIALIZED).
	Open bool
}

// UploadGrant returns what the upload credentials with accessKeyID allow, or
// ErrUploadKeyUnknown, or ErrUploadKeyExpired once their lifetime is over on the clock.
func (s *Service) UploadGrant(ctx context.Context, accessKeyID string) (*UploadGrant, error) {
	var key uploadKeyDoc
	if err := s.read(ctx, kindUploadKey, accessKeyID, &key, func() error { return ErrUploadKeyUnknown }); err != nil {
		return nil, err
	}
	expires := time.UnixMilli(key.Expires)
	if !s.clock.Now().Before(expires) {
		return nil, ErrUploadKeyExpired
	}
	g := &UploadGrant{BuildID: key.BuildID, Bucket: UploadBucket, Key: UploadKey(key.BuildID),
		SecretAccessKey: key.Secret, SessionToken: key.Token, Expires: expires}
	var doc buildDoc
	err := s.read(ctx, kindBuild, key.BuildID, &doc, func() error { return ErrUploadClosed })
	switch {
	case errors.Is(err, ErrUploadClosed):
		return g, nil
	case err != nil:
		return nil, err
	}
	g.Open = doc.Status == buildInitialized && doc.Storage == nil
	return g, nil
}

// RequestUploadCredentials issues fresh credentials for uploading a build's zip, with the
// location to upload it to. Only a build created without a StorageLocation has one; earlier
// credentials of the build stay valid until they expire (expired ones are removed now).
func (s *Service) RequestUploadCredentials(ctx context.Context, in *api.RequestUploadCredentialsInput) (*api.RequestUploadCredentialsOutput, error) {
	id, err := s.resolveID(api.Deref(in.BuildId), arnBuild)
	if err != nil {
		return nil, err
	}
	var creds *api.AwsCredentials
	err = s.update(ctx, func(tx store.Tx) error {
		var doc buildDoc
		if _, err := getDoc(tx, kindBuild, id, &doc, buildNotFound(id)); err != nil {
			return err
		}
		if doc.Storage != nil {
			return api.Errorf(api.InvalidRequestException,
				"Build %s was created with a StorageLocation; upload credentials are only for builds uploaded to Hoist.", id)
		}
		if err := s.dropExpiredKeys(tx, id); err != nil {
			return err
		}
		creds, err = s.issueUploadKey(tx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &api.RequestUploadCredentialsOutput{UploadCredentials: creds, StorageLocation: uploadLocation(id)}, nil
}

// uploadLocation is the StorageLocation a build's zip is uploaded to.
func uploadLocation(buildID string) *api.S3Location {
	return &api.S3Location{Bucket: api.String(UploadBucket), Key: api.String(UploadKey(buildID))}
}

// issueUploadKey stores new credentials for build id, in the caller's transaction.
func (s *Service) issueUploadKey(tx store.Tx, buildID string) (*api.AwsCredentials, error) {
	d := &uploadKeyDoc{AccessKeyID: "ASIA" + randomText(12, keyIDChars), Secret: randomText(30, ""),
		Token: randomText(96, ""), BuildID: buildID,
		Expires: s.clock.Now().Add(UploadCredentialsLifetime).UnixMilli()}
	if err := insertChild(tx, kindUploadKey, d.AccessKeyID, buildID, d); err != nil {
		return nil, err
	}
	return &api.AwsCredentials{AccessKeyId: api.String(d.AccessKeyID), SecretAccessKey: api.String(d.Secret),
		SessionToken: api.String(d.Token)}, nil
}

// dropExpiredKeys deletes the expired upload credentials of a build.
func (s *Service) dropExpiredKeys(tx store.Tx, buildID string) error {
	return s.dropUploadKeys(tx, buildID, func(d *uploadKeyDoc) bool { return d.Expires <= s.nowMillis() })
}

// dropUploadKeys deletes the upload credentials of a build for which drop is true.
func (s *Service) dropUploadKeys(tx store.Tx, buildID string, drop func(*uploadKeyDoc) bool) error {
	recs, err := tx.List(kindUploadKey, store.ListOptions{Parent: buildID})
	if err != nil {
		return err
	}
	for _, rec := range recs {
		var d uploadKeyDoc
		if err := json.Unmarshal(rec.Data, &d); err != nil {
			return err
		}
		if drop(&d) {
			if err := tx.Delete(kindUploadKey, rec.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
	}
	return nil
}

// keyIDChars are the characters of AWS access key IDs.
const keyIDChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

// randomText returns n random bytes as characters of alphabet (whose length divides 256), or
// as unpadded URL-safe base64 (longer than n) when alphabet is empty.
func randomText(n int, alphabet string) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	if alphabet == "" {
		return base64.RawURLEncoding.EncodeToString(b)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
