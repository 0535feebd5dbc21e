package sessionquery

// operand is a game session attribute a condition or sort reads.
type operand uint8

const (
	opName               operand = iota + 1 // gameSessionName
	opID                                    // gameSessionId
	opProperty                              // gameSessionProperties.<key>
	opMaximumSessions                       // maximumSessions
	opCreationTimeMillis                    // creationTimeMillis
	opPlayerSessionCount                    // playerSessionCount
	opHasAvailable                          // hasAvailablePlayerSessions
)

// propertyPrefix starts a game property operand; the key follows it.
const propertyPrefix = "gameSessionProperties."

// operandText holds each operand's name as written in expressions; a game property's key
// follows propertyPrefix.
var operandText = [...]string{
	opName:               "gameSessionName",
	opID:                 "gameSessionId",
	opProperty:           "gameSessionProperties",
	opMaximumSessions:    "maximumSessions",
	opCreationTimeMillis: "creationTimeMillis",
	opPlayerSessionCount: "playerSessionCount",
	opHasAvailable:       "hasAvailablePlayerSessions",
}

// name returns the operand's name as written in expressions (without a property key).
func (o operand) name() string { return operandText[o] }

// valueKind is the type of value an operand holds.
type valueKind uint8

const (
	kindString valueKind = iota + 1
	kindNumber
	kindBool
)

// kind returns the type of value the operand holds.
func (o operand) kind() valueKind {
	switch o {
	case opName, opID, opProperty:
		return kindString
	case opHasAvailable:
		return kindBool
	}
	return kindNumber
}

// number returns a numeric operand's value for s.
func (o operand) number(s *Session) int64 {
	switch o {
	case opMaximumSessions:
		return int64(s.MaximumSessions)
	case opPlayerSessionCount:
		return int64(s.PlayerSessionCount)
	}
	return s.CreationTimeMillis
}

// str returns a string operand's value for s, and false when the value is null.
func (o operand) str(s *Session, key string) (string, bool) {
	switch o {
	case opName:
		return s.Name, s.Name != ""
	case opID:
		return s.ID, true
	}
	v, ok := s.Properties[key]
	return v, ok
}

// comparator is one of the six documented comparators.
type comparator uint8

const (
	cmpEQ comparator = iota + 1 // =
	cmpNE                       // <>
	cmpLT                       // <
	cmpGT                       // >
	cmpLE                       // <=
	cmpGE                       // >=
)

// String returns the comparator as written in expressions.
func (c comparator) String() string {
	return [...]string{cmpEQ: "=", cmpNE: "<>", cmpLT: "<", cmpGT: ">", cmpLE: "<=", cmpGE: ">="}[c]
}
