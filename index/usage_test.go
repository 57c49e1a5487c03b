package index

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/perch-tui/perch/internal/pricing"
)

const sonnet = "claude-sonnet-4-5-20250929"

var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// TestUsagePitfalls: the ways cost reports miscount, each with the truth
// computed by hand from what the provider was sent and answered (prices:
// claude-sonnet-4-5, $/MTok input 3, output 15, cache read 0.30, cache
// write 3.75 (5m) and 6 (1h); over 200k input 6, 22.50, 0.60, 7.50, 12).
func TestUsagePitfalls(t *testing.T) {
	type want struct {
		requests           int64
		tok                pricing.Tokens
		cost               float64
		unknown            bool
		lowerBound         bool
		sourceCost         float64 // 0: none
		sessionRequests    map[string]int64
		sessionInputTokens map[string]int64
	}
	cases := []struct {
		name  string
		files func(dir string) map[string]string
		want  want
	}{{
		name: "streamed copies of one reply count once, with the final output",
		files: func(dir string) map[string]string {
			c := newCC("s1", t0)
			c.user("hi")
			u := usage{in: 100, out: 1, read: 2000, w5: 500}
			c.reply("msg_a", "req_a", sonnet, "one", u, "", nil)
			c.reply("msg_a", "req_a", sonnet, "two", u, "", nil)
			u.out = 250
			c.reply("msg_a", "req_a", sonnet, "three", u, "end_turn", nil)
			return map[string]string{"p/s1.jsonl": c.text()}
		},
		want: want{requests: 1, tok: pricing.Tokens{Input: 100, Output: 250, CacheRead: 2000, Cache5m: 500},
			cost: (100*3 + 250*15 + 2000*0.30 + 500*3.75) / 1e6},
	}, {
		name: "a subagent's requests are its session's",
		files: func(dir string) map[string]string {
			c := newCC("s1", t0)
			c.user("ask a subagent")
			c.reply("msg_a", "req_a", sonnet, "asking", usage{in: 100, out: 50}, "tool_use", nil)
			sub := newCC("s1", t0.Add(time.Minute))
			sub.user("count files")
			sub.reply("msg_b", "req_b", sonnet, "42", usage{in: 200, out: 80}, "end_turn", map[string]any{"isSidechain": true, "agentId": "a1"})
			return map[string]string{"p/s1.jsonl": c.text(), "p/s1/subagents/agent-a1.jsonl": sub.text()}
		},
		want: want{requests: 2, tok: pricing.Tokens{Input: 300, Output: 130}, cost: (300*3 + 130*15) / 1e6,
			sessionRequests: map[string]int64{"s1": 2}},
	}, {
		name: "a resumed session's copy of the earlier run counts once",
		files: func(dir string) map[string]string {
			c := newCC("s1", t0)
			c.user("start")
			c.reply("msg_a", "req_a", sonnet, "started", usage{in: 100, out: 50}, "end_turn", nil)
			first := c.text()
			// The resumed session repeats the conversation so far, then goes on.
			c.session = "s2"
			c.user("go on")
			c.reply("msg_c", "req_c", sonnet, "went on", usage{in: 400, out: 20}, "end_turn", nil)
			return map[string]string{"p/s1.jsonl": first, "p/s2.jsonl": c.text()}
		},
		want: want{requests: 2, tok: pricing.Tokens{Input: 500, Output: 70}, cost: (500*3 + 70*15) / 1e6,
			sessionInputTokens: map[string]int64{"s1": 100, "s2": 400}},
	}, {
		name: "cache writes are priced by their lifetime",
		files: func(dir string) map[string]string {
			c := newCC("s1", t0)
			c.user("cache it")
			c.reply("msg_a", "req_a", sonnet, "cached", usage{in: 10, out: 10, w5: 1000, w1: 2000}, "end_turn", nil)
			return map[string]string{"p/s1.jsonl": c.text()}
		},
		want: want{requests: 1, tok: pricing.Tokens{Input: 10, Output: 10, Cache5m: 1000, Cache1h: 2000},
			cost: (10*3 + 10*15 + 1000*3.75 + 2000*6) / 1e6},
	}, {
		name: "over 200k input the whole request is billed at the long-context prices",
		files: func(dir string) map[string]string {
			c := newCC("s1", t0)
			c.user("long")
			c.reply("msg_a", "req_a", sonnet, "long", usage{in: 1000, read: 250000, out: 100}, "end_turn", nil)
			// At exactly 200k it is not.
			c.reply("msg_b", "req_b", sonnet, "edge", usage{in: 1000, read: 199000, out: 100}, "end_turn", nil)
			return map[string]string{"p/s1.jsonl": c.text()}
		},
		want: want{requests: 2, tok: pricing.Tokens{Input: 2000, Output: 200, CacheRead: 449000},
			cost: (1000*6+250000*0.60+100*22.50)/1e6 + (1000*3+199000*0.30+100*15)/1e6},
	}, {
		name: "a cut-off reply's output is a lower bound",
		files: func(dir string) map[string]string {
			c := newCC("s1", t0)
			c.user("cut")
			c.reply("msg_a", "req_a", sonnet, "partial", usage{in: 100, out: 1}, "", nil)
			return map[string]string{"p/s1.jsonl": c.text()}
		},
		want: want{requests: 1, tok: pricing.Tokens{Input: 100, Output: 1}, cost: (100*3 + 1*15) / 1e6, lowerBound: true},
	}, {
		name: "a model without a price has an unknown cost, not $0",
		files: func(dir string) map[string]string {
			c := newCC("s1", t0)
			c.user("new model")
			c.reply("msg_a", "req_a", "claude-opus-9-9", "hello", usage{in: 100, out: 10}, "end_turn", nil)
			return map[string]string{"p/s1.jsonl": c.text()}
		},
		want: want{requests: 1, tok: pricing.Tokens{Input: 100, Output: 10}, unknown: true},
	}, {
		name: "the source's own cost is kept apart from perch's",
		files: func(dir string) map[string]string {
			c := newCC("s1", t0)
			c.user("costed")
			c.reply("msg_a", "req_a", sonnet, "hello", usage{in: 1000, out: 100}, "end_turn", map[string]any{"costUSD": 0.5})
			return map[string]string{"p/s1.jsonl": c.text()}
		},
		want: want{requests: 1, tok: pricing.Tokens{Input: 1000, Output: 100}, cost: (1000*3 + 100*15) / 1e6, sourceCost: 0.5},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ix := openTemp(t)
			dir := t.TempDir()
			files := tc.files(dir)
			// Index the files in a fixed order: the first copy of a request
			// names its session.
			var names []string
			for n := range files {
				names = append(names, n)
			}
			sortStrings(names)
			for _, n := range names {
				writeFile(t, filepath.Join(dir, n), files[n])
			}
			for _, n := range names {
				mustIndex(t, ix, filepath.Join(dir, n))
			}
			rows, total, err := ix.Usage(context.Background(), UsageQuery{By: "session", Prices: pricing.DefaultPrices()})
			if err != nil {
				t.Fatal(err)
			}
			w := tc.want
			if total.Requests != w.requests || total.Tokens != w.tok {
				t.Errorf("total = %d requests %+v, want %d %+v", total.Requests, total.Tokens, w.requests, w.tok)
			}
			if !w.unknown && (!total.CostKnown() || math.Abs(total.Cost-w.cost) > 1e-12) {
				t.Errorf("cost = %v (unknown %v), want %v", total.Cost, total.Unknown, w.cost)
			}
			if w.unknown && (total.CostKnown() || total.Cost != 0) {
				t.Errorf("cost = %v, unpriced %v: want unknown", total.Cost, total.Unknown)
			}
			if total.OutputLowerBound != w.lowerBound {
				t.Errorf("output lower bound = %v, want %v", total.OutputLowerBound, w.lowerBound)
			}
			switch {
			case w.sourceCost == 0 && total.SourceCost != nil:
				t.Errorf("source cost = %v, want none", *total.SourceCost)
			case w.sourceCost != 0 && (total.SourceCost == nil || *total.SourceCost != w.sourceCost):
				t.Errorf("source cost = %v, want %v", total.SourceCost, w.sourceCost)
			}
			got := map[string]UsageRow{}
			for _, r := range rows {
				got[r.Key] = r
			}
			for s, n := range w.sessionRequests {
				if got[s].Requests != n {
					t.Errorf("session %s: %d requests, want %d (rows %+v)", s, got[s].Requests, n, rows)
				}
			}
			if w.sessionRequests != nil && len(rows) != len(w.sessionRequests) {
				t.Errorf("%d session rows, want %d: %+v", len(rows), len(w.sessionRequests), rows)
			}
			for s, n := range w.sessionInputTokens {
				if got[s].Input != n {
					t.Errorf("session %s: input %d, want %d", s, got[s].Input, n)
				}
			}
		})
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestUsageByTime(t *testing.T) {
	ix := openTemp(t)
	dir := t.TempDir()
	mon := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC) // a Monday
	for i, at := range []time.Time{mon, mon.AddDate(0, 0, 6), mon.AddDate(0, 0, 7), mon.AddDate(0, 1, 0)} {
		c := newCC(fmt.Sprintf("s%d", i), at)
		c.reply(fmt.Sprintf("msg_%d", i), "req", sonnet, "hi", usage{in: 1, out: 1}, "end_turn", nil)
		path := filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i))
		writeFile(t, path, c.text())
		mustIndex(t, ix, path)
	}
	for by, want := range map[string]map[string]int64{
		"day":   {"2026-03-02": 1, "2026-03-08": 1, "2026-03-09": 1, "2026-04-02": 1},
		"week":  {"2026-03-02": 2, "2026-03-09": 1, "2026-03-30": 1},
		"month": {"2026-03": 3, "2026-04": 1},
	} {
		rows, _, err := ix.Usage(context.Background(), UsageQuery{By: by, Prices: pricing.DefaultPrices(), Location: time.UTC})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, r := range rows {
			got[r.Key] = r.Requests
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("by %s: %v, want %v", by, got, want)
		}
	}
}

