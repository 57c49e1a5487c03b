package cli

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// Interrupted is the cause of a context that a signal ended (see
// NotifyContext): Main then says so on stderr and exits 128 + the signal's
// number (130 for Ctrl-C), as a shell reports a program a signal stopped.
type Interrupted struct{ Signal os.Signal }

func (i Interrupted) Error() string { return i.Signal.String() + " signal received" }

// Is lets errors.Is(cause, context.Canceled) hold, as for any cancel.
func (i Interrupted) Is(target error) bool { return target == context.Canceled }

// exitCode is 128 + the signal's number.
func (i Interrupted) exitCode() int {
	if s, ok := i.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 128 + int(syscall.SIGINT)
}

// word is what Main says on stderr.
func (i Interrupted) word() string {
	if i.Signal == syscall.SIGTERM {
		return "terminated"
	}
	return "interrupted"
}

// NotifyContext returns a context that ends at the first SIGINT or SIGTERM
// with Interrupted as its cause, so the commands can finish what they
// hold (export prints what it has, marked incomplete). A second signal
// then ends perch at once: the handler is gone, the default action is
// back. stop releases the handler.
func NotifyContext(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-ch:
			cancel(Interrupted{Signal: s})
			signal.Stop(ch)
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(context.Canceled)
	}
}

// interruption reports the signal that ended ctx, if one did.
func interruption(ctx context.Context) (Interrupted, bool) {
	var i Interrupted
	if ctx.Err() == nil || !errors.As(context.Cause(ctx), &i) {
		return Interrupted{}, false
	}
	return i, true
}
