package s3api

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hoist-gg/hoist/store"
)

// Multipart limits of S3 (Amazon S3 User Guide, "Amazon S3 multipart upload limits").
const (
	maxPartNumber = 10000
	minPartSize   = 5 << 20 // every part but the last
	// maxCompleteBody bounds a CompleteMultipartUpload document.
	maxCompleteBody = 4 << 20
)

// s3Namespace is the XML namespace of S3's documents.
const s3Namespace = "http://s3.amazonaws.com/doc/2006-03-01/"

// openUpload returns the request's upload, or NoSuchUpload.
func (h *Handler) openUpload(q *request) (upload, error) {
	u := upload{buildID: q.grant.BuildID, id: q.r.URL.Query().Get("uploadId")}
	if u.id == "" || strings.ContainsAny(u.id, `/\.`) {
		return u, noSuchUpload()
	}
	_, err := h.uploadStarted(q.r.Context(), u)
	if errors.Is(err, store.ErrNotFound) {
		return u, noSuchUpload()
	}
	return u, err
}

func noSuchUpload() error {
	return errorf("NoSuchUpload", "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.")
}

// initiateResult is CreateMultipartUpload's answer.
type initiateResult struct {
	XMLName  xml.Name `xml:"InitiateMultipartUploadResult"`
	NS       string   `xml:"xmlns,attr"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	UploadID string   `xml:"UploadId"`
}

// createMultipart starts a multipart upload.
func (h *Handler) createMultipart(q *request) error {
	if _, err := io.Copy(io.Discard, q.body); err != nil {
		return err
	}
	h.SweepUploads(q.r.Context())
	u := upload{buildID: q.grant.BuildID, id: randomID()}
	if err := h.startUpload(q.r.Context(), u); err != nil {
		return err
	}
	if alg := q.r.Header.Get("X-Amz-Checksum-Algorithm"); alg != "" {
		q.w.Header().Set("X-Amz-Checksum-Algorithm", alg)
	}
	q.reply(initiateResult{NS: s3Namespace, Bucket: q.bucket, Key: q.key, UploadID: u.id})
	return nil
}

// uploadPart receives one part.
func (h *Handler) uploadPart(q *request) error {
	n, err := strconv.Atoi(q.r.URL.Query().Get("partNumber"))
	if err != nil || n < 1 || n > maxPartNumber {
		return errorf("InvalidArgument", "Part number must be an integer between 1 and %d, inclusive.", maxPartNumber)
	}
	u, err := h.openUpload(q)
	if err != nil {
		return err
	}
	staged := filepath.Join(h.buildDir(q.grant.BuildID), "staging-"+randomID())
	rec, err := h.receive(q, staged)
	if err != nil {
		return err
	}
	defer os.Remove(staged)
	if err := h.putPart(q.r.Context(), u, n, rec.md5, staged); err != nil {
		return err
	}
	q.w.Header().Set("ETag", rec.etag)
	q.setChecksumHeader(rec)
	q.w.WriteHeader(http.StatusOK)
	return nil
}

// completeRequest is CompleteMultipartUpload's body.
type completeRequest struct {
	Parts []struct {
		PartNumber int    `xml:"PartNumber"`
		ETag       string `xml:"ETag"`
	} `xml:"Part"`
}

// completeResult is CompleteMultipartUpload's answer.
type completeResult struct {
	XMLName  xml.Name `xml:"CompleteMultipartUploadResult"`
	NS       string   `xml:"xmlns,attr"`
	Location string   `xml:"Location"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	ETag     string   `xml:"ETag"`
}

// completeMultipart joins the listed parts into the zip and commits it, on whichever node the
// parts were received.
func (h *Handler) completeMultipart(q *request) error {
	u, err := h.openUpload(q)
	if err != nil {
		return err
	}
	var req completeRequest
	data, err := io.ReadAll(io.LimitReader(q.body, maxCompleteBody))
	if err != nil {
		return err
	}
	if err := xml.Unmarshal(data, &req); err != nil || len(req.Parts) == 0 {
		return errorf("MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema.")
	}
	staged := filepath.Join(h.buildDir(q.grant.BuildID), "staging-"+randomID())
	etag, err := h.joinParts(q.r.Context(), u, req, staged)
	if err != nil {
		return err
	}
	defer os.Remove(staged)
	if err := h.commit(q, staged); err != nil {
		return err
	}
	if err := h.removeUpload(context.WithoutCancel(q.r.Context()), u); err != nil {
		h.log.Warn("s3: remove a completed multipart upload", "upload", u.id, "build", u.buildID, "err", err)
	}
	q.reply(completeResult{NS: s3Namespace, Location: "/" + q.bucket + "/" + q.key, Bucket: q.bucket, Key: q.key, ETag: etag})
	return nil
}