// TestCodexRollout: a real Codex rollout (client/codex's capture): each
// token_count is one request, and their sum is the running total the last
// one reports (11,300 input of which 8,704 cached, 290 output); the
// model, gpt-5.5, has no price in the table, so its cost is unknown.
func TestCodexRollout(t *testing.T) {
	ix := openTemp(t)
	r, err := ix.IndexFile(context.Background(), Source{Path: "../client/codex/testdata/cli/session.rollout.jsonl", From: "codex"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Session != "01a22095-b20d-7e20-ac25-b85a278e6830" {
		t.Errorf("session %q, want the rollout's id", r.Session)
	}
	rows, total, err := ix.Usage(context.Background(), UsageQuery{By: "model", Prices: pricing.DefaultPrices()})
	if err != nil {
		t.Fatal(err)
	}
	want := pricing.Tokens{Input: 11300 - 8704, Output: 290, CacheRead: 8704}
	if total.Requests != 7 || total.Tokens != want {
		t.Errorf("total %d requests %+v, want 7 %+v", total.Requests, total.Tokens, want)
	}
	if len(rows) != 1 || rows[0].Key != "gpt-5.5" || rows[0].CostKnown() {
		t.Errorf("rows %+v: want one, gpt-5.5, cost unknown", rows)
	}
}
