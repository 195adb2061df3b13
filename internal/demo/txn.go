package demo

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// txnAttempts bounds the attempts at one transaction whose writes the
// broker refuses.
const txnAttempts = 3

// inTxn begins a transaction of cl and runs write in it, leaving the
// transaction open when write succeeds. When the broker refuses a write
// for the producer's own state (an OUT_OF_ORDER_SEQUENCE_NUMBER, which the
// embedded broker has been seen to return now and then under load; an
// epoch it no longer knows),
// inTxn aborts the transaction, which makes franz-go renew the producer's
// epoch and number its batches afresh, and runs write again in a new one:
// what an exactly-once producer such as a Kafka Streams task does. It
// tries txnAttempts times in all. aborted, when set, is told how many
// records each abandoned attempt had written.
func inTxn(ctx context.Context, cl *kgo.Client, write func() (written int, err error), aborted func(written int)) error {
	var err error
	for attempt := 1; ; attempt++ {
		if err = cl.BeginTransaction(); err != nil {
			return err
		}
		var written int
		if written, err = write(); err == nil {
			return nil
		}
		if abortErr := cl.EndTransaction(ctx, kgo.TryAbort); abortErr != nil {
			return fmt.Errorf("%w (and aborting the transaction: %v)", err, abortErr)
		}
		if aborted != nil {
			aborted(written)
		}
		if !refusedForProducerState(err) || ctx.Err() != nil {
			return err
		}
		if attempt == txnAttempts {
			return fmt.Errorf("%d attempts: %w", attempt, err)
		}
	}
}

// refusedForProducerState reports whether err is a broker's refusal of a
// batch for the producer's sequence or epoch, which a new transaction,
// under a renewed epoch, does not meet.
func refusedForProducerState(err error) bool {
	return errors.Is(err, kerr.OutOfOrderSequenceNumber) || errors.Is(err, kerr.InvalidProducerEpoch) ||
		errors.Is(err, kerr.UnknownProducerID) || errors.Is(err, kerr.InvalidProducerIDMapping)
}
