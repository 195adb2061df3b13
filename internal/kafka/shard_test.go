package kafka

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// TestOnlyPartitions: a range with OnlyPartitions opens and reads only the
// partitions kept, of every topic selected, and none when none is kept.
func TestOnlyPartitions(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(5, "m"))
	seedMany(t, c, "m", 5, 40, 10)
	cl := dialTest(t, c)
	sels, spec := parseRange(t, []string{"m"}, ":end")
	for _, tc := range []struct {
		keep func(int32) bool
		want string
	}{
		{func(p int32) bool { return p%2 == 1 }, "[m/1 m/3]"},
		{func(p int32) bool { return p == 4 }, "[m/4]"},
		{func(int32) bool { return false }, "[]"},
	} {
		r, err := cl.OpenRange(testCtx(t), sels, spec, OnlyPartitions(tc.keep))
		if err != nil {
			t.Fatal(err)
		}
		var chans []string
		for _, rc := range r.Channels() {
			chans = append(chans, fmt.Sprintf("%s/%d", rc.Topic, rc.Partition))
		}
		if got := fmt.Sprint(chans); got != tc.want {
			t.Errorf("channels %s, want %s", got, tc.want)
		}
		for _, it := range drain(t, r) {
			if !tc.keep(it.Partition) {
				t.Errorf("read %s/%d offset %d", it.Topic, it.Partition, it.Offset)
			}
		}
	}
}
