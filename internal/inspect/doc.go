// Package inspect is the one diagnosis of a delivery gate's state: why each
// held head is held, since when, and what to do about it.
//
// It reads a gate (never changes it) together with what is known around it
// — the channels' names, the brokers' log facts (log start, last stable
// offset, high watermark, retention settings), when each held record was
// written or received, and the time now — and classifies every blocker of
// every held head by one Cause. A held head is one model, Head, built one
// way (Chains.Describe): the replay summary, `causalctl holds`, `state` and
// the live view's snapshots (internal/view, which words and arranges them)
// all render it, so one head gets one answer everywhere. What a screen
// shows of it is the view's: this package builds no text for display
// beyond the head's clock and the advice of NextStep.
//
// Like the gate it is pure: no I/O, no goroutines, and no clock of its own;
// time is always passed in.
package inspect
