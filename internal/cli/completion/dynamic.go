package completion

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/demo"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/replay"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Timeout bounds a completion that asks the cluster, connecting included.
// A dead or slow cluster then completes nothing instead of stalling the
// shell.
const Timeout = time.Second

// Register gives the flags of every command in tree their value
// completions. Flags are recognised by name, so a command added later
// that uses the shared names (--topic, --scope, --start, --from-group,
// --output, …) is covered without registering anything itself. A flag that
// already has a completion keeps it.
func Register(tree *cobra.Command, f *cmdutil.Factory) {
	values := map[string]cobra.CompletionFunc{
		"topic":         listOf(clusterChannels(f, "")),
		"scope":         listOf(clusterChannels(f, "")),
		"start":         listOf(clusterChannels(f, "=")),
		"from-group":    clusterGroups(f),
		"profile":       profiles(f),
		"output":        outputFormats,
		"interleave":    fixed(interleaves()...),
		"header-format": fixed("causes\tparsley.causes (the default)", "clock\tlegacy parsley-clock"),
		"fault":         fixed(faults()...),
		"undecodable":   fixed("fail\tfail the gate closed (the default)", "hold\tkeep the record as a head that never delivers"),
	}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.ValidArgsFunction == nil && c.Annotations[cmdutil.TopicArgsAnnotation] != "" {
			c.ValidArgsFunction = topicArgs(f)
		}
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			if fn, ok := values[fl.Name]; ok {
				if _, has := c.GetFlagCompletionFunc(fl.Name); !has {
					_ = c.RegisterFlagCompletionFunc(fl.Name, fn) // fails only when registered already
				}
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(tree)
}

// fixed completes a fixed set of values ("VALUE\tdescription").
func fixed(values ...string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// interleaves lists the --interleave modes by the names replay parses.
func interleaves() []string {
	var out []string
	for m := replay.File; m <= replay.Random; m++ {
		name, _, _ := strings.Cut(replay.Interleave{Mode: m}.String(), ":")
		out = append(out, name)
	}
	return out
}

// faults lists demo's --fault values.
func faults() []string {
	out := []string{"none\tno fault (the default)"}
	for _, fl := range demo.Faults {
		out = append(out, string(fl))
	}
	return out
}

// outputFormats completes --output with the formats the command declares
// (cmdutil.FormatsAnnotation); a command that declares none completes
// nothing.
func outputFormats(c *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return cmdutil.DeclaredFormats(c), cobra.ShellCompDirectiveNoFileComp
}

// profiles completes --profile with the profiles of the config file the
// command would read (--config, CAUSALCTL_CONFIG or the default path).
func profiles(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if f.Conn == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names, err := f.Conn.ProfileNames(f.Getenv)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return names, cobra.ShellCompDirectiveNoFileComp
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
func clusterChannels(f *cmdutil.Factory, suffix string) func(*cobra.Command) ([]cobra.Completion, cobra.ShellCompDirective) {
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
			if suffix == "" {
				out = append(out, fmt.Sprintf("%s\ttopic, %s", name, render.Count(len(topics[name]), "partition", "partitions")))
			}
			for _, p := range topics[name] {
				out = append(out, fmt.Sprintf("%s/%d%s", name, p, suffix))
			}
		}
		if suffix != "" {
			return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// topicArgs completes arguments that are topic names with the cluster's
// topics not given yet.
func topicArgs(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		topics, _ := askCluster(c, f, func(ctx context.Context, cl *kafka.Client) (map[string][]int32, error) {
			return cl.TopicPartitions(ctx)
		})
		var out []cobra.Completion
		for name := range topics {
			if !slices.Contains(args, name) {
				out = append(out, name)
			}
		}
		slices.Sort(out)
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// clusterGroups completes --from-group with the cluster's consumer groups.
func clusterGroups(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(c *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		groups, _ := askCluster(c, f, func(ctx context.Context, cl *kafka.Client) ([]string, error) {
			return cl.Groups(ctx)
		})
		return groups, cobra.ShellCompDirectiveNoFileComp
	}
}

// askCluster connects with the command line's connection settings and
// asks, all within Timeout. It reports false on any failure (no settings,
// no broker, no answer in time); completion then offers nothing, and
// prints nothing.
func askCluster[T any](c *cobra.Command, f *cmdutil.Factory, ask func(context.Context, *kafka.Client) (T, error)) (T, bool) {
	var zero T
	if f.Conn == nil {
		return zero, false
	}
	cfg, err := f.Conn.Resolve(f.Getenv)
	if err != nil {
		return zero, false
	}
	cfg.DialTimeout = min(cfg.DialTimeout, Timeout)
	cfg.RequestTimeout = min(cfg.RequestTimeout, Timeout)
	parent := c.Context()
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithTimeout(parent, Timeout)
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
