package cmdutil

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/conn"
	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/spf13/cobra"
)

// The value completions of flags are registered by whoever registers the
// flag: the flag helpers of this package for the shared flags (--topic,
// --scope, --start, --from-group, --undecodable, --header-format, the
// connection flags), a command for its own fixed-value flags
// (CompleteFlagValues). There is no table by flag name: a flag completes
// because the code that declared it said how.

// CompletionTimeout bounds a completion that asks the cluster, connecting
// included. A dead or slow cluster then completes nothing instead of
// stalling the shell.
const CompletionTimeout = time.Second

// CompleteFlagValues gives cmd's flag name a fixed set of completions, each
// "VALUE" or "VALUE\tdescription". Call it right after declaring a flag
// whose usage lists its values; the root's tests fail for a flag that
// lists values and completes none.
func CompleteFlagValues(cmd *cobra.Command, name string, values ...string) {
	registerCompletion(cmd, name, func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	})
}

// registerCompletion registers fn for cmd's flag name. A flag that does not
// exist or already completes is a mistake in the code that declares it.
func registerCompletion(cmd *cobra.Command, name string, fn cobra.CompletionFunc) {
	if err := cmd.RegisterFlagCompletionFunc(name, fn); err != nil {
		panic(fmt.Sprintf("%s: %v", cmd.CommandPath(), err))
	}
}

