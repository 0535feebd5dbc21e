// Package message is the JSON wire model of the GameLift Server SDK 5.x websocket protocol and
// of the GameLift Agent websocket protocol: the envelope, every request, response and push,
// with the exact field names of server-sdk-protocol.md §2-§5 and §7.3.
//
// It holds data types and their encoding only, no behaviour. It may be imported by sdkws (the
// service side), serversdk (the game-server side) and tests; nothing else should need it.
package message

import (
	"bytes"
	"encoding/json"
	"errors"
)

// StatusOK is the StatusCode of every successful reply and of every push (§2.2: a push without
// StatusCode 200 is dropped by all three official SDKs).
const StatusOK = 200

// Envelope is the part every frame shares (§2.1). Request payload fields sit next to it at the
// top level of the same JSON object.
type Envelope struct {
	// Action names the message type (§3, §4, §7.3).
	Action string `json:"Action"`
	// RequestID correlates a reply with its request; pushes carry none.
	RequestID string `json:"RequestId,omitempty"`
	// StatusCode is set on service-to-SDK frames only: 200, or an HTTP-style error code.
	StatusCode int `json:"StatusCode,omitempty"`
	// ErrorMessage is set on error replies only.
	ErrorMessage string `json:"ErrorMessage,omitempty"`
}

// Message is a payload type: it knows its Action.
type Message interface {
	// Action returns the Action the payload travels under.
	Action() string
}

// ErrNotObject is returned by Encode when a payload does not encode to a JSON object.
var ErrNotObject = errors.New("message: payload does not encode to a JSON object")

// Encode returns one frame: env's fields followed by payload's fields, flattened into one JSON
// object as §2.1 requires. A nil payload gives the bare envelope (a "bare ack").
func Encode(env Envelope, payload any) ([]byte, error) {
	head, err := json.Marshal(env)
	if err != nil {
		return nil, err
	}
	if payload == nil {
		return head, nil
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	body = bytes.TrimSpace(body)
	if len(body) < 2 || body[0] != '{' {
		return nil, ErrNotObject
	}
	if len(bytes.TrimSpace(body[1:len(body)-1])) == 0 {
		return head, nil
	}
	out := make([]byte, 0, len(head)+len(body))
	out = append(out, head[:len(head)-1]...)
	out = append(out, ',')
	return append(out, body[1:]...), nil
}

// Decode reads the envelope of a frame. Payload fields are read by unmarshalling the same
// frame into the payload type (encoding/json ignores the envelope keys there and matches keys
// case-insensitively, which is the leniency §3 asks for).
func Decode(frame []byte) (Envelope, error) {
	var env Envelope
	err := json.Unmarshal(frame, &env)
	return env, err
}
