package matchsim

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hoist-gg/hoist/gamelift/flexmatch"
	"github.com/hoist-gg/hoist/internal/cli"
)

// options holds the parsed command line.
type options struct {
	ruleSet    string
	population string
	spec       GenSpec
	party      string
	attrs      namedFlag
	latency    namedFlag
	cfg        Config
	jsonOut    bool
	svg        string
}

// namedFlag collects repeated name=distribution flags.
type namedFlag []Named

// String implements flag.Value.
func (f *namedFlag) String() string { return "" }

// Set implements flag.Value: it parses name=kind:params.
func (f *namedFlag) Set(s string) error {
	name, dist, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("want name=distribution, got %q", s)
	}
	d, err := ParseDist(dist)
	if err != nil {
		return err
	}
	*f = append(*f, Named{Name: name, Dist: d})
	return nil
}

// Main runs hoist matchsim with command-line arguments args (without the program or
// subcommand name) and writes the report to stdout. It returns nil after -h.
func Main(ctx context.Context, args []string, stdout io.Writer) error {
	o, err := parseFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	rs, pop, err := o.load()
	if err != nil {
		return fmt.Errorf("matchsim: %w", err)
	}
	res, runErr := Run(ctx, rs, pop, o.cfg)
	if res == nil {
		return fmt.Errorf("matchsim: %w", runErr)
	}
	if err := o.write(res, stdout); err != nil {
		return err
	}
	if runErr != nil {
		return fmt.Errorf("matchsim: interrupted, results are partial: %w", runErr)
	}
	return nil
}

// parseFlags parses the command line.
func parseFlags(args []string, out io.Writer) (*options, error) {
	fs := flag.NewFlagSet("matchsim", flag.ContinueOnError)
	fs.SetOutput(out)
	o := &options{}
	fs.StringVar(&o.ruleSet, "rule-set", "", "rule set body file (JSON, as CreateMatchmakingRuleSet takes it) (required)")
	fs.StringVar(&o.population, "population", "", "population file: a JSON array of players or CSV (default: generate one)")
	fs.IntVar(&o.spec.Players, "players", 1000, "players to generate")
	fs.Float64Var(&o.spec.Rate, "rate", 100, "steady arrival rate in tickets per virtual second (0: all at once); also for file players without an arrival")
	fs.Var(&o.attrs, "attr", "attribute distribution name=kind:params, repeatable: normal:mean:sd, uniform:lo:hi, const:v, choice:a,b,c, subset:a,b,c")
	fs.Var(&o.latency, "latency", "latency distribution in ms, region=kind:params, repeatable (e.g. us-east-1=uniform:20:200)")
	fs.StringVar(&o.party, "party", "1", "party sizes size[:weight],..., e.g. 1:0.7,2:0.2,5:0.1")
	fs.Uint64Var(&o.spec.Seed, "seed", 1, "random seed of the generated population")
	fs.DurationVar(&o.cfg.Step, "step", DefaultStep, "virtual interval between steps when no ticket arrives")
	fs.DurationVar(&o.cfg.Timeout, "timeout", DefaultTimeout, "virtual age at which a ticket times out")
	fs.DurationVar(&o.cfg.MaxTime, "max-time", 0, "stop at this virtual time (0: when every ticket is matched or timed out)")
	fs.IntVar(&o.cfg.Options.Candidates, "candidates", flexmatch.DefaultCandidates, "pool tickets considered per match (matcher option)")
	fs.IntVar(&o.cfg.Options.AdditionalPlayers, "additional-players", 0, "the configuration's AdditionalPlayerCount")
	fs.BoolVar(&o.jsonOut, "json", false, "print the report as JSON")
	fs.StringVar(&o.svg, "svg", "", "also write an SVG plot of time to match and match quality over virtual time to this file")
	if err := cli.Parse(fs, args); err != nil {
		return nil, err
	}
	return o, o.check(fs)
}

// check validates the parsed flags.
func (o *options) check(fs *flag.FlagSet) error {
	var err error
	o.spec.Attrs, o.spec.Latency = o.attrs, o.latency
	o.spec.Party, err = ParsePartyDist(o.party)
	switch {
	case err != nil:
	case fs.NArg() > 0:
		err = fmt.Errorf("unexpected arguments %q", fs.Args())
	case o.ruleSet == "":
		err = errors.New("--rule-set is required")
	case o.population == "" && o.spec.Players < 1:
		err = errors.New("--players must be at least 1")
	case o.spec.Rate < 0:
		err = errors.New("--rate must not be negative")
	case o.cfg.Step <= 0 || o.cfg.Timeout <= 0:
		err = errors.New("--step and --timeout must be positive")
	}
	if err != nil {
		return fmt.Errorf("matchsim: %w", err)
	}
	return nil
}

// load parses the rule set and reads or generates the population.
func (o *options) load() (*flexmatch.RuleSet, *Population, error) {
	body, err := os.ReadFile(o.ruleSet)
	if err != nil {
		return nil, nil, err
	}
	rs, err := flexmatch.Parse(body)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", o.ruleSet, err)
	}
	var pop *Population
	if o.population != "" {
		pop, err = LoadFile(o.population, rs, o.spec.Rate)
	} else {
		pop, err = Generate(rs, o.spec)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("population: %w (generated players need --attr for each attribute without a default, and --latency for a latency rule)", err)
	}
	return rs, pop, nil
}

// write prints the report and writes the SVG.
func (o *options) write(res *Result, stdout io.Writer) error {
	rep := NewReport(res)
	var err error
	if o.jsonOut {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil || o.svg == "" {
		return err
	}
	f, err := os.Create(o.svg)
	if err != nil {
		return err
	}
	if err := WriteSVG(f, res); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
