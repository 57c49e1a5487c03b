package claudecode

import (
	"bytes"
	"path/filepath"
	"strings"

	"github.com/perch-tui/perch/internal/pricing"
	"github.com/perch-tui/perch/internal/tally"
)

// A session's tokens and cost need its whole transcript, so listing never
// computes them: WatchSessions counts the transcripts in the background
// (internal/tally), newest first, and counts a grown one on from where it
// stopped; the counts are kept (KeepTotals) so that the next start has
// them, and a listing shows what is counted so far.

// KeepTotals keeps the sessions' token counts in the file at path (perch's
// state directory), read back now: a start after the first has them at
// once.
func (l *Local) KeepTotals(path string) { l.totals.Keep(path) }

// UsePrices prices the sessions at p (the embedded table with the config
// file's [prices]) instead of the embedded table alone.
func (l *Local) UsePrices(p pricing.Prices) { l.totals.UsePrices(p) }

// usage is the session's tokens and cost as counted so far, its
// subagents' transcripts included (their requests are the session's too);
// no cost when a model's price is unknown or a counted file has none.
func (l *Local) usage(path string) (tokens int64, cost float64, hasCost bool) {
	tokens, cost, hasCost, _ = l.totals.Usage(path)
	for _, sub := range subagentFiles(path) {
		n, c, ok, found := l.totals.Usage(sub)
		if !found {
			continue // not counted yet: the session's count so far
		}
		tokens, cost, hasCost = tokens+n, cost+c, hasCost && ok
	}
	return tokens, cost, hasCost
}

// subagentFiles are the transcripts of the subagents a session's
// transcript at path ran (<session>/subagents/*.jsonl beside it).
func subagentFiles(path string) []string {
	subs, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(path, ".jsonl"), "subagents", "*.jsonl"))
	return subs
}

// withSubagents is paths, each followed by its subagents' transcripts:
// what the counter counts for those sessions.
func withSubagents(paths ...string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		out = append(out, p)
		out = append(out, subagentFiles(p)...)
	}
	return out
}

// countLine counts one transcript line's request (billing), by its
// reply's model. Most lines hold no usage: they are passed over unread.
func countLine(e *tally.Entry, line []byte) {
	if !bytes.Contains(line, []byte(`"assistant"`)) || !bytes.Contains(line, []byte(`"usage"`)) {
		return
	}
	if r := billing(line).Request; r != nil {
		e.Request(r.Key, r.Model, r.Tokens)
	}
}
