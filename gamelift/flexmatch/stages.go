package flexmatch

import (
	"slices"
	"sort"
	"time"
)

// stage is the rule set as expansions have relaxed it from a wait time on: the teams and
// rules every match evaluated at an expansion age of at least from (and less than the next
// stage's from) must satisfy.
type stage struct {
	from  time.Duration
	teams []Team
	rules []Rule
}

// buildStages computes the stages of rs: one for age 0 and one per distinct expansion wait.
// Parse calls it once; the stages are read-only after that.
func (rs *RuleSet) buildStages() {
	waits := []time.Duration{0}
	for _, e := range rs.Expansions {
		for _, s := range e.Steps {
			waits = append(waits, s.Wait)
		}
	}
	slices.Sort(waits)
	waits = slices.Compact(waits)
	rs.stages = make([]stage, len(waits))
	for i, w := range waits {
		st := stage{from: w, teams: slices.Clone(rs.Teams), rules: slices.Clone(rs.Rules)}
		for _, e := range rs.Expansions {
			if v, ok := e.valueAt(w); ok {
				st.apply(e.Target, v)
			}
		}
		rs.stages[i] = st
	}
}

// valueAt is the value of the latest step whose wait is at most age.
func (e *Expansion) valueAt(age time.Duration) (Operand, bool) {
	var v Operand
	ok := false
	for _, s := range e.Steps {
		if s.Wait <= age {
			v, ok = s.Value, true
		}
	}
	return v, ok
}

// apply sets the target property of the stage's copy of a team or rule to v.
func (st *stage) apply(t Target, v Operand) {
	switch t.Component {
	case "teams":
		for i := range st.teams {
			if slices.Contains(t.Names, st.teams[i].Name) || slices.Contains(t.Names, "*") {
				setTeamProperty(&st.teams[i], t.Property, v)
			}
		}
	case "rules":
		for i := range st.rules {
			if slices.Contains(t.Names, st.rules[i].Name) {
				setRuleProperty(&st.rules[i], t.Property, v)
			}
		}
	}
}

// setTeamProperty sets a team size property.
func setTeamProperty(t *Team, prop string, v Operand) {
	if v.Num == nil {
		return
	}
	switch prop {
	case "minPlayers":
		t.MinPlayers = int(*v.Num)
	case "maxPlayers":
		t.MaxPlayers = int(*v.Num)
	}
}

// setRuleProperty sets a rule property an expansion may relax.
func setRuleProperty(r *Rule, prop string, v Operand) {
	num := func() *float64 {
		if v.Num == nil {
			return nil
		}
		n := *v.Num
		return &n
	}
	switch prop {
	case "referenceValue":
		op := v
		r.ReferenceValue = &op
	case "minDistance":
		r.MinDistance = num()
	case "maxDistance":
		r.MaxDistance = num()
	case "minCount":
		r.MinCount = num()
	case "maxCount":
		r.MaxCount = num()
	case "maxLatency":
		r.MaxLatency = num()
	}
}

// stageAt is the index of the stage in force at an expansion age.
func (rs *RuleSet) stageAt(age time.Duration) int {
	if len(rs.stages) == 0 {
		rs.buildStages()
	}
	return sort.Search(len(rs.stages), func(i int) bool { return rs.stages[i].from > age }) - 1
}

// nextStage is the age at which the stage after the one in force at age begins; ok is false
// when age is already in the last stage.
func (rs *RuleSet) nextStage(age time.Duration) (time.Duration, bool) {
	i := rs.stageAt(age)
	if i+1 >= len(rs.stages) {
		return 0, false
	}
	return rs.stages[i+1].from, true
}

// At returns the teams and rules in force for a match evaluated at the expansion age age.
// The slices are shared: callers must not change them.
func (rs *RuleSet) At(age time.Duration) ([]Team, []Rule) {
	st := &rs.stages[rs.stageAt(age)]
	return st.teams, st.rules
}
