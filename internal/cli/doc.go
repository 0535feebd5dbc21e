package cli

import (
	"flag"
	"fmt"
	"strings"
)

// Command is one command's flags, for the flag reference.
type Command struct {
	// Name is the command as typed, e.g. "hoist server".
	Name string
	// Flags is the command's flag set (Capture returns them).
	Flags *flag.FlagSet
	// Defaults replaces the shown default of flags whose default depends on the machine.
	Defaults map[string]string
}

// Table returns the Markdown table of every flag of cmds: command, flag, environment
// variable, default and meaning, one row a flag, in the commands' order and by flag name.
func Table(cmds []Command) string {
	var b strings.Builder
	b.WriteString("| Command | Flag | Environment variable | Default | Meaning |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, c := range cmds {
		c.Flags.VisitAll(func(f *flag.Flag) {
			def, ok := c.Defaults[f.Name]
			if !ok {
				def = f.DefValue
			}
			fmt.Fprintf(&b, "| %s | `--%s` | `%s` | %s | %s |\n", c.Name, f.Name, EnvName(f.Name), code(def), cell(f.Usage))
		})
	}
	return b.String()
}

// code formats a default value; an empty one is left blank.
func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + cell(s) + "`"
}

// cell escapes what would break a table cell or be taken for HTML.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;").Replace(s)
}
