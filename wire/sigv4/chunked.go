package sigv4

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"hash"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// The aws-chunked body (Amazon S3 API Reference, "Transferring Payload in Multiple Chunks" and
// "Signature calculations for trailing headers"):
//
//	signed:    hex(size);chunk-signature=<sig>\r\n <data> \r\n ... 0;chunk-signature=<sig>\r\n
//	unsigned:  hex(size)\r\n <data> \r\n ... 0\r\n
//
// then, with a trailer, lines "x-amz-checksum-crc32:<base64>\r\n" (and, when signed,
// "x-amz-trailer-signature:<sig>\r\n"), and a final empty line "\r\n". The signature of chunk n
// signs "AWS4-HMAC-SHA256-PAYLOAD\n" date "\n" scope "\n" sig(n-1) "\n" hash("") "\n"
// hash(data), starting from the seed (header) signature; the trailer signature signs
// "AWS4-HMAC-SHA256-TRAILER\n" date "\n" scope "\n" sig(last chunk) "\n" hash(trailer lines,
// each "name:value\n").

const (
	// maxChunkLine bounds a chunk header or trailer line.
	maxChunkLine = 4096
	// emptySHA256 is the hex SHA-256 of nothing.
	emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// chain is what chunk signatures are computed from.
type chain struct {
	key     [32]byte
	amzDate string
	scope   string
	prev    string // the previous signature, lower-case hex
}

// chunkReader decodes an aws-chunked body and checks its chunk and trailer signatures.
type chunkReader struct {
	br        *bufio.Reader
	signed    bool // chunks carry signatures
	trailer   http.Header
	chain     chain
	left      int64     // bytes of the current chunk still to read
	inChunk   bool      // a chunk's data is being read
	sig       string    // the current chunk's signature
	sum       hash.Hash // SHA-256 of the current chunk's data
	done      bool
	wantTrail bool // the payload hash announces a trailer
}

func newChunkReader(body io.Reader, payloadHash string, c chain) *chunkReader {
	return &chunkReader{br: bufio.NewReaderSize(body, 64<<10), chain: c, sum: sha256.New(),
		signed:    payloadHash != StreamingUnsignedTrailer,
		wantTrail: payloadHash != StreamingSigned, trailer: http.Header{}}
}

// malformed is the error for a body that is not aws-chunked as announced.
func malformed(what string) *S3Error {
	return s3Errorf("IncompleteBody", "The aws-chunked body is malformed: %s.", what)
}

// Read returns decoded object bytes.
func (c *chunkReader) Read(p []byte) (int, error) {
	for c.left == 0 {
		if c.done {
			return 0, io.EOF
		}
		if err := c.next(); err != nil {
			return 0, err
		}
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.br.Read(p)
	c.left -= int64(n)
	c.sum.Write(p[:n])
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// next ends the current chunk (if any) and starts the next one; after the final chunk it reads
// the trailer and sets done.
func (c *chunkReader) next() error {
	if c.inChunk {
		if err := c.endChunk(); err != nil {
			return err
		}
	}
	size, sig, err := c.header()
	if err != nil {
		return err
	}
	c.left, c.sig, c.inChunk = size, sig, true
	c.sum.Reset()
	if size > 0 {
		return nil
	}
	if err := c.checkChunk(); err != nil {
		return err
	}
	c.inChunk, c.done = false, true
	return c.readTrailer()
}

// endChunk reads the CRLF after a chunk's data and checks its signature.
func (c *chunkReader) endChunk() error {
	var crlf [2]byte
	if _, err := io.ReadFull(c.br, crlf[:]); err != nil {
		return s3Errorf("IncompleteBody", "The aws-chunked body ended inside a chunk.")
	}
	if crlf != [2]byte{'\r', '\n'} {
		return malformed("a chunk's data is not followed by CRLF")
	}
	c.inChunk = false
	return c.checkChunk()
}

// checkChunk checks the current chunk's signature and moves the chain on.
func (c *chunkReader) checkChunk() error {
	if !c.signed {
		return nil
	}
	sts := "AWS4-HMAC-SHA256-PAYLOAD\n" + c.chain.amzDate + "\n" + c.chain.scope + "\n" + c.chain.prev + "\n" +
		emptySHA256 + "\n" + hex.EncodeToString(c.sum.Sum(nil))
	return c.checkSig(sts, c.sig)
}

// checkSig compares sig with the signature of the string to sign and makes it the previous one.
func (c *chunkReader) checkSig(stringToSign, sig string) error {
	got := hmacSum(c.chain.key[:], stringToSign)
	want, ok := decodeSignature(sig)
	if !ok || subtle.ConstantTimeCompare(got, want[:]) != 1 {
		return s3SignatureMismatch()
	}
	c.chain.prev = strings.ToLower(sig)
	return nil
}

// header reads a chunk header: hex size, and for signed chunks ";chunk-signature=<sig>".
func (c *chunkReader) header() (int64, string, error) {
	line, err := c.line()
	if err != nil {
		return 0, "", err
	}
	sizeHex, ext, _ := strings.Cut(line, ";")
	size, perr := strconv.ParseInt(sizeHex, 16, 64)
	if perr != nil || size < 0 || len(sizeHex) > 16 {
		return 0, "", malformed("bad chunk size " + strconv.Quote(sizeHex))
	}
	if !c.signed {
		return size, "", nil
	}
	sig, ok := strings.CutPrefix(ext, "chunk-signature=")
	if !ok {
		return 0, "", malformed("a chunk has no chunk-signature")
	}
	return size, sig, nil
}

// line reads one CRLF-terminated line (without the CRLF).
func (c *chunkReader) line() (string, error) {
	b, err := c.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull || len(b) > maxChunkLine {
		return "", malformed("a line is too long")
	}
	if err != nil {
		return "", s3Errorf("IncompleteBody", "The aws-chunked body ended early.")
	}
	b = bytes.TrimSuffix(b[:len(b)-1], []byte{'\r'})
	return string(b), nil
}

// readTrailer reads the trailing header lines up to the empty line (or the end of the body)
// and checks the trailer signature of a signed body.
func (c *chunkReader) readTrailer() error {
	var canon strings.Builder
	sig := ""
	for {
		line, err := c.line()
		if err != nil || line == "" {
			break // the final CRLF is optional in practice
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return malformed("a trailer line has no colon")
		}
		name, value = strings.ToLower(strings.TrimSpace(name)), strings.TrimSpace(value)
		if name == "x-amz-trailer-signature" {
			sig = value
			continue
		}
		c.trailer.Add(name, value)
		canon.WriteString(name + ":" + value + "\n")
	}
	if !c.signed || !c.wantTrail {
		return nil
	}
	sum := sha256.Sum256([]byte(canon.String()))
	sts := "AWS4-HMAC-SHA256-TRAILER\n" + c.chain.amzDate + "\n" + c.chain.scope + "\n" + c.chain.prev + "\n" +
		hex.EncodeToString(sum[:])
	return c.checkSig(sts, sig)
}
