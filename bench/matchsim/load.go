package matchsim

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hoist-gg/hoist/gamelift/flexmatch"
)

// filePlayer is one player of a JSON population file.
type filePlayer struct {
	ID string `json:"id"`
	// Party groups players into one ticket: players with the same party make one ticket
	// (its ID is the party's), arriving when its first player does.
	Party      string                     `json:"party,omitempty"`
	Attributes map[string]json.RawMessage `json:"attributes"`
	Latency    map[string]int             `json:"latency"`
	// Arrival is in seconds from the start of the run; nil means "at the steady rate".
	Arrival *float64 `json:"arrival"`
	// cells are a CSV player's attribute cells, typed by csvValue.
	cells map[string]string
}

// LoadFile reads a population file: a JSON array of players, or CSV with a header (a file
// whose first non-blank byte is '[' is JSON). Attribute values are typed by the rule set's
// declarations. Players without an arrival time arrive at the steady rate (tickets per
// second; at 0 when rate is 0), counted in tickets.
func LoadFile(path string, rs *flexmatch.RuleSet, rate float64) (*Population, error) {
	body, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var players []filePlayer
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
		players, err = readJSON(body)
	} else {
		players, err = readCSV(bytes.NewReader(body))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	pop, err := group(players, rs, rate)
	if err == nil {
		err = pop.prepare(rs)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return pop, nil
}

// readJSON decodes a JSON array of players.
func readJSON(body []byte) ([]filePlayer, error) {
	var players []filePlayer
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&players); err != nil {
		return nil, err
	}
	return players, nil
}

// group turns players into tickets (parties together), typing their attributes.
func group(players []filePlayer, rs *flexmatch.RuleSet, rate float64) (*Population, error) {
	pop := &Population{}
	byParty := map[string]int{}
	for i, fp := range players {
		if fp.ID == "" {
			return nil, fmt.Errorf("player %d has no id", i)
		}
		p, err := filePlayerValue(fp, rs)
		if err != nil {
			return nil, err
		}
		if k, ok := byParty[fp.Party]; ok && fp.Party != "" {
			pop.Tickets[k].Players = append(pop.Tickets[k].Players, p)
			continue
		}
		t := Ticket{ID: fp.ID, Arrival: arrivalAt(len(pop.Tickets), rate), Players: []flexmatch.Player{p}}
		if fp.Party != "" {
			t.ID, byParty[fp.Party] = fp.Party, len(pop.Tickets)
		}
		if fp.Arrival != nil {
			t.Arrival = time.Duration(*fp.Arrival * float64(time.Second))
		}
		pop.Tickets = append(pop.Tickets, t)
	}
	return pop, nil
}

// filePlayerValue types a file player's attributes.
func filePlayerValue(fp filePlayer, rs *flexmatch.RuleSet) (flexmatch.Player, error) {
	p := flexmatch.Player{ID: fp.ID, Attributes: map[string]flexmatch.Value{}, Latency: fp.Latency}
	for name, raw := range fp.Attributes {
		v, err := jsonValue(raw, rs, name)
		if err != nil {
			return p, fmt.Errorf("player %s: attribute %s: %w", fp.ID, name, err)
		}
		p.Attributes[name] = v
	}
	for name, cell := range fp.cells {
		v, err := csvValue(cell, rs, name)
		if err != nil {
			return p, fmt.Errorf("player %s: attribute %s: %w", fp.ID, name, err)
		}
		p.Attributes[name] = v
	}
	return p, nil
}

// jsonValue decodes an attribute value: as the declared type, or (undeclared) as the JSON
// value's own type.
func jsonValue(raw json.RawMessage, rs *flexmatch.RuleSet, name string) (flexmatch.Value, error) {
	t, ok := declaredType(rs, name)
	if !ok {
		t = jsonType(raw)
	}
	v := flexmatch.Value{Type: t}
	var err error
	switch t {
	case flexmatch.TypeNumber:
		err = json.Unmarshal(raw, &v.N)
	case flexmatch.TypeString:
		err = json.Unmarshal(raw, &v.S)
	case flexmatch.TypeStringList:
		err = json.Unmarshal(raw, &v.SL)
	case flexmatch.TypeStringNumberMap:
		err = json.Unmarshal(raw, &v.SDM)
	}
	if err != nil {
		return v, fmt.Errorf("want a %s: %w", t, err)
	}
	return v, nil
}

