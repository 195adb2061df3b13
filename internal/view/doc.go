// Package view is the live view model: snapshots of a running gate
// (Snapshot, SnapshotOf, SnapshotOfTasks), the Events log of recent events, hold
// times and stop error a gate does not keep, rates (RateMeter), the
// stepper's snapshots (Stepper), and the words for a feed's state and a
// stepper's position. It is what tui, live, metrics and the stepper render.
//
// Every held head is classified by internal/inspect, the one diagnosis,
// through its Chains and Facts; this package only arranges the result for
// a screen, capped so that a snapshot's cost does not grow with what a
// screen cannot show.
//
// Like inspect it is pure: no I/O, no goroutines, and no clock of its own;
// time is always passed in.
package view
