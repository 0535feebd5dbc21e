// Package matchsim is Hoist's matchmaking simulator and benchmark (hoist matchsim). It feeds
// a population of tickets to a flexmatch.Matcher on a virtual clock: tickets arrive at their
// arrival times, the matcher is stepped every Config.Step and whenever tickets arrive, and
// tickets older than Config.Timeout are removed as timed out. The matcher itself has no clock,
// so a run of minutes of virtual time costs only the matcher's own CPU time.
//
// A run reports two kinds of figures. Real ones, measured with the wall clock around the
// matcher's calls only (Add, Remove, Step): the throughput in tickets matched per second of
// matcher time, and the per-step latency. Virtual ones, on the simulated clock: each
// ticket's time to match (arrival to the Step that proposed its match), timeouts, expansions
// used, and per-rule match quality (skill spreads, team-average differences, worst latency).
//
// The population is read from a JSON or CSV file (LoadFile) or generated from
// distributions (Generate); Run performs the simulation and NewReport summarises it as text,
// JSON (Report) or an SVG plot (WriteSVG). Main is the command-line entry point;
// docs/benchmarks.md describes how to use it.
package matchsim
