package sessionquery

// Session is the view of one game session that filters and sorts read. The caller builds it
// from its own game session record.
type Session struct {
	// Name is the game session's name; empty means the session has none (a null value).
	Name string
	// ID is what gameSessionId compares against: the game session ID (an ARN in GameLift).
	ID string
	// Properties are the game session's game properties, key to value.
	Properties map[string]string
	// MaximumSessions is the maximum number of player sessions (maximumSessions).
	MaximumSessions int
	// PlayerSessionCount is the number of current player sessions (playerSessionCount).
	PlayerSessionCount int
	// CreationTimeMillis is the creation time in Unix milliseconds (creationTimeMillis).
	CreationTimeMillis int64
	// HasAvailablePlayerSessions reports whether a player can still join
	// (hasAvailablePlayerSessions).
	HasAvailablePlayerSessions bool
}
