package view

import (
	"strconv"
	"time"

	"github.com/causalctl/causalctl/internal/inspect"
)

// AgeText is a short form of a (850ms, 12.3s, 4m05s, 2h03m, 3d04h), or "-"
// when unknown.
func AgeText(a inspect.Age) string {
	if !a.Known {
		return "-"
	}
	d := max(a.D, 0)
	switch {
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	case d < time.Hour:
		return pad2(int64(d/time.Minute), "m", int64(d%time.Minute/time.Second), "s")
	case d < 24*time.Hour:
		return pad2(int64(d/time.Hour), "h", int64(d%time.Hour/time.Minute), "m")
	}
	return pad2(int64(d/(24*time.Hour)), "d", int64(d%(24*time.Hour)/time.Hour), "h")
}

func pad2(a int64, ua string, b int64, ub string) string {
	s := strconv.FormatInt(a, 10) + ua
	if b < 10 {
		s += "0"
	}
	return s + strconv.FormatInt(b, 10) + ub
}
