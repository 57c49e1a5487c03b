package index

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/internal/pricing"
)

// The comparison with ccusage, the cost tool most Claude Code users run:
// on the same session files, perch's token totals per session and per day
// are ccusage's wherever ccusage is right, and where it is not, the truth
// (what the provider was sent and answered, as the generated files say
// it) is perch's. testdata/ccusage.sh writes the corpus (-corpus) and
// records ccusage's reports in testdata/ccusage/.

var corpusDir = flag.String("corpus", "", "write the ccusage comparison's generated session files under this Claude config dir, then stop")

// captures are the real Claude Code session files recorded against a fake
// provider (client/claudecode's testdata), in ccusage's layout.
const captures = "../client/claudecode/testdata/real"

// generated are session files that hold the counting pitfalls, in the
// project directory -home-ana-shop.
func generated() map[string]string {
	day1 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	day2 := day1.Add(24 * time.Hour)
	files := map[string]string{}

	// Streamed copies: Claude Code writes a line per content block, the
	// early ones with message_start's placeholder output count (1 here).
	c := newCC("streamed", day1)
	c.user("explain the flaky test")
	u := usage{in: 120, out: 1, read: 30000, w5: 900}
	c.reply("msg_s1", "req_s1", sonnet, "thinking about it", u, "", nil)
	c.reply("msg_s1", "req_s1", sonnet, "the test races", u, "", nil)
	u.out = 640
	c.reply("msg_s1", "req_s1", sonnet, "fix: wait on the condition", u, "end_turn", nil)
	files["streamed.jsonl"] = c.text()

	// A session and its subagent (the subagent's lines carry the parent's
	// session id; its file is under the parent's directory).
	c = newCC("parent", day1.Add(time.Hour))
	c.user("count the files with a subagent")
	c.reply("msg_p1", "req_p1", sonnet, "asking a subagent", usage{in: 300, out: 40, w1: 5000}, "tool_use", nil)
	c.reply("msg_p2", "req_p2", sonnet, "there are 42", usage{in: 20, out: 12, read: 5000}, "end_turn", nil)
	files["parent.jsonl"] = c.text()
	sub := newCC("parent", day1.Add(time.Hour+time.Second))
	sub.user("count the files")
	sub.reply("msg_a1", "req_a1", "claude-haiku-4-5-20251001", "42", usage{in: 800, out: 30}, "end_turn", map[string]any{"isSidechain": true, "agentId": "a1"})
	files["parent/subagents/agent-a1.jsonl"] = sub.text()

	// A resumed session: the new file repeats the earlier run's lines.
	c = newCC("first", day1.Add(2*time.Hour))
	c.user("start the migration")
	c.reply("msg_r1", "req_r1", sonnet, "started", usage{in: 1000, out: 200, w5: 2000}, "end_turn", nil)
	files["first.jsonl"] = c.text()
	c.session = "resumed"
	c.t = day2
	c.user("go on")
	c.reply("msg_r2", "req_r2", sonnet, "done", usage{in: 50, out: 300, read: 3000}, "end_turn", nil)
	files["resumed.jsonl"] = c.text()

	// Long context, and a reply cut off before it ended.
	c = newCC("long", day2.Add(time.Hour))
	c.user("read the whole repository")
	c.reply("msg_l1", "req_l1", sonnet, "read", usage{in: 2000, read: 240000, out: 900}, "end_turn", nil)
	c.user("and again")
	c.reply("msg_l2", "req_l2", sonnet, "partial answer", usage{in: 10, read: 242000, out: 1}, "", nil)
	files["long.jsonl"] = c.text()
	return files
}

func writeCorpus(t testing.TB, config string) {
	proj := filepath.Join(config, "projects", "-home-ana-shop")
	for name, text := range generated() {
		writeFile(t, filepath.Join(proj, name), text)
	}
	// A real session with its subagent's file (testdata/capture.sh).
	err := filepath.Walk(filepath.Join("testdata", "claude"), func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join("testdata", "claude"), p)
		writeFile(t, filepath.Join(config, rel), string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	caps, _ := filepath.Glob(filepath.Join(captures, "*.session.jsonl"))
	for _, p := range caps {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(config, "projects", "-tmp-perch-claude-capture-work", filepath.Base(p)), string(b))
	}
}

// ccusageTokens are a row of ccusage's JSON reports.
type ccusageTokens struct {
	Period        string `json:"period"`
	Date          string `json:"date"`
	Input         int64  `json:"inputTokens"`
	Output        int64  `json:"outputTokens"`
	CacheCreation int64  `json:"cacheCreationTokens"`
	CacheRead     int64  `json:"cacheReadTokens"`
}

