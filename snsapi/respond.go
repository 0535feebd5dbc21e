package snsapi

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"net/http"
	"strconv"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/notify"
	"github.com/hoist-gg/hoist/store"
)

// namespace is the XML namespace of SNS's answers.
const namespace = "http://sns.amazonaws.com/doc/2010-03-31/"

// queryError is an error of the protocol rather than of an operation.
type queryError struct {
	code, msg string
	status    int
}

func (e *queryError) Error() string { return e.code + ": " + e.msg }

// statuses are the HTTP statuses of notify's error codes (the SNS model's).
var statuses = map[string]int{
	notify.CodeNotFound:           http.StatusNotFound,
	notify.CodeInvalidParameter:   http.StatusBadRequest,
	notify.CodeAuthorizationError: http.StatusForbidden,
}

// authErrors translate the SigV4 verifier's errors into the codes awsQuery services use.
var authErrors = map[api.ErrorCode]queryError{
	api.UnrecognizedClientException:         {code: "InvalidClientTokenId", status: http.StatusForbidden},
	api.InvalidSignatureException:           {code: "SignatureDoesNotMatch", status: http.StatusForbidden},
	api.IncompleteSignatureException:        {code: "IncompleteSignature", status: http.StatusBadRequest},
	api.MissingAuthenticationTokenException: {code: "MissingAuthenticationToken", status: http.StatusForbidden},
}

// authError is the awsQuery form of an authentication error.
func authError(e *api.Error) *queryError {
	q, ok := authErrors[e.Code]
	if !ok {
		q = queryError{code: string(e.Code), status: e.Code.Status()}
	}
	q.msg = e.Message
	return &q
}

// errorBody is an <ErrorResponse>.
type errorBody struct {
	XMLName   xml.Name    `xml:"ErrorResponse"`
	Xmlns     string      `xml:"xmlns,attr"`
	Error     errorDetail `xml:"Error"`
	RequestID string      `xml:"RequestId"`
}

type errorDetail struct {
	Type    string `xml:"Type"`
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

// classify returns the code, HTTP status and message err is answered with.
func (h *Handler) classify(err error) (string, int, string) {
	var ne *notify.Error
	var qe *queryError
	switch {
	case errors.As(err, &ne):
		if status, ok := statuses[ne.Code]; ok {
			return ne.Code, status, ne.Message
		}
		return ne.Code, http.StatusBadRequest, ne.Message
	case errors.As(err, &qe):
		return qe.code, qe.status, qe.msg
	case errors.Is(err, store.ErrUnavailable):
		return "ServiceUnavailable", http.StatusServiceUnavailable, "The store is unavailable; try again."
	}
	h.log.Error("SNS operation failed", "err", err)
	return "InternalError", http.StatusInternalServerError, "An internal error occurred."
}

// writeError answers err as an <ErrorResponse>.
func (h *Handler) writeError(w http.ResponseWriter, id string, err error) {
	code, status, msg := h.classify(err)
	kind := "Sender"
	if status >= 500 {
		kind = "Receiver"
	}
	body, _ := xml.Marshal(errorBody{Xmlns: namespace, Error: errorDetail{kind, code, msg}, RequestID: id})
	h.writeXML(w, id, status, body)
}

// writeResult answers an action with its result element (none when result is nil).
func (h *Handler) writeResult(w http.ResponseWriter, action, id string, result any) {
	var b bytes.Buffer
	enc := xml.NewEncoder(&b)
	start := xml.StartElement{Name: xml.Name{Local: action + "Response"}, Attr: []xml.Attr{{Name: xml.Name{Local: "xmlns"}, Value: namespace}}}
	err := enc.EncodeToken(start)
	if err == nil && result != nil {
		err = enc.EncodeElement(result, xml.StartElement{Name: xml.Name{Local: action + "Result"}})
	}
	if err == nil {
		err = enc.EncodeElement(struct {
			RequestID string `xml:"RequestId"`
		}{id}, xml.StartElement{Name: xml.Name{Local: "ResponseMetadata"}})
	}
	if err == nil {
		err = enc.EncodeToken(start.End())
	}
	if err == nil {
		err = enc.Flush()
	}
	if err != nil {
		h.writeError(w, id, err)
		return
	}
	h.writeXML(w, id, http.StatusOK, b.Bytes())
}

func (h *Handler) writeXML(w http.ResponseWriter, id string, status int, body []byte) {
	w.Header().Set("Content-Type", "text/xml")
	w.Header().Set("x-amzn-RequestId", id)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// serveLink answers the unsigned SubscribeURL and UnsubscribeURL of messages: the token in
// the URL authenticates them.
func (h *Handler) serveLink(w http.ResponseWriter, r *http.Request) {
	id := newRequestID()
	q := r.URL.Query()
	action := q.Get("Action")
	var result any
	var err error
	if action == "ConfirmSubscription" {
		var arn string
		arn, err = h.svc.ConfirmSubscription(r.Context(), q.Get("TopicArn"), q.Get("Token"), false, false)
		result = subscriptionARNResult{arn}
	} else {
		err = h.svc.Unsubscribe(r.Context(), q.Get("SubscriptionArn"), q.Get("Token"), false)
	}
	if err != nil {
		h.writeError(w, id, err)
		return
	}
	h.writeResult(w, action, id, result)
}

// serveCert answers the signing certificate's URL.
func (h *Handler) serveCert(w http.ResponseWriter, r *http.Request) {
	name, pem, err := h.cert(r.Context())
	if err != nil {
		h.log.Error("signing certificate unavailable", "err", err)
		http.Error(w, "signing certificate unavailable", http.StatusServiceUnavailable)
		return
	}
	if r.URL.Path != CertPath(name) {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/x-pem-file")
	w.Write(pem)
}

// serveFailed answers FailedPath: the failed deliveries (of the topic TopicArn when given),
// as JSON. It is signed like an SNS request.
func (h *Handler) serveFailed(w http.ResponseWriter, r *http.Request) {
	id := newRequestID()
	if h.auth != nil {
		if aerr := h.auth(r, nil); aerr != nil {
			h.writeError(w, id, authError(aerr))
			return
		}
	}
	limit, _ := strconv.Atoi(r.URL.Query().Get("Limit"))
	failed, err := h.svc.FailedDeliveries(r.Context(), r.URL.Query().Get("TopicArn"), max(limit, 0))
	if err != nil {
		h.writeError(w, id, err)
		return
	}
	if failed == nil {
		failed = []notify.FailedDelivery{}
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(map[string]any{"FailedDeliveries": failed})
}
