package cmdutil

import (
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/spf13/pflag"
)

// AddTaskFlags registers --tasks on fs and, when app, --app and
// --txn-wait: the one registration of every command that shadows a
// Parsley process.
func AddTaskFlags(fs *pflag.FlagSet, t *input.Tasks, app bool) {
	fs.BoolVar(&t.Tasks, "tasks", false, "one gate per Parsley task: task p receives partition p of every topic in scope, reported per task")
	if !app {
		return
	}
	fs.StringVar(&t.App, "app", "", "shadow Parsley process `APP`: its topics and tasks, each task's gate seeded from its ordering state and read on from the group's committed offsets (implies --tasks)")
	fs.DurationVar(&t.TxnWait, "txn-wait", kafka.DefaultTxnWait, "with --app (or --from-group naming a Parsley process), how long to wait for an open transaction in the ordering changelog")
	fs.BoolVar(&t.OffsetsOnly, "offsets-only", false, "with --from-group naming a Parsley process, read from its committed offsets alone instead of as --app: shows only what is held among the records after them, and a Parsley process's committed offsets move past the records it holds")
}

// CheckTasks refuses --app with a source of its own (--input, --topic, --scope,
// --start, --from-group, --offsets): the process says what is read and
// from where.
func CheckTasks(fs *pflag.FlagSet, t *input.Tasks) error {
	if t.TxnWait < 0 {
		return Usagef("--txn-wait must not be negative")
	}
	if t.App == "" {
		// --from-group reads a Parsley process as --app does
		// (AttachGroup), with the wait given.
		if f := fs.Lookup("txn-wait"); f != nil && f.Changed {
			if g := fs.Lookup("from-group"); g == nil || !g.Changed {
				return Usagef("--txn-wait reads a Parsley process's state: give --app (or --from-group naming one) too")
			}
		}
		return nil
	}
	for _, name := range []string{"input", "topic", "scope", "start", "from-group", "offsets"} {
		if f := fs.Lookup(name); f != nil && f.Changed {
			return Usagef("--app takes its topics, scope and offsets from the process: drop --%s", name)
		}
	}
	return nil
}
