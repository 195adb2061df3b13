package render

import "github.com/causalctl/causalctl/internal/view"

// Count says n things in the right number: Count(1, "finding", "findings")
// is "1 finding", Count(156, …) "156 findings". Every count a command
// prints for people goes through it, so none says "1 findings"; it is
// view.Count, which the live views below the commands use.
func Count[N ~int | ~int32 | ~int64](n N, one, many string) string {
	return view.Count(n, one, many)
}

// Noun is the noun of Count alone, for a count written apart from it.
func Noun[N ~int | ~int32 | ~int64](n N, one, many string) string {
	return view.Noun(n, one, many)
}