// jsonType is the attribute type of a JSON value.
func jsonType(raw json.RawMessage) flexmatch.AttrType {
	switch b := bytes.TrimSpace(raw); {
	case len(b) > 0 && b[0] == '"':
		return flexmatch.TypeString
	case len(b) > 0 && b[0] == '[':
		return flexmatch.TypeStringList
	case len(b) > 0 && b[0] == '{':
		return flexmatch.TypeStringNumberMap
	}
	return flexmatch.TypeNumber
}

// CSV columns: id (required), arrival (seconds, may be empty), party, attr:<name>,
// latency:<region>. Attribute cells are typed by the rule set: a string_list is written
// a|b|c, a string_number_map k=1|m=2; an empty cell leaves the attribute (or latency) out.

// readCSV reads a CSV population.
func readCSV(r io.Reader) ([]filePlayer, error) {
	cr := csv.NewReader(r)
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("reading the CSV header: %w", err)
	}
	if err := checkHeader(header); err != nil {
		return nil, err
	}
	var out []filePlayer
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		fp, err := csvPlayer(header, rec)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, fp)
	}
}

// checkHeader rejects unknown columns and a missing id column.
func checkHeader(header []string) error {
	hasID := false
	for _, h := range header {
		switch {
		case h == "id":
			hasID = true
		case h == "arrival" || h == "party":
		case strings.HasPrefix(h, "attr:") || strings.HasPrefix(h, "latency:"):
		default:
			return fmt.Errorf("CSV column %q: want id, arrival, party, attr:<name> or latency:<region>", h)
		}
	}
	if !hasID {
		return errors.New("the CSV header has no id column")
	}
	return nil
}

// csvPlayer reads one CSV record; attribute cells are typed later, by csvValue.
func csvPlayer(header, rec []string) (filePlayer, error) {
	fp := filePlayer{cells: map[string]string{}}
	for i, cell := range rec {
		if cell == "" {
			continue
		}
		var err error
		switch h := header[i]; {
		case h == "id":
			fp.ID = cell
		case h == "party":
			fp.Party = cell
		case h == "arrival":
			err = setArrival(&fp, cell)
		case strings.HasPrefix(h, "latency:"):
			err = setLatency(&fp, strings.TrimPrefix(h, "latency:"), cell)
		default:
			fp.cells[strings.TrimPrefix(h, "attr:")] = cell
		}
		if err != nil {
			return fp, fmt.Errorf("column %s: %w", header[i], err)
		}
	}
	return fp, nil
}

// setArrival parses an arrival cell (seconds).
func setArrival(fp *filePlayer, cell string) error {
	a, err := strconv.ParseFloat(cell, 64)
	fp.Arrival = &a
	return err
}

// setLatency parses a latency cell (whole milliseconds).
func setLatency(fp *filePlayer, region, cell string) error {
	ms, err := strconv.Atoi(cell)
	if fp.Latency == nil {
		fp.Latency = map[string]int{}
	}
	fp.Latency[region] = ms
	return err
}

// csvValue types a CSV attribute cell: as the declared type, or (undeclared) as a number
// when it parses as one, a string_number_map when it is k=1|m=2, a string_list when it has
// a |, else a string.
func csvValue(cell string, rs *flexmatch.RuleSet, name string) (flexmatch.Value, error) {
	parts := strings.Split(cell, "|")
	t, ok := declaredType(rs, name)
	if !ok {
		t = cellType(cell, parts)
	}
	v := flexmatch.Value{Type: t, S: cell, SL: parts}
	var err error
	switch t {
	case flexmatch.TypeNumber:
		v.N, err = strconv.ParseFloat(cell, 64)
	case flexmatch.TypeStringNumberMap:
		if v.SDM, ok = numberMap(parts); !ok {
			err = errors.New("want key=number|key=number")
		}
	}
	if err != nil {
		return v, fmt.Errorf("want a %s: %w", t, err)
	}
	return v, nil
}

// cellType guesses the type of an undeclared attribute's cell.
func cellType(cell string, parts []string) flexmatch.AttrType {
	if _, err := strconv.ParseFloat(cell, 64); err == nil {
		return flexmatch.TypeNumber
	}
	if _, ok := numberMap(parts); ok {
		return flexmatch.TypeStringNumberMap
	}
	if len(parts) > 1 {
		return flexmatch.TypeStringList
	}
	return flexmatch.TypeString
}

// numberMap parses k=1 parts; ok is false unless every part is one.
func numberMap(parts []string) (map[string]float64, bool) {
	m := map[string]float64{}
	for _, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		n, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil {
			return nil, false
		}
		m[k] = n
	}
	return m, true
}
