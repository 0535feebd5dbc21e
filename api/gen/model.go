package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// Model is the stripped GameLift service model: the parts of botocore's service-2.json that
// the generator and the wire codecs need, without documentation text. Struct fields are
// declared in JSON key order so that the encoded model has sorted keys.
type Model struct {
	Metadata   Metadata              `json:"metadata"`
	Operations map[string]*Operation `json:"operations"`
	Shapes     map[string]*Shape     `json:"shapes"`
}

// Metadata is the service identity as the wire protocols need it.
type Metadata struct {
	APIVersion       string   `json:"apiVersion"`
	EndpointPrefix   string   `json:"endpointPrefix"`
	JSONVersion      string   `json:"jsonVersion"`
	Protocols        []string `json:"protocols"`
	ServiceID        string   `json:"serviceId"`
	SignatureVersion string   `json:"signatureVersion"`
	TargetPrefix     string   `json:"targetPrefix"`
	UID              string   `json:"uid"`
}

// Operation is one API operation: its input, output (absent for some) and modeled errors.
type Operation struct {
	Errors []Ref  `json:"errors,omitempty"`
	Input  *Ref   `json:"input,omitempty"`
	Name   string `json:"name"`
	Output *Ref   `json:"output,omitempty"`
}

// Ref names a shape.
type Ref struct {
	Shape string `json:"shape"`
}

// Shape is one model shape with its constraints. Min and Max keep the model's number text.
type Shape struct {
	Enum      []string       `json:"enum,omitempty"`
	Exception bool           `json:"exception,omitempty"`
	Fault     bool           `json:"fault,omitempty"`
	Key       *Ref           `json:"key,omitempty"`
	Max       json.Number    `json:"max,omitempty"`
	Member    *Ref           `json:"member,omitempty"`
	Members   map[string]Ref `json:"members,omitempty"`
	Min       json.Number    `json:"min,omitempty"`
	Pattern   string         `json:"pattern,omitempty"`
	Required  []string       `json:"required,omitempty"`
	Sensitive bool           `json:"sensitive,omitempty"`
	Type      string         `json:"type"`
	Value     *Ref           `json:"value,omitempty"`
}

// readModel reads a model file, gzip-compressed or not. Unknown keys (documentation, http,
// examples, ...) are dropped by decoding into Model.
func readModel(path string) (*Model, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if raw, err = io.ReadAll(zr); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	var m Model
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, checkModel(&m)
}

// encodeModel renders m as pretty-printed JSON with sorted keys and a final newline.
func encodeModel(m *Model) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// checkModel verifies that every shape reference resolves and every operation has an input.
func checkModel(m *Model) error {
	if len(m.Operations) == 0 || len(m.Shapes) == 0 {
		return fmt.Errorf("model has no operations or no shapes")
	}
	var bad []string
	ref := func(where string, r *Ref) {
		if r != nil && m.Shapes[r.Shape] == nil {
			bad = append(bad, where+" -> "+r.Shape)
		}
	}
	for name, op := range m.Operations {
		if op.Input == nil {
			bad = append(bad, name+": no input")
		}
		ref(name+".input", op.Input)
		ref(name+".output", op.Output)
		for i := range op.Errors {
			ref(name+".errors", &op.Errors[i])
		}
	}
	for name, s := range m.Shapes {
		ref(name+".member", s.Member)
		ref(name+".key", s.Key)
		ref(name+".value", s.Value)
		for mn, r := range s.Members {
			ref(name+"."+mn, &r)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("model has dangling references: %s", strings.Join(bad, ", "))
	}
	return nil
}
