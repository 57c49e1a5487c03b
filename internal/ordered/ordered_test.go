package ordered

import (
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Results come in the order of Put however long each item takes.
func TestOrderKept(t *testing.T) {
	for _, tc := range []struct {
		name           string
		workers, depth int
		n              int
	}{
		{"one worker", 1, 4, 200},
		{"two workers", 2, 8, 2000},
		{"many workers, shallow", 8, 2, 2000},
		{"many workers, deep", 8, 256, 5000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(tc.workers, tc.depth, 1<<30, func(i int) int {
				if i%7 == 0 {
					time.Sleep(time.Duration(i%3) * 100 * time.Microsecond)
				}
				return i * 2
			})
			go func() {
				for i := range tc.n {
					if !p.Put(i, 1, nil) {
						t.Errorf("Put(%d) refused", i)
					}
				}
				p.Close()
			}()
			next := 0
			for tk := range p.Results() {
				if got := tk.Wait(); got != next*2 {
					t.Fatalf("result %d = %d, want %d", next, got, next*2)
				}
				next++
			}
			if next != tc.n {
				t.Fatalf("got %d results, want %d", next, tc.n)
			}
			if n := p.Pending(); n != 0 {
				t.Fatalf("Pending after drain = %d", n)
			}
			p.Wait()
		})
	}
}

// A producer faster than the consumer waits: at most depth items, and no
// more than maxBytes of them (but always one), are in flight.
func TestBounded(t *testing.T) {
	for _, tc := range []struct {
		name            string
		depth, maxBytes int
		size            int
		wantMax         int
	}{
		{"by count", 5, 1 << 30, 1, 5 + 1},
		{"by bytes", 100, 10, 3, 3},
		{"one item larger than the bound", 100, 10, 50, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(2, tc.depth, tc.maxBytes, func(i int) int { return i })
			var put atomic.Int64
			go func() {
				for i := range 50 {
					p.Put(i, tc.size, nil)
					put.Add(1)
				}
				p.Close()
			}()
			taken := 0
			for tk := range p.Results() {
				// Give the producer every chance to run ahead.
				deadline := time.Now().Add(20 * time.Millisecond)
				for time.Now().Before(deadline) && int(put.Load())-taken < tc.wantMax {
					time.Sleep(time.Millisecond)
				}
				// put counts the Put in progress once it returned: the
				// ticket being taken plus those still queued.
				if ahead := int(put.Load()) - taken; ahead > tc.wantMax {
					t.Fatalf("%d items in flight, want at most %d", ahead, tc.wantMax)
				}
				tk.Wait()
				taken++
			}
			if taken != 50 {
				t.Fatalf("took %d, want 50", taken)
			}
			p.Wait()
		})
	}
}

// A cancelled Put returns false without queueing, and Put after Close is
// refused.
func TestCancelAndClose(t *testing.T) {
	p := New(1, 1, 1<<30, func(i int) int { return i })
	if !p.Put(1, 1, nil) {
		t.Fatal("first Put refused")
	}
	cancel := make(chan struct{})
	res := make(chan bool)
	go func() { res <- p.Put(2, 1, cancel) }()
	select {
	case <-res:
		t.Fatal("Put into a full pool returned")
	case <-time.After(20 * time.Millisecond):
	}
	close(cancel)
	if <-res {
		t.Fatal("cancelled Put reported success")
	}
	if n := p.Pending(); n != 1 {
		t.Fatalf("Pending = %d, want 1", n)
	}
	p.Close()
	if p.Put(3, 1, nil) {
		t.Fatal("Put after Close accepted")
	}
	var got []int
	for tk := range p.Results() {
		got = append(got, tk.Wait())
	}
	if len(got) != 1 || got[0] != 1 {
		t.Fatalf("results %v, want [1]", got)
	}
	p.Wait()
}
