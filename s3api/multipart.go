package s3api

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
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

// uploadDir is where the parts of a multipart upload are kept.
func (h *Handler) uploadDir(buildID, uploadID string) string {
	return filepath.Join(h.buildDir(buildID), "multipart", uploadID)
}

// partFile is the file of one part; its ETag is kept beside it in partFile + ".etag".
func partFile(dir string, n int) string { return filepath.Join(dir, strconv.Itoa(n)+".part") }

// openUpload returns the directory of the request's uploadId, or NoSuchUpload.
func (h *Handler) openUpload(q *request) (string, error) {
	id := q.r.URL.Query().Get("uploadId")
	if id == "" || strings.ContainsAny(id, `/\.`) {
		return "", noSuchUpload()
	}
	dir := h.uploadDir(q.grant.BuildID, id)
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return "", noSuchUpload()
	}
	return dir, nil
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
	id := randomID()
	if err := os.MkdirAll(h.uploadDir(q.grant.BuildID, id), 0o700); err != nil {
		return err
	}
	if alg := q.r.Header.Get("X-Amz-Checksum-Algorithm"); alg != "" {
		q.w.Header().Set("X-Amz-Checksum-Algorithm", alg)
	}
	q.reply(initiateResult{NS: s3Namespace, Bucket: q.bucket, Key: q.key, UploadID: id})
	return nil
}

// uploadPart receives one part.
func (h *Handler) uploadPart(q *request) error {
	n, err := strconv.Atoi(q.r.URL.Query().Get("partNumber"))
	if err != nil || n < 1 || n > maxPartNumber {
		return errorf("InvalidArgument", "Part number must be an integer between 1 and %d, inclusive.", maxPartNumber)
	}
	dir, err := h.openUpload(q)
	if err != nil {
		return err
	}
	staged := filepath.Join(dir, "staging-"+randomID())
	rec, err := h.receive(q, staged)
	if err != nil {
		return err
	}
	defer os.Remove(staged)
	if err := os.WriteFile(partFile(dir, n)+".etag", []byte(rec.etag), 0o600); err != nil {
		return err
	}
	if err := os.Rename(staged, partFile(dir, n)); err != nil {
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

// completeMultipart joins the listed parts into the zip and commits it.
func (h *Handler) completeMultipart(q *request) error {
	dir, err := h.openUpload(q)
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
	etag, err := joinParts(dir, req, staged)
	if err != nil {
		return err
	}
	defer os.Remove(staged)
	if err := h.commit(q, staged); err != nil {
		return err
	}
	os.RemoveAll(dir)
	q.reply(completeResult{NS: s3Namespace, Location: "/" + q.bucket + "/" + q.key, Bucket: q.bucket, Key: q.key, ETag: etag})
	return nil
}

// joinParts checks the listed parts (ascending, present, matching ETags, all but the last at
// least 5 MiB) and concatenates them into dst. It returns the multipart ETag: the MD5 of the
// parts' MD5s, "-", the number of parts.
func joinParts(dir string, req completeRequest, dst string) (etag string, err error) {
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
		sum, err := appendPart(out, dir, p.PartNumber, p.ETag, i == len(req.Parts)-1)
		if err != nil {
			return "", err
		}
		all.Write(sum)
	}
	return `"` + hex.EncodeToString(all.Sum(nil)) + "-" + strconv.Itoa(len(req.Parts)) + `"`, out.Sync()
}

// appendPart copies part n to out after checking its ETag and size; it returns the part's MD5.
func appendPart(out io.Writer, dir string, n int, etag string, last bool) ([]byte, error) {
	invalid := errorf("InvalidPart", "One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.")
	stored, err := os.ReadFile(partFile(dir, n) + ".etag")
	if err != nil || strings.Trim(string(stored), `"`) != strings.Trim(etag, `"`) {
		return nil, invalid
	}
	f, err := os.Open(partFile(dir, n))
	if err != nil {
		return nil, invalid
	}
	defer f.Close()
	size, err := io.Copy(out, f)
	if err != nil {
		return nil, err
	}
	if size < minPartSize && !last {
		return nil, errorf("EntityTooSmall", "Your proposed upload is smaller than the minimum allowed object size.")
	}
	return hex.DecodeString(strings.Trim(string(stored), `"`))
}

// abortMultipart drops an upload and its parts.
func (h *Handler) abortMultipart(q *request) error {
	dir, err := h.openUpload(q)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
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

// listParts lists the parts uploaded so far.
func (h *Handler) listParts(q *request) error {
	dir, err := h.openUpload(q)
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	res := listPartsResult{NS: s3Namespace, Bucket: q.bucket, Key: q.key, UploadID: q.r.URL.Query().Get("uploadId"), MaxParts: maxPartNumber}
	for _, e := range entries {
		n, err := strconv.Atoi(strings.TrimSuffix(e.Name(), ".part"))
		info, ierr := e.Info()
		etag, eerr := os.ReadFile(partFile(dir, n) + ".etag")
		if !strings.HasSuffix(e.Name(), ".part") || err != nil || ierr != nil || eerr != nil {
			continue
		}
		res.Parts = append(res.Parts, partInfo{PartNumber: n, ETag: string(etag), Size: info.Size(),
			LastModified: info.ModTime().UTC().Format(time.RFC3339)})
	}
	sort.Slice(res.Parts, func(i, j int) bool { return res.Parts[i].PartNumber < res.Parts[j].PartNumber })
	q.reply(res)
	return nil
}
