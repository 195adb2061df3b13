package replay

import (
	"fmt"
	"io"

	"github.com/causalctl/causalctl/internal/inspect"
)

// WriteSummary renders a summary as replay prints it at the end of a run:
// "text", the headline and tables people read, or "json", the summary
// object of SPEC §5 on one line. Other commands that run the gate (demo,
// watch) use it, so that their summaries read the same.
func WriteSummary(w io.Writer, format string, s *inspect.Summary) error {
	switch format {
	case "text":
		return writeText(w, s)
	case "json":
		b, err := marshal(s)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	return fmt.Errorf("summary format %q: want text or json", format)
}
