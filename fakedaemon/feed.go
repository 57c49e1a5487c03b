package fakedaemon

import (
	"context"
	"sync"
)

// feed is an append-only log with any number of readers. Readers keep their
// own index and block on a notify channel that is closed (and replaced) on
// every append, so no goroutine is spent per event or per subscriber.
type feed[T any] struct {
	mu     sync.Mutex
	items  []T
	notify chan struct{}
}

func newFeed[T any]() *feed[T] {
	return &feed[T]{notify: make(chan struct{})}
}

// append adds items and wakes every waiting reader.
func (f *feed[T]) append(items ...T) {
	if len(items) == 0 {
		return
	}
	f.mu.Lock()
	f.items = append(f.items, items...)
	close(f.notify)
	f.notify = make(chan struct{})
	f.mu.Unlock()
}

// len reports how many items the feed holds.
func (f *feed[T]) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.items)
}

// wait returns the items from index from on, blocking until there is at
// least one or ctx ends. The returned slice is never written to again
// (appends only go past its end), so it may be read without the lock.
func (f *feed[T]) wait(ctx context.Context, from int) ([]T, error) {
	for {
		f.mu.Lock()
		if from < len(f.items) {
			s := f.items[from:len(f.items):len(f.items)]
			f.mu.Unlock()
			return s, nil
		}
		ch := f.notify
		f.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
