package client

import (
	"errors"
	"fmt"
	"testing"
)

func TestSendClass(t *testing.T) {
	base := errors.New("refused")
	for _, c := range []struct {
		err  error
		want SendClass
	}{
		{base, SendUnknown},
		{Retryable(base), SendRetryable},
		{Permanent(base), SendPermanent},
		{fmt.Errorf("sending: %w", Permanent(base)), SendPermanent},
		{fmt.Errorf("sending: %w", Retryable(base)), SendRetryable},
	} {
		if got := ClassOf(c.err); got != c.want {
			t.Errorf("ClassOf(%v) = %d, want %d", c.err, got, c.want)
		}
		if !errors.Is(c.err, base) || c.err.Error() == "" {
			t.Errorf("%v: the marked error hides its cause", c.err)
		}
	}
	if Retryable(nil) != nil || Permanent(nil) != nil {
		t.Error("marking nil is not nil")
	}
}
