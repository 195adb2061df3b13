package testutil

import "path/filepath"

// Testdata returns the path of elem in the testdata directory at the
// module root: the fixtures no one package owns, such as the captures in
// testdata/captures that replay, holds, the views, the stepper and the
// acceptance suites all read. A package's own fixtures stay in its own
// testdata. It panics outside the module, where no test runs.
func Testdata(elem ...string) string {
	root, err := moduleRoot()
	if err != nil {
		panic("testutil.Testdata: no go.mod above the working directory: " + err.Error())
	}
	return filepath.Join(append([]string{root, "testdata"}, elem...)...)
}
