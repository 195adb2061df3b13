package root

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// A value in a flag's usage, perhaps followed by an optional part
// ("random[:SEED]") or a note ("causes (parsley.causes)").
const valueItem = `[A-Za-z][A-Za-z0-9._-]*(?:\[[^\]]*\])?(?: \([^)]*\))?`

var (
	// listedValues finds the list of values in a flag's usage, as the
	// usage texts write them: "…: a, b or c".
	listedValues = regexp.MustCompile(`: ((?:` + valueItem + `, )*` + valueItem + `,? or ` + valueItem + `)`)
	listItem     = regexp.MustCompile(valueItem)
)

// fixedValues returns the values a flag says it takes: those of an enum
// type ("fail|hold") or those its usage lists; nil for any other flag.
func fixedValues(fl *pflag.Flag) []string {
	if t := fl.Value.Type(); strings.Contains(t, "|") {
		return strings.Split(t, "|")
	}
	m := listedValues.FindStringSubmatch(fl.Usage)
	if m == nil {
		return nil
	}
	var out []string
	for _, v := range listItem.FindAllString(m[1], -1) {
		if v != "or" {
			v, _, _ = strings.Cut(v, " (")
			v, _, _ = strings.Cut(v, "[")
			out = append(out, v)
		}
	}
	return out
}

// uncompleted lists the flags of tree that take fixed values and do not
// complete each of them.
func uncompleted(tree *cobra.Command) (missing []string, checked int) {
	walk(tree, func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			want := fixedValues(fl)
			if want == nil {
				return
			}
			checked++
			where := c.CommandPath() + " --" + fl.Name
			fn, ok := c.GetFlagCompletionFunc(fl.Name)
			if !ok {
				missing = append(missing, where+": takes "+strings.Join(want, ", ")+" and completes nothing (cmdutil.CompleteFlagValues)")
				return
			}
			cands, _ := fn(c, nil, "")
			var got []string
			for _, cand := range cands {
				v, _, _ := strings.Cut(cand, "\t")
				got = append(got, v)
			}
			for _, v := range want {
				if !slices.Contains(got, v) {
					missing = append(missing, where+": completes "+strings.Join(got, ", ")+", not "+v)
				}
			}
			// And the other way: a value it completes that its usage
			// leaves out (--fault's none) is one --help does not tell.
			for _, v := range got {
				if !slices.Contains(want, v) {
					missing = append(missing, where+": completes "+v+", which its usage ("+strings.Join(want, ", ")+") does not list")
				}
			}
		})
	})
	return missing, checked
}

// TestFixedValueFlagsComplete: every flag whose type is an enum or whose
// usage lists its values completes those values, registered where the flag
// is declared (a flag helper of cmdutil, or the command).
func TestFixedValueFlagsComplete(t *testing.T) {
	missing, checked := uncompleted(testTree())
	for _, m := range missing {
		t.Error(m)
	}
	// --header-format ×2, --undecodable ×3, --interleave, --fault, --sasl-mechanism at least.
	if checked < 8 {
		t.Errorf("found %d flags with fixed values: the usage texts changed shape?", checked)
	}
}

// TestUncompletedIsCaught: a flag listing values without a completion, one
// completing only some of them and an enum type without one are reported;
// a flag with a complete completion is not.
func TestUncompletedIsCaught(t *testing.T) {
	tree := &cobra.Command{Use: "x"}
	sub := &cobra.Command{Use: "sub"}
	tree.AddCommand(sub)
	sub.Flags().String("mode", "a", "how it runs: a, b or c")
	sub.Flags().String("layout", "", "value layout: causes (parsley.causes) or clock (legacy)")
	cmdutil.CompleteFlagValues(sub, "layout", "causes")
	var u cmdutil.UndecodableFlag
	sub.Flags().Var(&u, "undecodable", "what to do")
	sub.Flags().String("order", "", "receive order: file, random[:SEED] or channel")
	cmdutil.CompleteFlagValues(sub, "order", "file\tthe file's", "random", "channel")
	sub.Flags().String("offsets", "", "rpk's grammar: start, end, N, N:M, @TIME")
	missing, checked := uncompleted(tree)
	got := strings.Join(missing, "\n")
	for _, want := range []string{"sub --mode: takes a, b, c and completes nothing", "sub --layout: completes causes, not clock", "sub --undecodable: takes fail, hold"} {
		if !strings.Contains(got, want) {
			t.Errorf("not reported: %q; got\n%s", want, got)
		}
	}
	if len(missing) != 3 || checked != 4 {
		t.Errorf("%d reported of %d checked, want 3 of 4 (--order completes, --offsets lists a grammar):\n%s", len(missing), checked, got)
	}
}
