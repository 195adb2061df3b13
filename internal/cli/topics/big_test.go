package topics

import (
	"testing"

	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
)

// BenchmarkBigCluster lists a cluster of 500 topics of 20 partitions
// (10 000 partitions) with their offsets, as text and JSON, through the
// same client as the CLI (docs/performance.md, "Big clusters").
func BenchmarkBigCluster(b *testing.B) {
	c := kafkatest.BigCluster(b, 500, 20)
	addr := c.ListenAddrs()[0]
	for _, format := range []string{"text", "json"} {
		b.Run(format, func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				ios, _, out, _ := iostreams.Test()
				if err := command(cmdutiltest.Factory(ios, addr), nil, "-o", format); err != nil {
					b.Fatal(err)
				}
				size = out.Len()
			}
			b.ReportMetric(float64(size), "out-B")
		})
	}
}
