// Package flexmatch is FlexMatch's rule set language and its matcher, as a library: it has no
// store, no clock and no goroutines of its own. Parse turns a rule set body into a RuleSet
// (checking it the way CreateMatchmakingRuleSet and ValidateMatchmakingRuleSet do); a Matcher
// holds a pool of tickets in memory and, each time it is stepped with the current time, forms
// the matches that satisfy every rule under the expansions the tickets' ages allow.
//
// The language is the one documented in the FlexMatch Developer Guide (rule set schema, rule
// types, property expressions, expansions); where the documentation contradicts itself, the
// choices Hoist made are written down in docs/flexmatch.md.
//
// Files: ruleset.go (the parsed form), parse.go (JSON to RuleSet and its checks), expr.go
// (property expressions), eval.go (rules on a candidate match), stages.go (expansions),
// matcher.go (the pool and match forming).
package flexmatch

import "time"

// Limits of the language (FlexMatch Developer Guide and API reference).
const (
	// MaxBodyLength is the longest rule set body, in characters.
	MaxBodyLength = 65535
	// MaxMatchPlayers is the most players a match may hold.
	MaxMatchPlayers = 200
	// MaxStandardMatchPlayers is the most players of a standard match; a rule set whose teams
	// add up to more is a large match, with its own algorithm and rule subset.
	MaxStandardMatchPlayers = 40
)

// AttrType is the type of a player attribute.
type AttrType string

// Player attribute types, as a rule set declares them.
const (
	TypeString          AttrType = "string"
	TypeNumber          AttrType = "number"
	TypeStringList      AttrType = "string_list"
	TypeStringNumberMap AttrType = "string_number_map"
)

// Value is a player attribute value; Type says which field holds it.
type Value struct {
	Type AttrType
	S    string
	N    float64
	SL   []string
	SDM  map[string]float64
}

// RuleSet is a parsed and checked rule set. It is immutable once Parse returns it; the
// Matcher and the evaluation functions only read it.
type RuleSet struct {
	// Name is the rule set's own "name" (not the resource name); it may be empty.
	Name string
	// Attributes are the declared player attributes, in declaration order.
	Attributes []Attribute
	// Algorithm holds the algorithm options with their defaults filled in.
	Algorithm Algorithm
	// Teams are the team definitions, in declaration order (a definition with Quantity > 1
	// stands for Quantity teams named <name>_1 ... <name>_N).
	Teams []Team
	// Rules are the rules, in declaration order.
	Rules []Rule
	// Expansions are the expansions, in declaration order.
	Expansions []Expansion

	// stages are the rule set as relaxed by expansions, one per distinct wait time (stages.go).
	stages []stage
}

// Attribute is a declared player attribute.
type Attribute struct {
	Name string
	Type AttrType
	// Default is used when a player does not send the attribute; nil means the attribute is
	// required.
	Default *Value
}

// Algorithm options; Parse fills in the documented defaults.
type Algorithm struct {
	// Strategy is "exhaustiveSearch" (default) or "balanced".
	Strategy string
	// BatchingPreference is "random" (default for exhaustiveSearch), "sorted",
	// "largestPopulation" (default for balanced) or "fastestRegion".
	BatchingPreference string
	// SortByAttributes are the attributes of the "sorted" preference, in precedence order.
	SortByAttributes []string
	// BalancedAttribute is the number attribute teams are balanced on (balanced strategy).
	BalancedAttribute string
	// BackfillPriority is "normal" (default), "high" or "low".
	BackfillPriority string
	// ExpansionAgeSelection is "newest" (default) or "oldest".
	ExpansionAgeSelection string
}

// Algorithm option values.
const (
	StrategyExhaustive = "exhaustiveSearch"
	StrategyBalanced   = "balanced"

	BatchingRandom            = "random"
	BatchingSorted            = "sorted"
	BatchingLargestPopulation = "largestPopulation"
	BatchingFastestRegion     = "fastestRegion"

	PriorityNormal = "normal"
	PriorityHigh   = "high"
	PriorityLow    = "low"

	AgeNewest = "newest"
	AgeOldest = "oldest"
)

