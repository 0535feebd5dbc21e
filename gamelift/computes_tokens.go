package gamelift

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/google/uuid"
	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// tokenDoc is a compute auth token, stored under the token itself with Parent = the fleet ID,
// so that any server node sharing the store can check a token a process presents.
type tokenDoc struct {
	FleetID string `json:"fleetId"`
	Compute string `json:"compute"`
	Expires int64  `json:"expires"` // Unix milliseconds
}

// newAuthToken returns a fresh token: a random (version 4) UUID, 122 random bits from
// crypto/rand, in the UUID-like form GameLift's tokens are observed to have. Never the
// injected NewID, which tests make predictable.
func newAuthToken() string { return uuid.NewString() }

// GetComputeAuthToken issues an auth token for a registered compute, valid for the configured
// lifetime (DefaultComputeAuthTokenLifetime). Earlier tokens stay valid until they expire, so
// processes already started with one keep working while an agent refreshes.
func (s *Service) GetComputeAuthToken(ctx context.Context, in *api.GetComputeAuthTokenInput) (*api.GetComputeAuthTokenOutput, error) {
	fleetID, name, err := s.computeRef(in.FleetId, in.ComputeName)
	if err != nil {
		return nil, err
	}
	token := newAuthToken()
	expires := s.clock.Now().Add(s.hosting.tokenLifetime).UnixMilli()
	err = s.update(ctx, func(tx store.Tx) error {
		if _, err := s.liveFleet(tx, fleetID); err != nil {
			return err
		}
		if _, err := tx.Get(kindCompute, computeKey(fleetID, name)); errors.Is(err, store.ErrNotFound) {
			return computeNotFound(fleetID, name)()
		} else if err != nil {
			return err
		}
		return insertChild(tx, kindComputeToken, token, fleetID, &tokenDoc{FleetID: fleetID, Compute: name, Expires: expires})
	})
	if err != nil {
		return nil, err
	}
	return &api.GetComputeAuthTokenOutput{
		FleetId: api.String(fleetID), FleetArn: api.String(s.arn(arnFleet, fleetID)),
		ComputeName: api.String(name), ComputeArn: api.String(s.arn(arnCompute, name)),
		AuthToken: api.String(token), ExpirationTimestamp: stamp(expires),
	}, nil
}

// checkToken verifies, inside tx, that token is unexpired and was issued for the compute
// fleetID/compute, and that the compute is still registered. Every failure is the same
// UnauthorizedException, so a caller learns nothing about other fleets' tokens.
func (s *Service) checkToken(tx store.Tx, fleetID, compute, token string) error {
	denied := api.Errorf(api.UnauthorizedException,
		"The auth token is not valid for compute %s of fleet %s, or it has expired.", compute, fleetID)
	var doc tokenDoc
	if token == "" {
		return denied
	}
	if _, err := getDoc(tx, kindComputeToken, token, &doc, func() error { return denied }); err != nil {
		return err
	}
	if doc.FleetID != fleetID || doc.Compute != compute || doc.Expires <= s.nowMillis() {
		return denied
	}
	if _, err := tx.Get(kindCompute, computeKey(fleetID, compute)); errors.Is(err, store.ErrNotFound) {
		return denied
	} else if err != nil {
		return err
	}
	return nil
}

// deleteTokens removes the tokens issued for compute of fleet fleetID ("" = every compute).
func deleteTokens(tx store.Tx, fleetID, compute string) error {
	return eachChild(tx, kindComputeToken, fleetID, func(r *store.Record, d *tokenDoc) error {
		if compute != "" && d.Compute != compute {
			return nil
		}
		return tx.Delete(kindComputeToken, r.ID)
	})
}

// purgeExpiredTokens deletes every token that has expired, in one transaction.
func (s *Service) purgeExpiredTokens(ctx context.Context) error {
	return s.update(ctx, func(tx store.Tx) error {
		recs, err := tx.List(kindComputeToken, store.ListOptions{})
		if err != nil {
			return err
		}
		now := s.nowMillis()
		for _, r := range recs {
			var d tokenDoc
			if err := json.Unmarshal(r.Data, &d); err != nil {
				return err
			}
			if d.Expires <= now {
				if err := tx.Delete(kindComputeToken, r.ID); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// AuthenticateCompute checks that token is an unexpired auth token issued for compute of
// fleetID, which is still registered (the check a log upload passes).
func (s *Service) AuthenticateCompute(ctx context.Context, fleetID, compute, token string) error {
	return s.view(ctx, func(tx store.Tx) error { return s.checkToken(tx, fleetID, compute, token) })
}

// AdmitAgent checks a host agent's connection as AuthenticateCompute does, and records that
// the compute has an agent (computeDoc.Agent) connected to this node (computeDoc.Node).
func (s *Service) AdmitAgent(ctx context.Context, fleetID, compute, token string) error {
	known := false
	err := s.view(ctx, func(tx store.Tx) error {
		if err := s.checkToken(tx, fleetID, compute, token); err != nil {
			return err
		}
		_, c, err := readCompute(tx, fleetID, compute)
		known = c != nil && c.Agent && c.Node == s.node
		return err
	})
	if err != nil || known {
		return err
	}
	return s.update(ctx, func(tx store.Tx) error {
		rec, c, err := readCompute(tx, fleetID, compute)
		if err != nil || c == nil || (c.Agent && c.Node == s.node) {
			return err
		}
		c.Agent, c.Node = true, s.node
		return putDoc(tx, rec, c)
	})
}
