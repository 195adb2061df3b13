// Package topics implements `causalctl topics`: topic names, UUIDs and
// per-partition offsets, read from the brokers.
package topics

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/spf13/cobra"
)

// Options are the parsed flags and dependencies of topics.
type Options struct {
	IO     *iostreams.IOStreams
	Final  *cmdutil.FinalOutput // the final document is written whole or not at all (cmdutil.FinalOutput)
	Output string
	Names  []string
	Dial   func(context.Context) (*kafka.Client, error)
}

// NewCmdTopics returns the topics command.
func NewCmdTopics(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	out := &cmdutil.Output{}
	opts := &Options{IO: f.IOStreams, Final: f.Final, Dial: f.Dial}
	cmd := &cobra.Command{
		Use:   "topics [NAME…]",
		Short: "List topics with their UUIDs and partition offsets",
		Long: `List topics (all that you may describe, internal ones left out, or those
named) with the topic UUID that parsley.causes headers name them by, and for
each partition its log start, end (high watermark) and last stable offset.

Output: text (a table) or json.`,
		Example: `  causalctl topics --brokers localhost:9092
  causalctl topics orders payments -o json`,
		RunE: func(c *cobra.Command, args []string) error {
			var err error
			if opts.Output, err = out.Resolve("text"); err != nil {
				return err
			}
			opts.Names = args
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return Run(c.Context(), opts)
		},
	}
	cmdutil.AddOutputFlag(cmd, out, "text", "json")
	cmdutil.DeclareTopicArgs(cmd, f)
	return cmd
}

type jsonPartition struct {
	Partition     int32 `json:"partition"`
	Leader        int32 `json:"leader"`
	LogStart      int64 `json:"log_start"`
	HighWatermark int64 `json:"high_watermark"`
	LastStable    int64 `json:"last_stable"`
}

type jsonTopic struct {
	Name       string          `json:"name"`
	TopicID    string          `json:"topic_id"`
	Partitions []jsonPartition `json:"partitions"`
}

// Run lists the topics.
func Run(ctx context.Context, opts *Options) error {
	cl, err := opts.Dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	infos, err := cl.Topics(ctx, opts.Names...)
	if err != nil {
		return err
	}
	return opts.Final.Do(func() error { return write(opts, infos) })
}

// write prints the topics as text or JSON.
func write(opts *Options, infos []kafka.TopicInfo) error {
	if opts.Output == "json" {
		out := make([]jsonTopic, 0, len(infos))
		for _, t := range infos {
			jt := jsonTopic{Name: t.Name, TopicID: t.ID.String(), Partitions: []jsonPartition{}}
			for _, p := range t.Partitions {
				jt.Partitions = append(jt.Partitions, jsonPartition{p.Partition, p.Leader, p.LogStart, p.HighWatermark, p.LastStable})
			}
			out = append(out, jt)
		}
		enc := json.NewEncoder(opts.IO.Out)
		enc.SetEscapeHTML(false)
		return enc.Encode(out)
	}
	if len(infos) == 0 {
		fmt.Fprintln(opts.IO.Out, "No topics.")
		return nil
	}
	// On a narrow terminal the topic UUID goes first (-o json keeps it),
	// then the last stable offset.
	t := render.NewTable(
		render.Column{Title: "Topic"},
		render.Column{Title: "Topic ID", Drop: 2},
		render.Column{Title: "Partition", Right: true},
		render.Column{Title: "Log start", Right: true},
		render.Column{Title: "End", Right: true},
		render.Column{Title: "Last stable", Right: true, Drop: 1},
	)
	for _, info := range infos {
		for _, p := range info.Partitions {
			// A broker or a proxy that checks no names can serve any bytes.
			t.Append(escape.Text(info.Name), info.ID.String(), itoa(p.Partition), itoa(p.LogStart), itoa(p.HighWatermark), itoa(p.LastStable))
		}
	}
	return t.Write(opts.IO.Out, render.Width(opts.IO))
}

func itoa[N ~int32 | ~int64](n N) string { return strconv.FormatInt(int64(n), 10) }
