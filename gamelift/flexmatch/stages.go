package flexmatch

import "time"

// stage is the rule set as expansions have relaxed it from a wait time on.
type stage struct {
	from  time.Duration
	teams []Team
	rules []Rule
}
