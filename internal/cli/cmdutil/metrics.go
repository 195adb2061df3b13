package cmdutil

import (
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/causalctl/causalctl/internal/metrics"
)

// AddMetricsAddrFlag registers --metrics-addr on fs, the address of the
// Prometheus endpoint of `watch` and `demo`.
func AddMetricsAddrFlag(fs *pflag.FlagSet, addr *string) {
	fs.StringVar(addr, "metrics-addr", "", "serve Prometheus metrics at http://`HOST:PORT`/metrics and health at /healthz (port 0: a free port)")
}

// AddMetricsMaxChannelsFlag registers --metrics-max-channels on fs: how
// many channels get per-channel series (of), the bound on what one scrape
// of a big scope costs (docs/metrics.md).
func AddMetricsMaxChannelsFlag(fs *pflag.FlagSet, n *int, of string) {
	fs.IntVar(n, "metrics-max-channels", metrics.DefaultMaxChannels, "export "+of+" for at most `N` channels, counting the rest in a _channels_dropped gauge (0: no bound)")
}

// CheckMaxChannels checks --metrics-max-channels: a count, 0 for none.
func CheckMaxChannels(n int) error {
	if n < 0 {
		return Usagef("--metrics-max-channels %d: want a count of channels, or 0 for no bound", n)
	}
	return nil
}

// CheckListenAddr checks a HOST:PORT flag value ("" is no address): a
// value that cannot be listened on as written is a usage error.
func CheckListenAddr(flag, addr string) error {
	if addr == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return Usagef("%s %q: want HOST:PORT, e.g. 127.0.0.1:9464 or :9464", flag, addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return Usagef("%s %q: the port must be a number from 0 to 65535", flag, addr)
	}
	return nil
}

// AnnounceMetrics says where the metrics endpoint listens, on w (stderr:
// stdout stays the command's output).
func AnnounceMetrics(w io.Writer, addr string) {
	fmt.Fprintf(w, "metrics: http://%s/metrics (health: /healthz)\n", addr)
}