// Team is a team definition.
type Team struct {
	Name       string
	MinPlayers int
	MaxPlayers int
	// Quantity is how many teams this definition stands for; 1 when not given.
	Quantity int
}

// Rule types.
const (
	RuleAbsoluteSort  = "absoluteSort"
	RuleBatchDistance = "batchDistance"
	RuleCollection    = "collection"
	RuleComparison    = "comparison"
	RuleCompound      = "compound"
	RuleDistance      = "distance"
	RuleDistanceSort  = "distanceSort"
	RuleLatency       = "latency"
)

// Rule is one rule. Which fields are set depends on Type; a numeric property that was not
// given is nil.
type Rule struct {
	Name        string
	Description string
	Type        string

	// Measurements are the measured property expressions (comparison, distance, collection).
	Measurements []*Expr
	// ReferenceValue is what measurements are compared with (comparison, distance,
	// collection); nil when not given.
	ReferenceValue *Operand
	// Operation is the comparison operator ("<", "<=", "=", "!=", ">", ">=") or the collection
	// operation ("intersection", "contains", "reference_intersection_count").
	Operation string
	// MinDistance and MaxDistance bound a distance; MaxDistance also bounds batchDistance
	// (numbers) and latency (distance from the reference latency).
	MinDistance, MaxDistance *float64
	// MinCount and MaxCount bound a collection count.
	MinCount, MaxCount *float64
	// PartyAggregation is how a party's values are combined: "min", "max", "avg" (numbers,
	// default avg) or "union", "intersection" (collections, default union).
	PartyAggregation string
	// BatchAttribute is the attribute of a batchDistance rule.
	BatchAttribute string
	// MaxLatency is the latency rule's limit, in milliseconds.
	MaxLatency *float64
	// DistanceReference is the latency rule's reference: "min" or "avg".
	DistanceReference string
	// SortDirection ("ascending" or "descending"), SortAttribute and MapKey ("minValue" or
	// "maxValue") are the sort rules' properties.
	SortDirection, SortAttribute, MapKey string
	// Statement is a compound rule's statement.
	Statement *Statement
}

// Operand is a literal or a property expression: exactly one field is set.
type Operand struct {
	Expr *Expr
	Num  *float64
	Str  *string
	List []string
}

// Expr is a property expression: a function applied to one argument, or a selector.
//
//	avg(flatten(teams[*].players.attributes[skill]))
//	  Func "avg" ─ Arg: Func "flatten" ─ Arg: Teams ["*"], Attribute "skill"
type Expr struct {
	// Func is the function (min, max, avg, median, sum, stddev, count, flatten,
	// set_intersection), or "" for a selector.
	Func string
	// Arg is the function's argument.
	Arg *Expr

	// Teams are the selected team names ("*" for every team); a name of a definition with
	// Quantity > 1 selects all its teams.
	Teams []string
	// Players is set for teams[...].players (the players themselves, for count).
	Players bool
	// Attribute is set for teams[...].players.attributes[<Attribute>].
	Attribute string
	// PlayerID is set for teams[...].players[playerId].
	PlayerID bool
}

// Statement is a compound rule's statement: an operator over statements, or a reference to
// a rule declared earlier.
type Statement struct {
	// Op is "and", "or", "not" or "xor"; "" for a rule reference.
	Op   string
	Args []*Statement
	// Rule is the referenced rule's name when Op is "".
	Rule string
}

// Expansion relaxes one property over time.
type Expansion struct {
	Target Target
	Steps  []Step
}

// Target is what an expansion relaxes: rules[<name>].<property> or
// teams[<name>,...].<property>.
type Target struct {
	// Component is "rules" or "teams".
	Component string
	Names     []string
	// Property is the property's name as written, e.g. "maxDistance" or "minPlayers".
	Property string
}

// Step is one expansion step: from Wait (the age of the match's expansion ticket) on, the
// target takes Value.
type Step struct {
	Wait  time.Duration
	Value Operand
}
