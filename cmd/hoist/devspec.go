package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// specFiles are the files `hoist dev` reads beside the build, at most one of them.
var specFiles = []string{"hoist.yaml", "hoist.yml", "hoist.json"}

// devSpec is the fleet `hoist dev` creates as hoist.yaml or hoist.json write it, and as the
// flags give it (docs/dev.md). A single server process is written with launchPath,
// parameters and processes; several with serverProcesses. The inbound permissions are a
// portRange open for TCP and UDP, or inboundPermissions.
type devSpec struct {
	Name               string          `json:"name" yaml:"name"`
	InstanceType       string          `json:"instanceType" yaml:"instanceType"`
	Instances          int             `json:"instances" yaml:"instances"`
	LaunchPath         string          `json:"launchPath" yaml:"launchPath"`
	Parameters         string          `json:"parameters" yaml:"parameters"`
	Processes          int             `json:"processes" yaml:"processes"`
	ServerProcesses    []devProcess    `json:"serverProcesses" yaml:"serverProcesses"`
	MaxActivations     int             `json:"maxConcurrentGameSessionActivations" yaml:"maxConcurrentGameSessionActivations"`
	ActivationTimeout  int             `json:"gameSessionActivationTimeoutSeconds" yaml:"gameSessionActivationTimeoutSeconds"`
	PortRange          string          `json:"portRange" yaml:"portRange"`
	InboundPermissions []devPermission `json:"inboundPermissions" yaml:"inboundPermissions"`
}

// devProcess is one entry of the runtime configuration's server processes.
type devProcess struct {
	LaunchPath           string `json:"launchPath" yaml:"launchPath"`
	Parameters           string `json:"parameters" yaml:"parameters"`
	ConcurrentExecutions int    `json:"concurrentExecutions" yaml:"concurrentExecutions"`
}

// devPermission is one EC2 inbound permission.
type devPermission struct {
	FromPort int    `json:"fromPort" yaml:"fromPort"`
	ToPort   int    `json:"toPort" yaml:"toPort"`
	IPRange  string `json:"ipRange" yaml:"ipRange"`
	Protocol string `json:"protocol" yaml:"protocol"`
}

// fleetSpec is the fleet settled from the file and the flags: every launch path under
// /local/game/, every field filled.
type fleetSpec struct {
	Name              string
	InstanceType      string
	Instances         int
	Processes         []devProcess
	MaxActivations    int // 0: GameLift's default
	ActivationTimeout int // seconds; 0: GameLift's default
	Permissions       []devPermission
}

// processCount is how many server processes the fleet runs in all.
func (s fleetSpec) processCount() int {
	n := 0
	for _, p := range s.Processes {
		n += p.ConcurrentExecutions
	}
	return n * s.Instances
}

// readSpecFile reads hoist.yaml, hoist.yml or hoist.json in dir (unknown fields refused); no
// file is an empty spec.
func readSpecFile(dir string) (devSpec, error) {
	var s devSpec
	found := ""
	for _, name := range specFiles {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			if found != "" {
				return s, fmt.Errorf("both %s and %s in %s: keep one", found, name, dir)
			}
			found = name
		}
	}
	if found == "" {
		return s, nil
	}
	path := filepath.Join(dir, found)
	data, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	if err := decodeSpec(data, strings.HasSuffix(found, ".json"), &s); err != nil {
		return s, fmt.Errorf("%s: %v", path, err)
	}
	return s, checkSpecFile(s)
}

