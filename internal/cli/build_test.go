package cli

import (
	"runtime/debug"
	"testing"
)

// TestBuildDefaults: what -ldflags set wins; what it left empty comes from
// the module's build information.
func TestBuildDefaults(t *testing.T) {
	info := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/causalctl/causalctl", Version: "v1.2.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "feedface"},
			{Key: "vcs.time", Value: "2026-11-30T12:00:00Z"},
		},
	}
	for _, tc := range []struct {
		name string
		in   Build
		info *debug.BuildInfo
		want Build
	}{
		{"ldflags win", Build{"v2.0.0", "abc", "2026-12-01T00:00:00Z"}, info, Build{"v2.0.0", "abc", "2026-12-01T00:00:00Z"}},
		{"module build info fills in", Build{}, info, Build{"v1.2.0", "feedface", "2026-11-30T12:00:00Z"}},
		{"only the version stamped", Build{Version: "v2.0.0"}, info, Build{"v2.0.0", "feedface", "2026-11-30T12:00:00Z"}},
		{"no VCS information", Build{}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, Build{Version: "(devel)"}},
		{"no build information", Build{}, nil, Build{Version: "(devel)"}},
	} {
		if got := tc.in.withDefaults(tc.info); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
