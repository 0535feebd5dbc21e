package gamelift

import (
	"context"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// TLS fleets: a managed fleet created with CertificateConfiguration GENERATED gets a fleet
// certificate from Hoist's CA, which the host writes into every instance's sandbox, and its
// instances (and so their game sessions) carry a DNS name. See docs/managed-fleets.md.

// certificateGenerated is the CertificateType of a fleet with a generated TLS certificate.
const certificateGenerated = string(api.CertificateTypeGenerated)

// LocalDNSSuffix ends the DNS names of local instances. GameLift names the instances of TLS
// fleets <unique id>.<region id>.amazongamelift.com; a local instance is
// <instance-id>.<location>.hoist.localhost: ".localhost" is reserved for the loopback
// network (RFC 6761, section 6.3) and can never name a machine elsewhere.
const LocalDNSSuffix = "hoist.localhost"

// InstanceDNSName is the DNS name of a local instance of a TLS fleet.
func InstanceDNSName(instanceID, location string) string {
	return instanceID + "." + location + "." + LocalDNSSuffix
}

// CertificateHosts are the names a fleet certificate covers in a location: every instance
// name there (a wildcard, so that all the fleet's instances share the certificate, as on
// GameLift).
func CertificateHosts(location string) []string {
	return []string{"*." + location + "." + LocalDNSSuffix}
}

// InstanceCertificate records where the host wrote the fleet certificate of an instance (the
// path the instance's processes open); GetComputeCertificate answers it.
func (s *Service) InstanceCertificate(ctx context.Context, fleetID, instanceID, path string) error {
	return s.asOwner(ctx, instanceID, func(tx store.Tx) error {
		var c computeDoc
		rec, err := getDoc(tx, kindCompute, computeKey(fleetID, instanceID), &c, func() error { return errSkip })
		if err != nil {
			return ignoreSkip(err)
		}
		c.Certificate = path
		return putDoc(tx, rec, &c)
	})
}

// ComputeCertificate answers the Server SDK's GetComputeCertificate for a process: the path
// of its compute's TLS certificate and the compute name. A compute without one (a fleet
// whose CertificateConfiguration is DISABLED, an Anywhere compute registered without a
// CertificatePath) answers InvalidRequestException.
func (s *Service) ComputeCertificate(ctx context.Context, ref ProcessRef) (path, computeName string, err error) {
	var c computeDoc
	if err := s.read(ctx, kindCompute, computeKey(ref.FleetID, ref.ComputeName), &c, func() error {
		return api.Errorf(api.NotFoundException, "Compute %s not found in fleet %s.", ref.ComputeName, ref.FleetID)
	}); err != nil {
		return "", "", err
	}
	if c.Certificate == "" {
		return "", "", api.Errorf(api.InvalidRequestException,
			"Compute %s of fleet %s has no TLS certificate: the fleet's CertificateConfiguration is not GENERATED.", c.Name, ref.FleetID)
	}
	return c.Certificate, c.Name, nil
}