// decodeSpec decodes a spec file's JSON or YAML, refusing unknown fields.
func decodeSpec(data []byte, isJSON bool, s *devSpec) error {
	if isJSON {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		return dec.Decode(s)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(s); err != nil && !errors.Is(err, io.EOF) {
		return yamlError(err)
	}
	return nil
}

// yamlError makes a YAML decoding error one line: its several messages joined, and Go's
// type names replaced by what the file calls things.
func yamlError(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	names := strings.NewReplacer(" not found in type main.devSpec", " is not a hoist dev setting",
		" not found in type main.devProcess", " is not a serverProcesses setting",
		" not found in type main.devPermission", " is not an inboundPermissions setting", "main.", "")
	msgs := make([]string, len(te.Errors))
	for i, m := range te.Errors {
		msgs[i] = names.Replace(m)
	}
	return errors.New(strings.Join(msgs, "; "))
}

// checkSpecFile refuses a file that uses both forms of a setting.
func checkSpecFile(s devSpec) error {
	short := s.LaunchPath != "" || s.Parameters != "" || s.Processes != 0
	switch {
	case short && len(s.ServerProcesses) > 0:
		return errors.New("spec file: give launchPath/parameters/processes or serverProcesses, not both")
	case s.PortRange != "" && len(s.InboundPermissions) > 0:
		return errors.New("spec file: give portRange or inboundPermissions, not both")
	}
	return nil
}

// mergeSpec settles the fleet: each setting from its flag when given on the command line, in
// the environment or in --config, else from the spec file when set there, else the flag's
// default.
func mergeSpec(o *devOptions, file devSpec) (fleetSpec, error) {
	s := fleetSpec{Name: o.spec.Name, InstanceType: o.spec.InstanceType, Instances: o.spec.Instances,
		MaxActivations: o.spec.MaxActivations, Processes: mergeProcesses(o, file)}
	pickString(o, "name", file.Name, &s.Name)
	pickString(o, "instance-type", file.InstanceType, &s.InstanceType)
	pickInt(o, "instances", file.Instances, &s.Instances)
	pickInt(o, "max-concurrent-activations", file.MaxActivations, &s.MaxActivations)
	s.ActivationTimeout = file.ActivationTimeout
	if o.set["activation-timeout"] {
		d := o.activationTimeout
		if d < time.Second || d%time.Second != 0 {
			return s, fmt.Errorf("--activation-timeout %v: want whole seconds, at least 1s", d)
		}
		s.ActivationTimeout = int(d / time.Second)
	}
	perms, err := mergePermissions(o, file)
	s.Permissions = perms
	return s, err
}

func pickString(o *devOptions, flag, fromFile string, dst *string) {
	if !o.set[flag] && fromFile != "" {
		*dst = fromFile
	}
}

func pickInt(o *devOptions, flag string, fromFile int, dst *int) {
	if !o.set[flag] && fromFile != 0 {
		*dst = fromFile
	}
}

// mergeProcesses settles the server processes: the file's serverProcesses as they are, unless
// --launch-path, --parameters or --processes is given; then one process, each of its fields
// from the flag when given, else from the file (its short form, or its first server process).
func mergeProcesses(o *devOptions, file devSpec) []devProcess {
	flagged := o.set["launch-path"] || o.set["parameters"] || o.set["processes"]
	if len(file.ServerProcesses) > 0 && !flagged {
		out := make([]devProcess, len(file.ServerProcesses))
		for i, p := range file.ServerProcesses {
			if p.ConcurrentExecutions == 0 {
				p.ConcurrentExecutions = 1
			}
			out[i] = p
		}
		return out
	}
	p := devProcess{LaunchPath: file.LaunchPath, Parameters: file.Parameters, ConcurrentExecutions: file.Processes}
	if len(file.ServerProcesses) > 0 {
		p = file.ServerProcesses[0]
	}
	if o.set["launch-path"] || p.LaunchPath == "" {
		p.LaunchPath = o.spec.LaunchPath
	}
	if o.set["parameters"] {
		p.Parameters = o.spec.Parameters
	}
	if o.set["processes"] || p.ConcurrentExecutions == 0 {
		p.ConcurrentExecutions = o.spec.Processes
	}
	return []devProcess{p}
}

// mergePermissions settles the inbound permissions: --port-range (TCP and UDP) when given,
// else the file's inboundPermissions, else its portRange, else the flag's default range.
func mergePermissions(o *devOptions, file devSpec) ([]devPermission, error) {
	if !o.set["port-range"] && len(file.InboundPermissions) > 0 {
		out := make([]devPermission, len(file.InboundPermissions))
		for i, p := range file.InboundPermissions {
			if p.IPRange == "" {
				p.IPRange = "0.0.0.0/0"
			}
			p.Protocol = strings.ToUpper(p.Protocol)
			if p.Protocol != "TCP" && p.Protocol != "UDP" {
				return nil, fmt.Errorf("spec file: inboundPermissions[%d]: protocol %q: want TCP or UDP", i, p.Protocol)
			}
			out[i] = p
		}
		return out, nil
	}
	r := o.spec.PortRange
	pickString(o, "port-range", file.PortRange, &r)
	from, to, err := portRange(r)
	if err != nil {
		return nil, err
	}
	return []devPermission{{FromPort: from, ToPort: to, IPRange: "0.0.0.0/0", Protocol: "TCP"},
		{FromPort: from, ToPort: to, IPRange: "0.0.0.0/0", Protocol: "UDP"}}, nil
}

// portRange parses FROM-TO.
func portRange(s string) (int, int, error) {
	from, to, ok := strings.Cut(s, "-")
	f, err1 := strconv.Atoi(from)
	t, err2 := strconv.Atoi(to)
	if !ok || err1 != nil || err2 != nil || f < 1 || t < f || t > 65535 {
		return 0, 0, fmt.Errorf("port range %q: want FROM-TO, e.g. 7000-8000", s)
	}
	return f, t, nil
}

// withLaunchPaths settles each server process's launch path under /local/game/ (an empty one
// is the binary named on the command line), checks it is in the build, and picks the binary
// to watch: the one named, else the first process's.
func (b devBuild) withLaunchPaths() (devBuild, error) {
	for i := range b.spec.Processes {
		p := &b.spec.Processes[i]
		if p.LaunchPath == "" {
			if b.binary == "" {
				return b, errors.New("no launch path: name the binary, or give --launch-path or the spec file's launchPath")
			}
			p.LaunchPath = filepath.Base(b.binary)
		}
		rel := strings.TrimPrefix(filepath.ToSlash(p.LaunchPath), "/local/game/")
		path := filepath.Join(b.dir, filepath.FromSlash(rel))
		if _, err := os.Stat(path); err != nil {
			return b, fmt.Errorf("launch path: %v", err)
		}
		if b.binary == "" {
			b.binary = path
		}
		p.LaunchPath = "/local/game/" + rel
	}
	return b, nil
}