func readCCUsage(t *testing.T, name, key string) map[string]ccusageTokens {
	b, err := os.ReadFile(filepath.Join("testdata", "ccusage", name))
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]json.RawMessage
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	var list []ccusageTokens
	if err := json.Unmarshal(rep[key], &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]ccusageTokens{}
	for _, r := range list {
		k := r.Period
		if k == "" {
			k = r.Date
		}
		out[k] = r
	}
	return out
}

func TestAgainstCCUsage(t *testing.T) {
	if *corpusDir != "" {
		writeCorpus(t, *corpusDir)
		return
	}
	config := t.TempDir()
	writeCorpus(t, config)
	ix := openTemp(t)
	for _, s := range LocalFiles(map[string]string{"claude-code": config}) {
		if _, err := ix.IndexFile(context.Background(), s, nil); err != nil {
			t.Fatal(err)
		}
	}

	// ccusage's sessions are its session files, their subagents' included,
	// named by the file: perch's by session, named so.
	sessions, _, err := ix.Usage(context.Background(), UsageQuery{By: "session", Prices: pricing.DefaultPrices()})
	if err != nil {
		t.Fatal(err)
	}
	perSession := map[string]ccusageTokens{}
	perch := map[string]float64{}
	for _, r := range sessions {
		var path string
		if err := ix.db.QueryRow(`SELECT path FROM sessions WHERE sid = ? AND parent = ''`, r.Key).Scan(&path); err != nil {
			t.Fatalf("session %s: %v", r.Key, err)
		}
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		perSession[name] = ccusageTokens{Input: r.Input, Output: r.Output, CacheCreation: r.Cache5m + r.Cache1h, CacheRead: r.CacheRead}
		perch[name] = r.Cost
	}
	days, _, err := ix.Usage(context.Background(), UsageQuery{By: "day", Prices: pricing.DefaultPrices(), Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	perDay := map[string]ccusageTokens{}
	for _, d := range days {
		perDay[d.Key] = ccusageTokens{Input: d.Input, Output: d.Output, CacheCreation: d.Cache5m + d.Cache1h, CacheRead: d.CacheRead}
	}

	// Where ccusage is wrong, and the truth.
	type diff struct {
		why          string
		truth        ccusageTokens // what the provider was sent and answered
		ccusageWrong ccusageTokens // what ccusage reports
	}
	sessionDiffs := map[string]diff{}
	dayDiffs := map[string]diff{
		// The captures of Claude Code 2.1.332 name a reply's request
		// requestRef, not requestId: ccusage's daily report then counts
		// every line of a reply (one per content block) as a request of
		// its own. Each reply's usage, once (tools: msg_fake0001..6 =
		// 1200+1500+1800+2100+2400+2700 input; subagent: 1200+1500;
		// apierror: 1200), is what its session report says and the truth.
		"2026-11-28": {
			why:          "ccusage's daily report counts each streamed copy of a reply that has a requestRef and no requestId",
			truth:        ccusageTokens{Input: 11700 + 2700 + 1200, Output: 463 + 92 + 34, CacheRead: 45000 + 9000},
			ccusageWrong: ccusageTokens{Input: 33300, Output: 1462, CacheRead: 108000},
		},
		// The same on the session recorded with its subagent: Claude Code's
		// own cost-state line counts 5400 input, 141 output and 18000 cache
		// read tokens for it (main session and subagent), as perch does.
		"2026-12-07": {
			why:          "ccusage's daily report counts both copies of msg_fake0001 (requestRef, no requestId)",
			truth:        ccusageTokens{Input: 5400, Output: 141, CacheRead: 18000},
			ccusageWrong: ccusageTokens{Input: 6600, Output: 218, CacheRead: 18000},
		},
	}
	compare := func(what string, theirs, ours map[string]ccusageTokens, diffs map[string]diff) {
		for k, c := range theirs {
			p, ok := ours[k]
			if !ok {
				t.Errorf("%s %s: ccusage has it, perch not", what, k)
				continue
			}
			c.Period, c.Date = "", ""
			if d, ok := diffs[k]; ok {
				if c != d.ccusageWrong {
					t.Errorf("%s %s: ccusage now reports %+v, not the %+v recorded (%s): check the truth again", what, k, c, d.ccusageWrong, d.why)
				}
				if p != d.truth {
					t.Errorf("%s %s: perch %+v, the truth %+v (%s)", what, k, p, d.truth, d.why)
				}
				continue
			}
			if p != c {
				t.Errorf("%s %s: perch %+v, ccusage %+v", what, k, p, c)
			}
		}
		if len(ours) != len(theirs) {
			t.Errorf("%s: perch has %d, ccusage %d", what, len(ours), len(theirs))
		}
	}
	compare("session", readCCUsage(t, "session.json", "session"), perSession, sessionDiffs)
	compare("day", readCCUsage(t, "daily.json", "daily"), perDay, dayDiffs)

	// Claude Code's own figure for the recorded session (its cost-state
	// line: $0.023715) is perch's source cost, and perch's own price of
	// the same tokens is the same.
	const recorded = "3455582f-7550-42e0-ae0c-4dc358e72573"
	found := false
	for _, r := range sessions {
		if r.Key != recorded {
			continue
		}
		found = true
		if r.SourceCost == nil || math.Abs(*r.SourceCost-0.023715) > 1e-12 || math.Abs(r.Cost-0.023715) > 1e-12 {
			t.Errorf("the recorded session: source cost %v, perch's %v; Claude Code says 0.023715", r.SourceCost, r.Cost)
		}
	}
	if !found {
		t.Errorf("no session %s", recorded)
	}

	// The costs, where both price the models alike.
	costDiffs := map[string]struct {
		why          string
		truth, wrong float64
	}{
		// Anthropic bills a request whose input (cache reads and writes
		// included) is over 200k tokens at the long-context prices,
		// output too; ccusage prices only each count's part above 200k
		// higher. msg_l1: 2000 in, 240000 cache read, 900 out;
		// msg_l2: 10 in, 242000 cache read, 1 out (cut off).
		"long": {
			why:   "long context: ccusage prices only the tokens past 200k of each kind higher, and never the output",
			truth: (2000*6+240000*0.60+900*22.50)/1e6 + (10*6+242000*0.60+1*22.50)/1e6,
			wrong: (2000*3+200000*0.30+40000*0.60+900*15)/1e6 + (10*3+200000*0.30+42000*0.60+1*15)/1e6,
		},
	}
	theirs := map[string]float64{}
	b, err := os.ReadFile(filepath.Join("testdata", "ccusage", "session.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Session []struct {
			Period    string  `json:"period"`
			TotalCost float64 `json:"totalCost"`
		} `json:"session"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Session {
		theirs[r.Period] = r.TotalCost
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for name, c := range theirs {
		if d, ok := costDiffs[name]; ok {
			if !near(c, d.wrong) {
				t.Errorf("cost %s: ccusage now says %v, not the %v recorded (%s)", name, c, d.wrong, d.why)
			}
			if !near(perch[name], d.truth) {
				t.Errorf("cost %s: perch %v, the truth %v (%s)", name, perch[name], d.truth, d.why)
			}
			continue
		}
		if !near(perch[name], c) {
			t.Errorf("cost %s: perch %v, ccusage %v", name, perch[name], c)
		}
	}
}

// TestUsageSums: the report read from the sums by quarter of an hour is
// the report read from every request, for every grouping, on the
// comparison's corpus (and after a session is forgotten).
func TestUsageSums(t *testing.T) {
	config := t.TempDir()
	writeCorpus(t, config)
	// A copy of a request read later says more of it (its final output):
	// the sums of the session that had it first change too.
	a := newCC("copy-a", t0)
	a.reply("msg_x", "req_x", sonnet, "partial", usage{in: 10, out: 1}, "", nil)
	writeFile(t, filepath.Join(config, "projects", "-srv-copies", "a.jsonl"), a.text())
	b := newCC("copy-b", t0.Add(time.Hour))
	b.reply("msg_x", "req_x", sonnet, "whole", usage{in: 10, out: 500}, "end_turn", nil)
	writeFile(t, filepath.Join(config, "projects", "-srv-copies", "b.jsonl"), b.text())
	ix := openTemp(t)
	ctx := context.Background()
	ix.IndexFiles(ctx, LocalFiles(map[string]string{"claude-code": config}), func(s Source, _ FileResult, err error) {
		if err != nil {
			t.Fatal(err)
		}
	}, nil)
	check := func(when string) {
		for _, by := range []string{"day", "week", "month", "session", "project", "model"} {
			q := UsageQuery{By: by, Prices: pricing.DefaultPrices(), Location: time.FixedZone("Nepal", 5*3600+45*60)}
			fast, ft, err := ix.usage(ctx, q, true)
			if err != nil {
				t.Fatal(err)
			}
			slow, st, err := ix.usage(ctx, q, false)
			if err != nil {
				t.Fatal(err)
			}
			if !sameRows(append(fast, ft), append(slow, st)) {
				t.Errorf("%s, by %s: from the sums\n%+v\nfrom the requests\n%+v", when, by, append(fast, ft), append(slow, st))
			}
		}
	}
	check("indexed")
	if _, err := ix.Forget(ctx, "parent"); err != nil {
		t.Fatal(err)
	}
	check("after a forget")
}

func sameRows(a, b []UsageRow) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if math.Abs(x.Cost-y.Cost) > 1e-9 {
			return false
		}
		x.Cost, y.Cost = 0, 0
		if (x.SourceCost == nil) != (y.SourceCost == nil) || x.SourceCost != nil && math.Abs(*x.SourceCost-*y.SourceCost) > 1e-9 {
			return false
		}
		x.SourceCost, y.SourceCost = nil, nil
		if fmt.Sprint(x) != fmt.Sprint(y) {
			return false
		}
	}
	return true
}
