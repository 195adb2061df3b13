//go:build race

package acceptance

// raceDetector says the tests run under -race, some ten times slower:
// the agreement property runs fewer seeds then.
const raceDetector = true
