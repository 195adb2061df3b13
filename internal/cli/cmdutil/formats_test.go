package cmdutil

import (
	"slices"
	"testing"

	"github.com/spf13/cobra"
)

// TestAddOutputFlag: the flag's usage lists the formats, completion offers
// them, and Resolve gives the default, the format asked for, or a usage
// error naming the formats.
func TestAddOutputFlag(t *testing.T) {
	cmd := &cobra.Command{Use: "x"}
	var out Output
	AddOutputFlag(cmd, &out, "text", "json", "ndjson")
	fl := cmd.Flags().ShorthandLookup("o")
	if fl == nil || fl.Name != "output" || fl.Usage != "output format: text, json or ndjson" {
		t.Fatalf("flag %+v", fl)
	}
	fn, ok := cmd.GetFlagCompletionFunc("output")
	if !ok {
		t.Fatal("no completion")
	}
	if got, _ := fn(cmd, nil, ""); !slices.Equal(got, []string{"text", "json", "ndjson"}) {
		t.Errorf("completes %q", got)
	}
	if got, err := out.Resolve("text"); got != "text" || err != nil {
		t.Errorf("no -o: %q, %v", got, err)
	}
	if err := cmd.Flags().Parse([]string{"-o", "ndjson"}); err != nil {
		t.Fatal(err)
	}
	if got, err := out.Resolve("text"); got != "ndjson" || err != nil {
		t.Errorf("-o ndjson: %q, %v", got, err)
	}
	out.Value = "yaml"
	if _, err := out.Resolve("text"); ExitCode(err) != ExitUsage || err.Error() != "--output yaml: this command writes text, json, ndjson" {
		t.Errorf("-o yaml: %v", err)
	}
}