// AddConnFlags registers the connection flags (internal/conn) on cmd's
// persistent flags, with the completions of --profile (the profiles of the
// config file the command would read) and --sasl-mechanism.
func AddConnFlags(cmd *cobra.Command, f *Factory) {
	if f.Conn == nil {
		f.Conn = &conn.Options{}
	}
	f.Conn.AddFlags(cmd.PersistentFlags())
	registerCompletion(cmd, "profile", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		names, err := f.Conn.ProfileNames(f.Getenv)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		for i, n := range names {
			names[i] = escape.Text(n)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
	CompleteFlagValues(cmd, "sasl-mechanism", kafka.MechanismPlain, kafka.MechanismScramSHA256, kafka.MechanismScramSHA512)
}

// AddScopeFlag registers --scope, a list of channels, completed from the
// cluster's topics and channels; usage says whose scope it is.
func AddScopeFlag(cmd *cobra.Command, f *Factory, scope *[]string, usage string) {
	cmd.Flags().StringSliceVar(scope, "scope", nil, usage)
	registerCompletion(cmd, "scope", listOf(clusterChannels(f, "")))
}

// AddStartFlag registers --start, a list of CH=OFFSET, completed from the
// cluster's channels (each followed by "=", without a space).
func AddStartFlag(cmd *cobra.Command, f *Factory, start *[]string, usage string) {
	cmd.Flags().StringSliceVar(start, "start", nil, usage)
	registerCompletion(cmd, "start", listOf(clusterChannels(f, "=")))
}

// AddHeaderFormatFlag registers --header-format, the layout of a clock
// value: causes (the default) or clock.
func AddHeaderFormatFlag(cmd *cobra.Command, format *string) {
	cmd.Flags().StringVar(format, "header-format", "causes", "value layout: causes (parsley.causes) or clock (legacy parsley-clock)")
	CompleteFlagValues(cmd, "header-format", "causes\tparsley.causes (the default)", "clock\tlegacy parsley-clock")
}

// DeclareTopicArgs says that cmd's arguments are topic names: they
// complete with the cluster's topics not given yet.
func DeclareTopicArgs(cmd *cobra.Command, f *Factory) {
	cmd.ValidArgsFunction = func(c *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		topics, _ := askCluster(c, f, func(ctx context.Context, cl *kafka.Client) (map[string][]int32, error) {
			return cl.TopicPartitions(ctx)
		})
		var out []cobra.Completion
		for name := range topics {
			if !slices.Contains(args, name) {
				out = append(out, escape.Text(name))
			}
		}
		slices.Sort(out)
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// listOf completes one element of a comma-separated list: the candidates
// come from values, prefixed by the elements already typed.
func listOf(values func(c *cobra.Command) ([]cobra.Completion, cobra.ShellCompDirective)) cobra.CompletionFunc {
	return func(c *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		done := ""
		if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
			done = toComplete[:i+1]
		}
		if strings.Contains(toComplete[len(done):], "=") {
			// Typing a position: nothing to offer.
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cands, dir := values(c)
		if done != "" {
			for i, v := range cands {
				cands[i] = done + v
			}
		}
		return cands, dir
	}
}

// clusterChannels lists the cluster's topics and NAME/PARTITION channels.
// With suffix ("=" for --start) only channels are offered, each followed
// by suffix and no space, ready for the position.
func clusterChannels(f *Factory, suffix string) func(*cobra.Command) ([]cobra.Completion, cobra.ShellCompDirective) {
	return func(c *cobra.Command) ([]cobra.Completion, cobra.ShellCompDirective) {
		topics, ok := askCluster(c, f, func(ctx context.Context, cl *kafka.Client) (map[string][]int32, error) {
			return cl.TopicPartitions(ctx)
		})
		if !ok {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names := make([]string, 0, len(topics))
		for name := range topics {
			names = append(names, name)
		}
		slices.SortFunc(names, cmp.Compare)
		var out []cobra.Completion
		for _, name := range names {
			topic := name
			name := escape.Text(name) // a completion is a line: nothing may break it
			if suffix == "" {
				out = append(out, fmt.Sprintf("%s\ttopic, %s", name, render.Count(len(topics[topic]), "partition", "partitions")))
			}
			for _, p := range topics[topic] {
				out = append(out, fmt.Sprintf("%s/%d%s", name, p, suffix))
			}
		}
		if suffix != "" {
			return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// clusterGroups completes --from-group with the cluster's consumer groups.
func clusterGroups(f *Factory) cobra.CompletionFunc {
	return func(c *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		groups, _ := askCluster(c, f, func(ctx context.Context, cl *kafka.Client) ([]string, error) {
			return cl.Groups(ctx)
		})
		for i, g := range groups {
			groups[i] = escape.Text(g)
		}
		return groups, cobra.ShellCompDirectiveNoFileComp
	}
}

// CompleteApps completes cmd's flag name (--app) with the application ids
// of the cluster's Parsley processes: the topics named
// APP-__parsley.ordering-changelog.
func CompleteApps(cmd *cobra.Command, f *Factory, name string) {
	registerCompletion(cmd, name, func(c *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		topics, _ := askCluster(c, f, func(ctx context.Context, cl *kafka.Client) (map[string][]int32, error) {
			return cl.TopicPartitions(ctx)
		})
		var out []cobra.Completion
		for topic, parts := range topics {
			if app, ok := parsley.AppOf(topic); ok {
				out = append(out, fmt.Sprintf("%s\tParsley process, %s", escape.Text(app), render.Count(len(parts), "task", "tasks")))
			}
		}
		slices.Sort(out)
		return out, cobra.ShellCompDirectiveNoFileComp
	})
}

// CompleteTasks completes cmd's flag name (--task) with the task numbers
// of the process the command line's appFlag (--app) names: its ordering
// changelog's partitions. Without it, nothing.
func CompleteTasks(cmd *cobra.Command, f *Factory, name, appFlag string) {
	registerCompletion(cmd, name, func(c *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		app := ""
		if fl := c.Flags().Lookup(appFlag); fl != nil {
			app = fl.Value.String()
		}
		if app == "" {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		topics, _ := askCluster(c, f, func(ctx context.Context, cl *kafka.Client) (map[string][]int32, error) {
			return cl.TopicPartitions(ctx)
		})
		parts := slices.Clone(topics[app+parsley.ChangelogSuffix])
		slices.Sort(parts)
		var out []cobra.Completion
		for _, p := range parts {
			out = append(out, strconv.Itoa(int(p))+"\ttask of "+escape.Text(app))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
}

// CompleteProcessFlags registers, on every command of tree whose --app
// names a Parsley process and whose --task one of its tasks, the
// completions of CompleteApps and CompleteTasks, where the flag's
// declarer has registered none.
func CompleteProcessFlags(tree *cobra.Command, f *Factory) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, name := range []string{"app", "task"} {
			if c.LocalNonPersistentFlags().Lookup(name) == nil {
				continue
			}
			if _, ok := c.GetFlagCompletionFunc(name); ok {
				continue
			}
			if name == "app" {
				CompleteApps(c, f, name)
			} else if c.LocalNonPersistentFlags().Lookup("app") != nil {
				CompleteTasks(c, f, name, "app")
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(tree)
}

// askCluster connects with the command line's connection settings and
// asks, all within CompletionTimeout. It reports false on any failure (no
// settings, no broker, no answer in time); completion then offers nothing,
// and prints nothing.
func askCluster[T any](c *cobra.Command, f *Factory, ask func(context.Context, *kafka.Client) (T, error)) (T, bool) {
	var zero T
	if f.Conn == nil {
		return zero, false
	}
	cfg, err := f.Conn.Resolve(f.Getenv)
	if err != nil {
		return zero, false
	}
	cfg.DialTimeout = min(cfg.DialTimeout, CompletionTimeout)
	cfg.RequestTimeout = min(cfg.RequestTimeout, CompletionTimeout)
	parent := c.Context()
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithTimeout(parent, CompletionTimeout)
	defer cancel()
	type answer struct {
		v   T
		err error
	}
	// The answer is awaited no longer than ctx, even if a step ignored
	// it: the process ends right after a completion anyway.
	done := make(chan answer, 1)
	go func() {
		cl, err := kafka.Dial(ctx, cfg)
		if err != nil {
			done <- answer{err: err}
			return
		}
		defer cl.Close()
		v, err := ask(ctx, cl)
		done <- answer{v, err}
	}()
	select {
	case a := <-done:
		return a.v, a.err == nil
	case <-ctx.Done():
		return zero, false
	}
}
