package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/hoist-gg/hoist/internal/cli"
	"github.com/hoist-gg/hoist/server"
)

// adminClient calls a running server's Hoist operations (outside GameLift's model) with
// SigV4-signed awsJson requests, as `hoist time` and `hoist fault` do.
type adminClient struct {
	endpoint, region string
	creds            aws.Credentials
	dataDir          string
}

// firstSet returns the first non-empty value.
func firstSet(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// flags registers the endpoint and key flags on fs. As every flag, each also reads HOIST_<FLAG>
// and --config (internal/cli); failing those, the endpoint, keys and region default to the AWS
// SDK's environment variables.
func (c *adminClient) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.endpoint, "endpoint", firstSet(os.Getenv("AWS_ENDPOINT_URL_GAMELIFT"), os.Getenv("AWS_ENDPOINT_URL"), "http://"+server.DefaultListen),
		"the server's API URL")
	fs.StringVar(&c.creds.AccessKeyID, "access-key-id", os.Getenv("AWS_ACCESS_KEY_ID"),
		"access key ID (default the pair in --data when neither this nor the secret is set)")
	fs.StringVar(&c.creds.SecretAccessKey, "secret-access-key", os.Getenv("AWS_SECRET_ACCESS_KEY"), "secret access key")
	fs.StringVar(&c.region, "region", firstSet(os.Getenv("AWS_REGION"), server.DefaultRegion), "SigV4 region")
	fs.StringVar(&c.dataDir, "data", server.DefaultDataDir, "a local server's data directory, whose generated key pair is used when no keys are given")
}

// adminDefaults are the shown defaults (docs/cli.md) of the flags whose default comes from the
// environment.
var adminDefaults = map[string]string{
	"endpoint":      "$AWS_ENDPOINT_URL_GAMELIFT, else $AWS_ENDPOINT_URL, else http://" + server.DefaultListen,
	"access-key-id": "$AWS_ACCESS_KEY_ID", "secret-access-key": "$AWS_SECRET_ACCESS_KEY", "region": "$AWS_REGION, else " + server.DefaultRegion,
}

// loadKeys falls back on the key pair a local server generated in its data directory.
func (c *adminClient) loadKeys() {
	if c.creds.AccessKeyID != "" {
		return
	}
	b, err := os.ReadFile(filepath.Join(c.dataDir, "credentials.json"))
	if err != nil {
		return
	}
	var pair server.Credentials
	if json.Unmarshal(b, &pair) == nil {
		c.creds.AccessKeyID, c.creds.SecretAccessKey = pair.AccessKeyID, pair.SecretAccessKey
	}
}

// call sends in to target and decodes the answer into out.
func (c *adminClient) call(ctx context.Context, target string, in, out any) error {
	c.loadKeys()
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(c.endpoint, "/")+"/", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("X-Amz-Target", target)
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, c.creds, req, hex.EncodeToString(sum[:]), "gamelift", c.region, time.Now()); err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return apiError(resp.StatusCode, raw)
	}
	return json.Unmarshal(raw, out)
}

// apiError turns an awsJson error answer into a one-line error.
func apiError(code int, raw []byte) error {
	var e struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Type == "" {
		return fmt.Errorf("HTTP %d: %s", code, strings.TrimSpace(string(raw)))
	}
	if i := strings.LastIndex(e.Type, "#"); i >= 0 {
		e.Type = e.Type[i+1:]
	}
	return errors.New(e.Type + ": " + e.Message)
}

// parseInterspersed parses fs over args with the command line conventions (cli.Parse: the
// environment, --config, one-line usage errors), allowing flags after positional arguments,
// and returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := cli.Parse(fs, args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
