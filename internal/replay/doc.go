// Package replay is the offline replay over internal/engine: the stepper
// (Stepper, one item or event at a time, jumps, speeds), the interleavings
// of an input's channels (Interleave, Reorder, MergeByTimestamp), shards of
// the tasks (Shard, ShardSource), and a prefetching reader of capture files
// (Prefetch). The gate itself is driven by engine's Replayer and Tasks;
// this package decides in which order and how far they are fed.
package replay
