package render

import "github.com/perch-tui/perch/events"

// cacheKey identifies a render. The item pointer is the identity (IDs may
// be empty or shared between a tool call and its message); the version is
// checked on lookup so that a changed item replaces its entry in place
// instead of leaving stale versions behind.
type cacheKey struct {
	it       *events.Item
	width    int
	expanded bool
	// hideThinking is set for assistant turns only: other items look
	// the same either way and keep their entries.
	hideThinking bool
}

type entry struct {
	key     cacheKey
	version uint64
	c       content
	// lines are the gutter-prefixed lines, [0] unselected and [1] selected,
	// built on demand: moving the selection must not re-render markdown.
	lines      [2][]string
	size       int
	prev, next *entry
}

// lru is a byte-bounded least-recently-used cache. Not safe for concurrent
// use; the Renderer's mutex guards it.
type lru struct {
	m     map[cacheKey]*entry
	head  entry // sentinel: head.next is the most recent
	bytes int
	limit int
}

func newLRU(limit int) *lru {
	c := &lru{limit: limit}
	c.clear()
	return c
}

func (c *lru) clear() {
	c.m = map[cacheKey]*entry{}
	c.head.next, c.head.prev = &c.head, &c.head
	c.bytes = 0
}

func (c *lru) get(k cacheKey) *entry {
	e := c.m[k]
	if e != nil {
		c.unlink(e)
		c.pushFront(e)
	}
	return e
}

// put inserts or refreshes e and returns the number of evictions.
func (c *lru) put(e *entry) int {
	if _, ok := c.m[e.key]; !ok {
		c.m[e.key] = e
		c.pushFront(e)
	}
	return c.resize(e)
}

// resize recomputes e's size after its lines changed.
func (c *lru) resize(e *entry) int {
	c.bytes -= e.size
	e.size = entrySize(e)
	c.bytes += e.size
	return c.evict()
}

func (c *lru) evict() int {
	n := 0
	// Never evict the most recent entry: it is being returned right now.
	for c.bytes > c.limit && c.head.prev != c.head.next {
		old := c.head.prev
		c.remove(old)
		n++
	}
	return n
}

func (c *lru) forget(it *events.Item) {
	for k, e := range c.m {
		if k.it == it {
			c.remove(e)
		}
	}
}

func (c *lru) remove(e *entry) {
	c.unlink(e)
	delete(c.m, e.key)
	c.bytes -= e.size
}

func (c *lru) unlink(e *entry) {
	e.prev.next = e.next
	e.next.prev = e.prev
	e.prev, e.next = nil, nil
}

func (c *lru) pushFront(e *entry) {
	e.next = c.head.next
	e.prev = &c.head
	c.head.next.prev = e
	c.head.next = e
}

// entrySize approximates the memory held by an entry: string bytes plus
// string headers.
func entrySize(e *entry) int {
	n := 128 + len(e.c.headerTail)
	if e.c.body != nil {
		n += e.c.body.size()
	}
	for _, ls := range [][]string{e.c.lines, e.lines[0], e.lines[1]} {
		for _, l := range ls {
			n += len(l) + 16
		}
	}
	return n
}
