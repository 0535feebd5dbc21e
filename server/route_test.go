package server_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/hoist-gg/hoist/server"
)

// TestS3UploadOnAPIListener: with no separate S3 listener, one endpoint (the API's URL) serves
// the GameLift API, SNS and a multipart build upload, as AWS_ENDPOINT_URL does for every client.
func TestS3UploadOnAPIListener(t *testing.T) {
	srv := startServer(t, server.Config{})
	ctx := context.Background()
	gl := client(srv.URL(), testKeyID, testSecret)
	out, err := gl.CreateBuild(ctx, &gamelift.CreateBuildInput{Name: aws.String("one-endpoint"), OperatingSystem: types.OperatingSystemAmazonLinux2023})
	if err != nil {
		t.Fatal(err)
	}
	body := bigZip(t)
	up := manager.NewUploader(s3ClientAt(srv.URL(), srv.Region(), out.UploadCredentials))
	res, err := up.Upload(ctx, &s3.PutObjectInput{Bucket: out.StorageLocation.Bucket, Key: out.StorageLocation.Key, Body: bytes.NewReader(body)})
	if err != nil || res.UploadID == "" {
		t.Fatalf("multipart Upload on the API listener: %v (upload ID %q)", err, res.UploadID)
	}
	desc, err := gl.DescribeBuild(ctx, &gamelift.DescribeBuildInput{BuildId: out.Build.BuildId})
	if err != nil || desc.Build.Status != types.BuildStatusReady {
		t.Fatalf("DescribeBuild: %v, %+v; want READY", err, desc)
	}
	topics := sns.New(sns.Options{Region: srv.Region(), BaseEndpoint: aws.String(srv.URL()), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider(testKeyID, testSecret, "")})
	if _, err := topics.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("one-endpoint")}); err != nil {
		t.Errorf("SNS on the same endpoint: %v", err)
	}
}

// s3ClientAt is an S3 client for endpoint with upload credentials (path style, as botocore
// picks for an IP address).
func s3ClientAt(endpoint, region string, c *types.AwsCredentials) *s3.Client {
	return s3.New(s3.Options{
		Region: region, BaseEndpoint: aws.String(endpoint), UsePathStyle: true, RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider(aws.ToString(c.AccessKeyId),
			aws.ToString(c.SecretAccessKey), aws.ToString(c.SessionToken)),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenSupported,
	})
}
