package server_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/hoist-gg/hoist/server"
)

// s3Client is an S3 client for the server's S3 endpoint with upload credentials, configured as
// users configure theirs (a base endpoint; path style follows from the IP address).
func s3Client(srv *server.Server, c *types.AwsCredentials) *s3.Client {
	return s3.New(s3.Options{
		Region:       srv.Region(),
		BaseEndpoint: aws.String(srv.S3URL()),
		UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(aws.ToString(c.AccessKeyId),
			aws.ToString(c.SecretAccessKey), aws.ToString(c.SessionToken)),
		RetryMaxAttempts:           1,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenSupported,
	})
}

// bigZip returns a zip of more than 16 MiB (stored, so it stays that large) with an install
// script at its root.
func bigZip(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	payload := make([]byte, 17<<20)
	rand.Read(payload)
	for name, content := range map[string][]byte{"install.sh": []byte("#!/bin/sh\necho installed\n"), "bin/server": payload} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(content)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestBuildUploadEndToEnd: CreateBuild over the GameLift API (CBOR), a multipart upload with the
// S3 upload manager and the credentials CreateBuild returned, and the build READY with its
// uncompressed size; credentials of the build cannot write another build's object.
func TestBuildUploadEndToEnd(t *testing.T) {
	data := t.TempDir()
	srv := startServer(t, server.Config{DataDir: data, S3Listen: "127.0.0.1:0"})
	gl := client(srv.URL(), testKeyID, testSecret)
	ctx := context.Background()
	out, err := gl.CreateBuild(ctx, &gamelift.CreateBuildInput{Name: aws.String("big"), OperatingSystem: types.OperatingSystemAmazonLinux2023})
	if err != nil {
		t.Fatal(err)
	}
	if out.UploadCredentials == nil || aws.ToString(out.StorageLocation.Bucket) != "hoist-builds" {
		t.Fatalf("CreateBuild: credentials %v, location %+v", out.UploadCredentials, out.StorageLocation)
	}
	other, err := gl.CreateBuild(ctx, &gamelift.CreateBuildInput{OperatingSystem: types.OperatingSystemAmazonLinux2023})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s3Client(srv, out.UploadCredentials).PutObject(ctx, &s3.PutObjectInput{Bucket: other.StorageLocation.Bucket,
		Key: other.StorageLocation.Key, Body: bytes.NewReader([]byte("x"))})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "AccessDenied" {
		t.Errorf("writing another build's object: %v, want AccessDenied", err)
	}
	body := bigZip(t)
	up := manager.NewUploader(s3Client(srv, out.UploadCredentials))
	res, err := up.Upload(ctx, &s3.PutObjectInput{Bucket: out.StorageLocation.Bucket, Key: out.StorageLocation.Key, Body: bytes.NewReader(body)})
	if err != nil {
		t.Fatalf("Upload: %v", err)
	}
	if res.UploadID == "" {
		t.Errorf("the upload was not multipart")
	}
	desc, err := gl.DescribeBuild(ctx, &gamelift.DescribeBuildInput{BuildId: out.Build.BuildId})
	if err != nil {
		t.Fatal(err)
	}
	want := int64(17<<20) + int64(len("#!/bin/sh\necho installed\n"))
	if desc.Build.Status != types.BuildStatusReady || aws.ToInt64(desc.Build.SizeOnDisk) != want {
		t.Errorf("build %s, SizeOnDisk %d; want READY, %d", desc.Build.Status, aws.ToInt64(desc.Build.SizeOnDisk), want)
	}
	stored, err := os.ReadFile(filepath.Join(data, "builds", aws.ToString(out.Build.BuildId), "build.zip"))
	if err != nil || !bytes.Equal(stored, body) {
		t.Errorf("stored zip differs from the upload (%v)", err)
	}
}

// TestLocalBuild: a build directory on the server's host, named with the hoist-local bucket.
func TestLocalBuild(t *testing.T) {
	srv := startServer(t, server.Config{})
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "server"), []byte("0123456789"), 0o700)
	gl := client(srv.URL(), testKeyID, testSecret)
	out, err := gl.CreateBuild(context.Background(), &gamelift.CreateBuildInput{OperatingSystem: types.OperatingSystemAmazonLinux2023,
		StorageLocation: &types.S3Location{Bucket: aws.String("hoist-local"), Key: aws.String(dir)}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Build.Status != types.BuildStatusReady || aws.ToInt64(out.Build.SizeOnDisk) != 10 || out.UploadCredentials != nil {
		t.Errorf("build %s, SizeOnDisk %d, credentials %v", out.Build.Status, aws.ToInt64(out.Build.SizeOnDisk), out.UploadCredentials)
	}
	if srv.S3URL() != "" {
		t.Errorf("S3URL = %q with no S3Listen", srv.S3URL())
	}
}
