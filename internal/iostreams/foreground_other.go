//go:build !unix

package iostreams

import "os"

// isForeground: without job control every terminal is the foreground.
func isForeground(*os.File) bool { return true }
