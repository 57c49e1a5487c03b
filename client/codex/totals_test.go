package codex

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

const costThread = "01a24e52-1229-70a3-bb7d-f46f05a00999"

// count is a token_count line: the request's prompt (cached part
// included), cached part and output, and the thread's running total.
func count(prompt, cached, out, total int64) []byte {
	return []byte(fmt.Sprintf(`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"total_tokens":%d},"last_token_usage":{"input_tokens":%d,"cached_input_tokens":%d,"output_tokens":%d,"total_tokens":%d}}}}`+"\n",
		total, prompt, cached, out, prompt+out))
}

func turnContext(model string) []byte {
	return []byte(fmt.Sprintf(`{"type":"turn_context","payload":{"cwd":"/w","model":%q}}`+"\n", model))
}

func sessionMeta(model string) []byte {
	return []byte(fmt.Sprintf(`{"type":"session_meta","payload":{"id":%q,"cwd":"/w","timestamp":"2026-12-07T02:25:31Z","model":%q}}`+"\n", costThread, model))
}

// TestSessionCost: a Codex session's cost is each request at the model of
// its turn (session_meta's until a turn_context names one), its cached
// prompt at the cache price, a count written twice once; a model without
// a price makes it unknown, never $0.
func TestSessionCost(t *testing.T) {
	gpt5 := (1000-400)*1.25/1e6 + 400*0.125/1e6 + 100*10/1e6
	mini := 500*0.25/1e6 + 50*2/1e6
	for _, c := range []struct {
		name   string
		lines  [][]byte
		tokens int64
		cost   float64
		known  bool
	}{
		{"one model", [][]byte{sessionMeta("gpt-5"), count(1000, 400, 100, 1100)}, 1100, gpt5, true},
		{"a count written twice", [][]byte{sessionMeta("gpt-5"), count(1000, 400, 100, 1100), count(1000, 400, 100, 1100)}, 1100, gpt5, true},
		{"the model changed", [][]byte{sessionMeta("gpt-5"), turnContext("gpt-5"), count(1000, 400, 100, 1100),
			turnContext("gpt-5-mini"), count(500, 0, 50, 1650)}, 1650, gpt5 + mini, true},
		{"a model without a price", [][]byte{sessionMeta("gpt-5"), count(1000, 400, 100, 1100),
			turnContext("gpt-9-turbo"), count(500, 0, 50, 1650)}, 1650, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := codexHome(t)
			path := rolloutPath(home, costThread)
			writeLines(t, path, c.lines)
			l := open(t, home)
			if got := only(t, l); got.HasCost {
				t.Errorf("a cost %v before the rollout was counted", got.Cost)
			}
			if _, err := l.totals.Count(path); err != nil {
				t.Fatal(err)
			}
			got := only(t, l)
			if got.Tokens != c.tokens || got.HasCost != c.known || math.Abs(got.Cost-c.cost) > 1e-12 {
				t.Errorf("tokens %d, cost %v (known %v); want %d, %v (%v)", got.Tokens, got.Cost, got.HasCost, c.tokens, c.cost, c.known)
			}
		})
	}
}

// TestTotalsKeptAcrossStarts: the counts are kept, and the next start
// lists them without reading the rollout again: its middle overwritten
// (same size, same modification time) leaves the kept count standing.
func TestTotalsKeptAcrossStarts(t *testing.T) {
	home := codexHome(t)
	path := rolloutPath(home, costThread)
	writeLines(t, path, [][]byte{sessionMeta("gpt-5"), count(1000, 400, 100, 1100), turnContext("gpt-5-mini"), count(500, 0, 50, 1650)})
	keep := filepath.Join(t.TempDir(), "local", "codex.json")
	first := open(t, home)
	first.KeepTotals(keep)
	if _, err := first.totals.Count(path); err != nil {
		t.Fatal(err)
	}
	if err := first.totals.Save(); err != nil {
		t.Fatal(err)
	}
	want := only(t, first)
	if !want.HasCost {
		t.Fatalf("first start: no cost: %+v", want)
	}

	// The middle blanked where the counts are: a read would count less.
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(data) / 4; i < len(data)*3/4; i++ {
		if data[i] != '\n' {
			data[i] = ' '
		}
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}

	next := open(t, home)
	next.KeepTotals(keep)
	if _, err := next.totals.Count(path); err != nil {
		t.Fatal(err)
	}
	got := only(t, next)
	if next.totals.Reads() != 0 || got.Tokens != want.Tokens || got.Cost != want.Cost || !got.HasCost {
		t.Errorf("next start: %d reads, %d tokens, cost %v; want 0, %d, %v", next.totals.Reads(), got.Tokens, got.Cost, want.Tokens, want.Cost)
	}
}
