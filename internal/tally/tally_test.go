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

// Usage prices the count at the table given last: a cost already
// computed is not kept past a new table, nor past a new count.
func TestUsagePrices(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, []byte("1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ta := New(func(e *Entry, b []byte) { e.Request(string(b), "model-x", pricing.Tokens{Input: 1_000_000}) })
	if _, _, _, found := ta.Usage(path); found {
		t.Error("found before it was counted")
	}
	if _, err := ta.Count(path); err != nil {
		t.Fatal(err)
	}
	if tokens, _, ok, found := ta.Usage(path); !found || tokens != 1_000_000 || ok {
		t.Errorf("unpriced: %d tokens, cost known %v, found %v", tokens, ok, found)
	}
	ta.UsePrices(pricing.DefaultPrices().With(map[string]pricing.Price{"model-x": {Input: 2}}, "test"))
	if _, cost, ok, _ := ta.Usage(path); !ok || cost != 2 {
		t.Errorf("priced: %v %v, want 2", cost, ok)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("2\n")
	f.Close()
	if _, err := ta.Count(path); err != nil {
		t.Fatal(err)
	}
	if _, cost, ok, _ := ta.Usage(path); !ok || cost != 4 {
		t.Errorf("grown: %v %v, want 4", cost, ok)
	}
}
