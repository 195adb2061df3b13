package replay

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/record"
)

// Shard is one of Count shards of a per-task replay (replay --tasks
// --shard K/N): the tasks t with t mod Count == Index. Tasks are
// independent gates, so each shard can run on its own machine and their
// summaries merge into the single run's (docs/scale.md). By residue
// rather than by contiguous range: a shard needs no count of the tasks,
// and the low partitions, which every topic has, spread over the shards.
type Shard struct {
	Index int32 `json:"index"`
	Count int32 `json:"count"`
	// Unfed counts the records the shard read and left to the other
	// shards' tasks (ShardSource): with the summary's received and
	// skipped, every record read. 0 for a broker range, which fetches
	// the shard's partitions only.
	Unfed int64 `json:"unfed"`
}

// ParseShard reads K/N, 0 ≤ K < N.
func ParseShard(s string) (Shard, error) {
	k, n, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want K/N, e.g. 0/4", s)
	}
	ki, err1 := strconv.ParseInt(k, 10, 32)
	ni, err2 := strconv.ParseInt(n, 10, 32)
	switch {
	case err1 != nil || err2 != nil:
		return Shard{}, fmt.Errorf("shard %q: K and N must be integers", s)
	case ni < 1:
		return Shard{}, fmt.Errorf("shard %q: N must be at least 1", s)
	case ki < 0 || ki >= ni:
		return Shard{}, fmt.Errorf("shard %q: K must be from 0 to N-1 = %d", s, ni-1)
	}
	return Shard{Index: int32(ki), Count: int32(ni)}, nil
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Has reports whether task is of the shard.
func (s Shard) Has(task int32) bool { return task%s.Count == s.Index }

// ShardSource yields the items of src whose partition is a task of sh,
// and drops the others unread by any gate. Each task's items keep their
// order. Filtering before an interleaving that holds every item
// (Reorder) keeps only the shard's items in memory; it gives each task
// the order the whole input's interleaving would for every mode but
// Random, whose choices depend on every channel, so Random is filtered
// after reordering.
func ShardSource(src engine.Source, sh Shard) *Sharded { return &Sharded{src: src, sh: sh} }

// Sharded is a ShardSource.
type Sharded struct {
	src   engine.Source
	sh    Shard
	unfed int64
}

func (s *Sharded) Next() (*record.Item, error) {
	for {
		it, err := s.src.Next()
		if err != nil || s.sh.Has(it.Partition) {
			return it, err
		}
		if it.Kind == record.KindRecord {
			s.unfed++
		}
	}
}

// Unfed counts the records read so far that belong to other shards.
func (s *Sharded) Unfed() int64 { return s.unfed }
