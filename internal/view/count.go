package view

import "strconv"

// Count says n things in the right number: Count(1, "finding", "findings")
// is "1 finding", Count(156, …) "156 findings". Every count printed for
// people goes through it (render.Count for the commands, which sit above
// this package; the views directly), so none says "1 findings".
func Count[N ~int | ~int32 | ~int64](n N, one, many string) string {
	return strconv.FormatInt(int64(n), 10) + " " + Noun(n, one, many)
}

// Noun is the noun of Count alone, for a count written apart from it.
func Noun[N ~int | ~int32 | ~int64](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
