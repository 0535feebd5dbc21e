package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/aws/smithy-go"

	"github.com/hoist-gg/hoist/agent/supervisor"
)

// RemoteConfig says how to reach a Hoist server (or GameLift) over the network.
type RemoteConfig struct {
	// Endpoint is the control-plane URL (the aws-sdk-go-v2 BaseEndpoint), e.g.
	// http://hoist.example:9080.
	Endpoint string
	Region   string
	// AccessKeyID, SecretAccessKey and SessionToken sign requests (SigV4).
	AccessKeyID, SecretAccessKey, SessionToken string
	Logger                                     *slog.Logger
}

// Remote is the ControlPlane over the network: GameLift API calls through the real
// aws-sdk-go-v2 gamelift client, and the agent websocket through DialLink.
type Remote struct {
	api *gamelift.Client
	log *slog.Logger
}

var _ ControlPlane = (*Remote)(nil)

// NewRemote returns a Remote for cfg.
func NewRemote(cfg RemoteConfig) *Remote {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	api := gamelift.New(gamelift.Options{
		Region:       cfg.Region,
		BaseEndpoint: aws.String(cfg.Endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken),
	})
	return &Remote{api: api, log: cfg.Logger}
}

// RegisterCompute calls GameLift RegisterCompute.
func (r *Remote) RegisterCompute(ctx context.Context, c Compute) (Registration, error) {
	in := &gamelift.RegisterComputeInput{
		FleetId:     aws.String(c.FleetID),
		ComputeName: aws.String(c.ComputeName),
		IpAddress:   optional(c.IPAddress),
		DnsName:     optional(c.DNSName),
		Location:    optional(c.Location),
	}
	out, err := r.api.RegisterCompute(ctx, in)
	if err != nil {
		return Registration{}, classify("RegisterCompute", err)
	}
	return registration(out.Compute), nil
}

// DescribeCompute calls GameLift DescribeCompute.
func (r *Remote) DescribeCompute(ctx context.Context, fleetID, computeName string) (Registration, error) {
	out, err := r.api.DescribeCompute(ctx, &gamelift.DescribeComputeInput{
		FleetId: aws.String(fleetID), ComputeName: aws.String(computeName),
	})
	if err != nil {
		return Registration{}, classify("DescribeCompute", err)
	}
	return registration(out.Compute), nil
}

// GetComputeAuthToken calls GameLift GetComputeAuthToken.
func (r *Remote) GetComputeAuthToken(ctx context.Context, fleetID, computeName string) (Token, error) {
	out, err := r.api.GetComputeAuthToken(ctx, &gamelift.GetComputeAuthTokenInput{
		FleetId: aws.String(fleetID), ComputeName: aws.String(computeName),
	})
	if err != nil {
		return Token{}, classify("GetComputeAuthToken", err)
	}
	t := Token{Value: aws.ToString(out.AuthToken)}
	if out.ExpirationTimestamp != nil {
		t.Expires = *out.ExpirationTimestamp
	}
	if t.Value == "" {
		return Token{}, errors.New("GetComputeAuthToken: empty token")
	}
	return t, nil
}

// DescribeRuntimeConfiguration calls GameLift DescribeRuntimeConfiguration.
func (r *Remote) DescribeRuntimeConfiguration(ctx context.Context, fleetID string) (RuntimeConfiguration, error) {
	out, err := r.api.DescribeRuntimeConfiguration(ctx, &gamelift.DescribeRuntimeConfigurationInput{
		FleetId: aws.String(fleetID),
	})
	if err != nil {
		return RuntimeConfiguration{}, classify("DescribeRuntimeConfiguration", err)
	}
	var rc RuntimeConfiguration
	if c := out.RuntimeConfiguration; c != nil {
		rc.GameSessionActivationTimeoutSeconds = int(aws.ToInt32(c.GameSessionActivationTimeoutSeconds))
		rc.MaxConcurrentGameSessionActivations = int(aws.ToInt32(c.MaxConcurrentGameSessionActivations))
		for _, sp := range c.ServerProcesses {
			rc.ServerProcesses = append(rc.ServerProcesses, supervisor.ServerProcess{
				LaunchPath:           aws.ToString(sp.LaunchPath),
				Parameters:           aws.ToString(sp.Parameters),
				ConcurrentExecutions: int(aws.ToInt32(sp.ConcurrentExecutions)),
			})
		}
	}
	return rc, nil
}

// DeregisterCompute calls GameLift DeregisterCompute.
func (r *Remote) DeregisterCompute(ctx context.Context, fleetID, computeName string) error {
	_, err := r.api.DeregisterCompute(ctx, &gamelift.DeregisterComputeInput{
		FleetId: aws.String(fleetID), ComputeName: aws.String(computeName),
	})
	return classify("DeregisterCompute", err)
}

// Connect dials the agent websocket.
func (r *Remote) Connect(ctx context.Context, p LinkParams, onMessage func(Message)) (Link, error) {
	return DialLink(ctx, p, onMessage, r.log)
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}

func registration(c *types.Compute) Registration {
	if c == nil {
		return Registration{}
	}
	return Registration{
		SdkEndpoint:   aws.ToString(c.GameLiftServiceSdkEndpoint),
		AgentEndpoint: aws.ToString(c.GameLiftAgentEndpoint),
		Status:        string(c.ComputeStatus),
	}
}

// classify wraps a GameLift exception in the matching error kind.
func classify(op string, err error) error {
	if err == nil {
		return nil
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "NotReadyException":
			return fmt.Errorf("%s: %w: %w", op, ErrNotReady, err)
		case "ConflictException":
			return fmt.Errorf("%s: %w: %w", op, ErrConflict, err)
		case "NotFoundException":
			return fmt.Errorf("%s: %w: %w", op, ErrNotFound, err)
		case "UnauthorizedException", "UnrecognizedClientException", "InvalidSignatureException",
			"AccessDeniedException":
			return fmt.Errorf("%s: %w: %w", op, ErrUnauthorized, err)
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}
