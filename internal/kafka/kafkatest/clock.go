package kafkatest

import (
	"context"
	"sync"
	"time"
)

// StepClock is a kafka.Clock whose Sleep returns at once, moving its time
// on: a test runs out a retry time without waiting for it, and reads how
// long the code under test would have waited.
type StepClock struct {
	mu    sync.Mutex
	now   time.Time
	slept time.Duration
}

// NewStepClock returns a StepClock at now.
func NewStepClock(now time.Time) *StepClock { return &StepClock{now: now} }

// Now is the clock's time: where it started plus what it slept.
func (c *StepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep moves the clock on by d, at once; ctx's error when it is done.
func (c *StepClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.slept += d
	return nil
}

// Slept is the time Sleep moved the clock on.
func (c *StepClock) Slept() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slept
}
