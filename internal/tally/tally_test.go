package tally

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/perch-tui/perch/internal/pricing"
)

// Request: copies of one request (its key) count once, at their largest;
// a new key counts the last one done; negative counts are none.
func TestRequest(t *testing.T) {
	var e Entry
	e.Request("a", "m1", pricing.Tokens{Input: 10, Output: 1})
	e.Request("a", "m1", pricing.Tokens{Input: 10, Output: 5})
	e.Request("b", "m2", pricing.Tokens{Input: 3, CacheRead: -7})
	e.Request("", "m2", pricing.Tokens{Output: 2})
	e.Request("", "m2", pricing.Tokens{Output: 2}) // no key: another request
	s := e.Split()
	if e.Tokens() != 15+3+4 || s.Total() != e.Tokens() || s.Models["m1"].Output != 5 || s.Models["m2"].Output != 4 {
		t.Errorf("tokens %d, split %+v", e.Tokens(), s)
	}
}

// Keep reads back what Save wrote; a file of another version (an older
// perch's) is started over, not misread.
func TestKeep(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, []byte("1\n2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	line := func(e *Entry, b []byte) { e.Request(string(b), "m", pricing.Tokens{Input: 1}) }
	keep := filepath.Join(dir, "state", "kept.json")
	a := New(line)
	a.Keep(keep)
	if _, err := a.Count(path); err != nil {
		t.Fatal(err)
	}
	if err := a.Save(); err != nil {
		t.Fatal(err)
	}
	b := New(line)
	b.Keep(keep)
	if e, ok := b.Get(path); !ok || e.Tokens() != 2 {
		t.Errorf("read back %+v %v", e, ok)
	}
	if changed, err := b.Count(path); err != nil || changed || b.Reads() != 0 {
		t.Errorf("counted again: changed %v, %d reads, %v", changed, b.Reads(), err)
	}
	old := `{"` + path + `":{"size":4,"mod":"2026-01-01T00:00:00Z","off":4,"tokens":2}}`
	if err := os.WriteFile(keep, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	c := New(line)
	c.Keep(keep)
	if _, ok := c.Get(path); ok {
		t.Error("an older perch's file was read as this one's")
	}
}
