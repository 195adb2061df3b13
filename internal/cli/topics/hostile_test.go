package topics

import (
	"testing"

	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/testutil"
)

// TestHostileTopicNamesEscaped: a broker or a proxy that checks no names
// can list any bytes as a topic: the table prints them escaped, on a
// terminal and in a pipe.
func TestHostileTopicNamesEscaped(t *testing.T) {
	var infos []kafka.TopicInfo
	for i, name := range testutil.Hostile {
		infos = append(infos, kafka.TopicInfo{Name: name, ID: clock.TopicID{byte(i + 1)}, Partitions: []kafka.PartitionInfo{{Partition: 0}}})
	}
	for _, tty := range []bool{true, false} {
		ios, _, out, _ := iostreams.Test()
		ios.SetTTY(tty)
		f := cmdutiltest.Factory(ios, "")
		if err := write(&Options{IO: ios, Final: f.Final, Output: "text"}, infos); err != nil {
			t.Fatal(err)
		}
		testutil.NoRawHostile(t, "topics", out.String())
	}
}
