package snsapi

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/hoist-gg/hoist/notify"
)

// form is an awsQuery request's parameters.
type form url.Values

// get returns a parameter, "" when absent.
func (f form) get(name string) string { return url.Values(f).Get(name) }

// required returns a parameter, or the ValidationError of its absence.
func (f form) required(name string) (string, error) {
	v := f.get(name)
	if v == "" {
		return "", &queryError{code: "ValidationError", status: http.StatusBadRequest,
			msg: "1 validation error detected: Value null at '" + lowerFirst(name) + "' failed to satisfy constraint: Member must not be null"}
	}
	return v, nil
}

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }

// flag reads a boolean parameter.
func (f form) flag(name string) bool { return strings.EqualFold(f.get(name), "true") }

// indexes returns the N of every parameter named prefix.N.<rest>, in order.
func (f form) indexes(prefix string) []int {
	seen := map[int]bool{}
	var out []int
	for k := range f {
		rest, ok := strings.CutPrefix(k, prefix+".")
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(rest, ".")
		if n, err := strconv.Atoi(num); err == nil && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

// stringMap reads a map of strings serialized as name.entry.N.key / name.entry.N.value.
func (f form) stringMap(name string) map[string]string {
	prefix := name + ".entry"
	out := map[string]string{}
	for _, n := range f.indexes(prefix) {
		p := prefix + "." + strconv.Itoa(n)
		out[f.get(p+".key")] = f.get(p + ".value")
	}
	return out
}

// messageAttributes reads MessageAttributes.entry.N.Name / .Value.DataType /
// .Value.StringValue / .Value.BinaryValue (base64).
func (f form) messageAttributes() (map[string]notify.MessageAttribute, error) {
	prefix := "MessageAttributes.entry"
	out := map[string]notify.MessageAttribute{}
	for _, n := range f.indexes(prefix) {
		p := prefix + "." + strconv.Itoa(n)
		a := notify.MessageAttribute{DataType: f.get(p + ".Value.DataType"), StringValue: f.get(p + ".Value.StringValue")}
		if b := f.get(p + ".Value.BinaryValue"); b != "" {
			data, err := base64.StdEncoding.DecodeString(b)
			if err != nil {
				return nil, &notify.Error{Code: notify.CodeInvalidParameter, Message: "Invalid parameter: MessageAttributes BinaryValue"}
			}
			a.BinaryValue = data
		}
		out[f.get(p+".Name")] = a
	}
	return out, nil
}

// serveQuery answers one awsQuery POST.
func (h *Handler) serveQuery(w http.ResponseWriter, r *http.Request) {
	id := newRequestID()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		h.writeError(w, id, &queryError{code: "RequestEntityTooLarge", status: http.StatusRequestEntityTooLarge, msg: "The request is too large."})
		return
	}
	if h.auth != nil {
		if aerr := h.auth(r, body); aerr != nil {
			h.writeError(w, id, authError(aerr))
			return
		}
	}
	values, err := url.ParseQuery(string(body))
	if err != nil {
		h.writeError(w, id, &queryError{code: "MalformedQueryString", status: http.StatusBadRequest, msg: "The request body is not a valid form."})
		return
	}
	f := form(values)
	action := f.get("Action")
	op, ok := operations[action]
	if !ok {
		h.writeError(w, id, &queryError{code: "InvalidAction", status: http.StatusBadRequest,
			msg: "The action " + action + " is not valid for this endpoint."})
		return
	}
	result, err := op(h, r.Context(), f)
	if err != nil {
		h.writeError(w, id, err)
		return
	}
	h.writeResult(w, action, id, result)
}

// operation is one SNS action: it reads its parameters, calls the service and returns its
// result element (nil for actions without one).
type operation func(h *Handler, ctx context.Context, f form) (any, error)

// operations is the table of SNS actions Hoist serves.
var operations = map[string]operation{
	"CreateTopic":               (*Handler).createTopic,
	"DeleteTopic":               (*Handler).deleteTopic,
	"ListTopics":                (*Handler).listTopics,
	"GetTopicAttributes":        (*Handler).getTopicAttributes,
	"SetTopicAttributes":        (*Handler).setTopicAttributes,
	"Subscribe":                 (*Handler).subscribe,
	"ConfirmSubscription":       (*Handler).confirmSubscription,
	"Unsubscribe":               (*Handler).unsubscribe,
	"ListSubscriptions":         (*Handler).listSubscriptions,
	"ListSubscriptionsByTopic":  (*Handler).listSubscriptionsByTopic,
	"GetSubscriptionAttributes": (*Handler).getSubscriptionAttributes,
	"Publish":                   (*Handler).publish,
}
