package console

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// CookieName is the session cookie's name.
const CookieName = "hoist_console"

// CSRFHeader must be present (with any value) on every console request that changes state or
// calls an operation. A browser sends a custom header cross-origin only after a CORS
// preflight, which the console never approves; with the SameSite=Strict cookie this keeps
// other sites from acting with a logged-in operator's session.
const CSRFHeader = "X-Hoist-Console"

// tokenContext separates console session MACs from any other use of the secret key.
const tokenContext = "hoist console session v1"

// sessionKey derives the MAC key of session tokens from a secret access key, so that every
// node holding the same key pair accepts a token without shared session state.
func sessionKey(secret string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(tokenContext))
	return m.Sum(nil)
}

// tokenMAC is the MAC of a token for key ID id expiring at exp (Unix seconds).
func tokenMAC(secret, id string, exp int64) []byte {
	m := hmac.New(sha256.New, sessionKey(secret))
	m.Write([]byte(id + "\n" + strconv.FormatInt(exp, 10)))
	return m.Sum(nil)
}

// newToken returns a session token: <key ID>.<expiry>.<MAC>.
func newToken(secret, id string, exp time.Time) string {
	e := exp.Unix()
	return id + "." + strconv.FormatInt(e, 10) + "." + base64.RawURLEncoding.EncodeToString(tokenMAC(secret, id, e))
}

// checkToken returns the access key ID a token was issued to, if it is genuine and unexpired.
func (c *Console) checkToken(tok string) (string, bool) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || c.cfg.Keys == nil {
		return "", false
	}
	exp, err := strconv.ParseInt(parts[1], 10, 64)
	mac, merr := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || merr != nil || !c.cfg.Clock.Now().Before(time.Unix(exp, 0)) {
		return "", false
	}
	secret, ok := c.cfg.Keys(parts[0])
	if !ok || !hmac.Equal(mac, tokenMAC(secret, parts[0], exp)) {
		return "", false
	}
	return parts[0], true
}

// open reports whether the console needs no login (the server checks no signatures).
func (c *Console) open() bool { return c.cfg.Keys == nil }

// user returns the access key ID of r's session, or "" when r carries no valid one. In an
// open console everybody is "anonymous".
func (c *Console) user(r *http.Request) string {
	if c.open() {
		return "anonymous"
	}
	ck, err := r.Cookie(CookieName)
	if err != nil {
		return ""
	}
	id, _ := c.checkToken(ck.Value)
	return id
}

// authorize checks r's session, and for requests other than GET its CSRF header; it answers
// the failure itself and returns false.
func (c *Console) authorize(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Header.Get(CSRFHeader) == "" {
		writeJSONError(w, http.StatusForbidden, "AccessDeniedException", "console requests need the "+CSRFHeader+" header")
		return false
	}
	if c.user(r) == "" {
		writeJSONError(w, http.StatusUnauthorized, "UnauthorizedException", "log in to the console first")
		return false
	}
	return true
}

// sessionInfo is the answer of GET /console/session.
type sessionInfo struct {
	AccessKeyId string
	Open        bool
	Expires     int64 `json:",omitempty"`
}

// serveSession answers /console/session: GET (who), POST (log in), DELETE (log out).
func (c *Console) serveSession(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		if !c.authorize(w, r) {
			return
		}
		writeJSON(w, sessionInfo{AccessKeyId: c.user(r), Open: c.open()})
	case http.MethodPost:
		c.login(w, r)
	case http.MethodDelete:
		if r.Header.Get(CSRFHeader) == "" {
			writeJSONError(w, http.StatusForbidden, "AccessDeniedException", "console requests need the "+CSRFHeader+" header")
			return
		}
		c.setCookie(w, r, "", time.Unix(0, 0))
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeJSONError(w, http.StatusMethodNotAllowed, "InvalidRequestException", "use GET, POST or DELETE on "+Path+"/session")
	}
}

// loginInput is the body of POST /console/session.
type loginInput struct {
	AccessKeyId     string
	SecretAccessKey string
}

// login checks the key pair and sets the session cookie.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(CSRFHeader) == "" {
		writeJSONError(w, http.StatusForbidden, "AccessDeniedException", "console requests need the "+CSRFHeader+" header")
		return
	}
	var in loginInput
	if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&in); err != nil {
		writeJSONError(w, http.StatusBadRequest, "InvalidRequestException", "send {\"AccessKeyId\":...,\"SecretAccessKey\":...}")
		return
	}
	if c.open() {
		writeJSON(w, sessionInfo{AccessKeyId: "anonymous", Open: true})
		return
	}
	secret, ok := c.cfg.Keys(in.AccessKeyId)
	if !ok || subtle.ConstantTimeCompare([]byte(secret), []byte(in.SecretAccessKey)) != 1 {
		writeJSONError(w, http.StatusUnauthorized, "UnauthorizedException", "the access key ID or the secret access key is wrong")
		return
	}
	exp := c.cfg.Clock.Now().Add(c.cfg.SessionLifetime)
	c.setCookie(w, r, newToken(secret, in.AccessKeyId, exp), exp)
	writeJSON(w, sessionInfo{AccessKeyId: in.AccessKeyId, Expires: exp.Unix()})
}

// setCookie sets (or, with an expiry in the past, removes) the session cookie. It is Secure
// when the request came over TLS.
func (c *Console) setCookie(w http.ResponseWriter, r *http.Request, value string, exp time.Time) {
	ck := &http.Cookie{Name: CookieName, Value: value, Path: Path, Expires: exp, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil}
	if value == "" {
		ck.MaxAge = -1
	}
	http.SetCookie(w, ck)
}

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(v)
}
