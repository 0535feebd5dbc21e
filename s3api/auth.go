package s3api

import (
	"crypto/subtle"
	"errors"

	"github.com/hoist-gg/hoist/gamelift"
)

// authenticate checks a request's signature against the upload credentials it names, their
// session token and lifetime, and that they cover the bucket and key addressed. On success the
// grant and the verified body are in q.
func (h *Handler) authenticate(q *request, op *operation) error {
	secret := func(id string) (string, error) {
		g, err := h.builds.UploadGrant(q.r.Context(), id)
		switch {
		case errors.Is(err, gamelift.ErrUploadKeyUnknown):
			return "", errorf("InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.")
		case errors.Is(err, gamelift.ErrUploadKeyExpired):
			return "", errorf("ExpiredToken", "The provided token has expired.")
		case err != nil:
			return "", err
		}
		q.grant, q.keyID = g, id
		return g.SecretAccessKey, nil
	}
	id, body, err := h.verifier.VerifyS3(q.r, secret)
	if err != nil {
		return err
	}
	q.body = body
	if subtle.ConstantTimeCompare([]byte(id.SessionToken), []byte(q.grant.SessionToken)) != 1 {
		return errorf("InvalidToken", "The provided token is malformed or otherwise invalid.")
	}
	if q.bucket != q.grant.Bucket || q.key != q.grant.Key {
		return errorf("AccessDenied", "Access Denied: these credentials may only upload %s/%s.", q.grant.Bucket, q.grant.Key)
	}
	if op.write && !q.grant.Open {
		return errorf("AccessDenied", "Access Denied: build %s no longer accepts an upload; create a new build.", q.grant.BuildID)
	}
	return nil
}
