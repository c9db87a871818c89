package pdfstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// defaultRegion is used when neither AWS_REGION nor a profile sets one;
// S3-compatible stores usually ignore it but SigV4 needs a value.
const defaultRegion = "us-east-1"

// The SDK's switches for the flexible checksums it sends by default since
// early 2025 (CRC32 headers, aws-chunked trailers over TLS), which several
// S3-compatible stores reject.
const (
	envRequestChecksum  = "AWS_REQUEST_CHECKSUM_CALCULATION"
	envResponseChecksum = "AWS_RESPONSE_CHECKSUM_VALIDATION"
)

// S3 keeps PDFs as objects in a bucket (STORAGE_BACKEND=s3).
type S3 struct {
	client *s3.Client
	bucket string
}

// NewS3 returns an S3 store for bucket through the AWS SDK v2. Credentials
// and region come from the standard AWS sources (environment variables,
// shared config, instance or pod roles) via config.LoadDefaultConfig; the
// region defaults to us-east-1. With a non-empty endpoint (S3_ENDPOINT_URL,
// e.g. MinIO) requests go there with path-style addressing, and request
// checksums and response checksum validation are only used where the API
// requires them (see the package caveats), unless the environment sets
// AWS_REQUEST_CHECKSUM_CALCULATION / AWS_RESPONSE_CHECKSUM_VALIDATION. NewS3 makes no request; Check does.
func NewS3(ctx context.Context, bucket, endpoint string) (*S3, error) {
	if bucket == "" {
		return nil, errors.New("s3 storage: empty bucket name")
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("s3 storage: load aws config: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = defaultRegion
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if endpoint == "" {
			return
		}
		o.BaseEndpoint = aws.String(endpoint)
		o.UsePathStyle = true
		// LoadDefaultConfig turns "not set" into WhenSupported, so the
		// environment is asked directly whether the operator chose.
		if os.Getenv(envRequestChecksum) == "" {
			o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		}
		if os.Getenv(envResponseChecksum) == "" {
			o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		}
	})
	return &S3{client: client, bucket: bucket}, nil
}

// Put reads the whole PDF, then uploads it in one PutObject, which S3
// makes visible atomically. Reading first means a failing reader uploads
// nothing and the SDK gets a seekable body of known length.
func (s *S3) Put(ctx context.Context, patentID string, r io.Reader) (string, error) {
	key, err := Key(patentID)
	if err != nil {
		return "", err
	}
	body, err := io.ReadAll(ctxReader{ctx: ctx, r: r})
	if err != nil {
		return "", fmt.Errorf("s3 put %s: read pdf: %w", key, err)
	}
	_, err = s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(key),
		Body:          bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))),
		ContentType:   aws.String("application/pdf"),
	})
	if err != nil {
		return "", fmt.Errorf("s3 put %s: %w", key, err)
	}
	return "s3://" + s.bucket + "/" + key, nil
}

// Open returns the object's body, or ErrNotFound.
func (s *S3) Open(ctx context.Context, patentID string) (io.ReadCloser, error) {
	key, err := Key(patentID)
	if err != nil {
		return nil, err
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{
		Bucket: aws.String(s.bucket),
		Key:    aws.String(key),
	})
	if isNotFound(err) {
		return nil, fmt.Errorf("s3 get %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("s3 get %s: %w", key, err)
	}
	return out.Body, nil
}

// Exists reports whether the object is stored (a HeadObject).
func (s *S3) Exists(ctx context.Context, patentID string) (bool, error) {
	key, err := Key(patentID)
	if err != nil {
		return false, err
	}
	_, err = s.client.HeadObject(ctx, &s3.HeadObjectInput{
		Bucket: aws.String(s.bucket),
		Key:    aws.String(key),
	})
	if isNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("s3 head %s: %w", key, err)
	}
	return true, nil
}

// Check sends a HeadBucket: it fails when the endpoint does not answer,
// the credentials are refused or the bucket is missing.
func (s *S3) Check(ctx context.Context) error {
	if _, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(s.bucket)}); err != nil {
		return fmt.Errorf("s3 storage check: %w", err)
	}
	return nil
}

// isNotFound reports whether err says the object is missing. It reads the
// API error code (NoSuchKey from GetObject, NotFound from the body-less
// HeadObject) through the method set alone, and treats a missing bucket as
// a real failure, not as a missing PDF.
func isNotFound(err error) bool {
	if err == nil {
		return false
	}
	var coded interface{ ErrorCode() string }
	if errors.As(err, &coded) {
		switch coded.ErrorCode() {
		case "NoSuchKey", "NotFound":
			return true
		case "NoSuchBucket":
			return false
		}
	}
	var status interface{ HTTPStatusCode() int }
	return errors.As(err, &status) && status.HTTPStatusCode() == 404
}
