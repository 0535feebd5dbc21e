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
	// Endpoints are the control-plane URLs (aws-sdk-go-v2 BaseEndpoints) of the nodes of one
	// cluster, e.g. http://hoist-1.example:9080; calls go to the one that answered last and
	// move to the next when a node does not answer.
	Endpoints []string
	Region    string
	// AccessKeyID, SecretAccessKey and SessionToken sign requests (SigV4).
	AccessKeyID, SecretAccessKey, SessionToken string
	Logger                                     *slog.Logger
}

// Remote is the ControlPlane over the network: GameLift API calls through the real
// aws-sdk-go-v2 gamelift client, and the agent websocket through DialLink.
type Remote struct {
	apis      []*gamelift.Client
	endpoints []string
	rot       rotation
	log       *slog.Logger
}

var _ ControlPlane = (*Remote)(nil)

// NewRemote returns a Remote for cfg.
func NewRemote(cfg RemoteConfig) *Remote {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Remote{endpoints: cfg.Endpoints, rot: rotation{n: len(cfg.Endpoints)}, log: cfg.Logger}
	attempts := 0 // the SDK's default retries, with one node
	if len(cfg.Endpoints) > 1 {
		attempts = 1 // with several, the next node is the retry
	}
	for _, e := range cfg.Endpoints {
		r.apis = append(r.apis, gamelift.New(gamelift.Options{
			Region:           cfg.Region,
			BaseEndpoint:     aws.String(e),
			Credentials:      credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken),
			RetryMaxAttempts: attempts,
		}))
	}
	return r
}

// call runs one API call on the node that answered last, moving on to the next node while
// nodes do not answer; the error is classified for op.
func (r *Remote) call(ctx context.Context, op string, fn func(*gamelift.Client) error) error {
	var err error
	for _, i := range r.rot.order() {
		if err = fn(r.apis[i]); !unanswered(ctx, err) {
			r.rot.worked(i)
			return classify(op, err)
		}
		r.log.Warn("control plane did not answer; trying the next server", "server", r.endpoints[i], "op", op, "err", err)
	}
	return classify(op, err)
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
	var out *gamelift.RegisterComputeOutput
	err := r.call(ctx, "RegisterCompute", func(c *gamelift.Client) (err error) {
		out, err = c.RegisterCompute(ctx, in)
		return err
	})
	if err != nil {
		return Registration{}, err
	}
	return registration(out.Compute), nil
}

// DescribeCompute calls GameLift DescribeCompute.
func (r *Remote) DescribeCompute(ctx context.Context, fleetID, computeName string) (Registration, error) {
	var out *gamelift.DescribeComputeOutput
	err := r.call(ctx, "DescribeCompute", func(c *gamelift.Client) (err error) {
		out, err = c.DescribeCompute(ctx, &gamelift.DescribeComputeInput{FleetId: aws.String(fleetID), ComputeName: aws.String(computeName)})
		return err
	})
	if err != nil {
		return Registration{}, err
	}
	return registration(out.Compute), nil
}

// GetComputeAuthToken calls GameLift GetComputeAuthToken.
func (r *Remote) GetComputeAuthToken(ctx context.Context, fleetID, computeName string) (Token, error) {
	var out *gamelift.GetComputeAuthTokenOutput
	err := r.call(ctx, "GetComputeAuthToken", func(c *gamelift.Client) (err error) {
		out, err = c.GetComputeAuthToken(ctx, &gamelift.GetComputeAuthTokenInput{FleetId: aws.String(fleetID), ComputeName: aws.String(computeName)})
		return err
	})
	if err != nil {
		return Token{}, err
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
	var out *gamelift.DescribeRuntimeConfigurationOutput
	err := r.call(ctx, "DescribeRuntimeConfiguration", func(c *gamelift.Client) (err error) {
		out, err = c.DescribeRuntimeConfiguration(ctx, &gamelift.DescribeRuntimeConfigurationInput{FleetId: aws.String(fleetID)})
		return err
	})
	if err != nil {
		return RuntimeConfiguration{}, err
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
	return r.call(ctx, "DeregisterCompute", func(c *gamelift.Client) error {
		_, err := c.DeregisterCompute(ctx, &gamelift.DeregisterComputeInput{FleetId: aws.String(fleetID), ComputeName: aws.String(computeName)})
		return err
	})
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