// joinParts checks the listed parts (ascending, present, matching ETags, all but the last at
// least 5 MiB) and concatenates them into dst. It returns the multipart ETag: the MD5 of the
// parts' MD5s, "-", the number of parts.
func (h *Handler) joinParts(ctx context.Context, u upload, req completeRequest, dst string) (etag string, err error) {
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(dst)
		}
	}()
	for i, p := range req.Parts {
		if i > 0 && p.PartNumber <= req.Parts[i-1].PartNumber {
			return "", errorf("InvalidPartOrder", "The list of parts was not in ascending order. The parts list must be specified in order by part number.")
		}
	}
	all := md5.New()
	for i, p := range req.Parts {
		sum, err := h.appendPart(ctx, out, u, p.PartNumber, p.ETag, i == len(req.Parts)-1)
		if err != nil {
			return "", err
		}
		all.Write(sum)
	}
	return `"` + hex.EncodeToString(all.Sum(nil)) + "-" + strconv.Itoa(len(req.Parts)) + `"`, out.Sync()
}

// appendPart copies part n to out after checking its ETag and size; it returns the part's MD5.
func (h *Handler) appendPart(ctx context.Context, out io.Writer, u upload, n int, etag string, last bool) ([]byte, error) {
	p, err := h.openPart(ctx, u, n)
	if errors.Is(err, store.ErrNotFound) {
		return nil, invalidPart()
	}
	if err != nil {
		return nil, err
	}
	defer closeQuietly(p.body)
	if hex.EncodeToString(p.md5) != strings.Trim(etag, `"`) {
		return nil, invalidPart()
	}
	if p.size < minPartSize && !last {
		return nil, errorf("EntityTooSmall", "Your proposed upload is smaller than the minimum allowed object size.")
	}
	if _, err := io.Copy(out, p.body); err != nil {
		return nil, err
	}
	return p.md5, nil
}

func invalidPart() error {
	return errorf("InvalidPart", "One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.")
}

// abortMultipart drops an upload and its parts.
func (h *Handler) abortMultipart(q *request) error {
	u, err := h.openUpload(q)
	if err != nil {
		return err
	}
	if err := h.removeUpload(q.r.Context(), u); err != nil {
		return err
	}
	q.w.WriteHeader(http.StatusNoContent)
	return nil
}

// listPartsResult is ListParts' answer (all parts on one page).
type listPartsResult struct {
	XMLName     xml.Name   `xml:"ListPartsResult"`
	NS          string     `xml:"xmlns,attr"`
	Bucket      string     `xml:"Bucket"`
	Key         string     `xml:"Key"`
	UploadID    string     `xml:"UploadId"`
	MaxParts    int        `xml:"MaxParts"`
	IsTruncated bool       `xml:"IsTruncated"`
	Parts       []partInfo `xml:"Part"`
}

type partInfo struct {
	PartNumber   int    `xml:"PartNumber"`
	LastModified string `xml:"LastModified"`
	ETag         string `xml:"ETag"`
	Size         int64  `xml:"Size"`
}

// listParts lists the parts uploaded so far, through any node.
func (h *Handler) listParts(q *request) error {
	u, err := h.openUpload(q)
	if err != nil {
		return err
	}
	numbers, err := h.partNumbers(q.r.Context(), u)
	if err != nil {
		return err
	}
	res := listPartsResult{NS: s3Namespace, Bucket: q.bucket, Key: q.key, UploadID: u.id, MaxParts: maxPartNumber}
	for _, n := range numbers {
		p, err := h.openPart(q.r.Context(), u, n)
		if errors.Is(err, store.ErrNotFound) {
			continue // removed since it was listed
		}
		if err != nil {
			return err
		}
		closeQuietly(p.body)
		res.Parts = append(res.Parts, partInfo{PartNumber: n, ETag: `"` + hex.EncodeToString(p.md5) + `"`, Size: p.size,
			LastModified: p.received.UTC().Format(time.RFC3339)})
	}
	q.reply(res)
	return nil
}
