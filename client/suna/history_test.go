package suna

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/events"
	fakesuna "github.com/perch-tui/perch/fakedaemon/suna"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/transcript"
)

// importText imports the file at p and renders what it emits.
func importText(t *testing.T, p string) (string, error) {
	t.Helper()
	s, err := ingest.Sniff(p)
	if err != nil {
		t.Fatal(err)
	}
	tl := events.NewTimeline()
	err = importFile(context.Background(), s, ingest.Options{}, func(ev events.Event) { tl.Apply(ev) })
	return render(t, tl), err
}

func render(t *testing.T, tl *events.Timeline) string {
	t.Helper()
	var b bytes.Buffer
	if err := transcript.WriteJSONL(&b, tl); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// keepAll is how a history file was read before it was read in two
// passes: every row kept, then sorted and decoded.
func keepAll(t *testing.T, rows []json.RawMessage, unit string, damaged error) string {
	t.Helper()
	var h history
	for i, r := range rows {
		h.add(fmt.Sprintf("%s %d", unit, i+1), r)
	}
	tl := events.NewTimeline()
	h.decode(context.Background(), NewDecoder(), func(evs []events.Event) {
		for _, ev := range evs {
			tl.Apply(ev)
		}
	})
	if damaged != nil {
		tl.Apply(events.Event{Kind: events.KindNotice, Level: events.LevelWarning, NoticeKind: events.NoticeError,
			Text: fmt.Sprintf("The document is damaged after message %d, the rest is left out: %v", len(rows), damaged)})
	}
	return render(t, tl)
}

// inFileOrder decodes rows as they come, as JSON lines that look like a
// stream are read.
func inFileOrder(t *testing.T, rows []json.RawMessage) string {
	t.Helper()
	d := NewDecoder()
	tl := events.NewTimeline()
	apply := func(evs []events.Event) {
		for _, ev := range evs {
			tl.Apply(ev)
		}
	}
	for i, r := range rows {
		apply(d.DecodeAt(fmt.Sprintf("line %d", i+1), r))
	}
	apply(d.Flush())
	return render(t, tl)
}

// TestHistoryTwoPasses: reading a history in two passes (streaming rows
// that are in order, keeping the others) emits what keeping every row
// emitted, whatever the order of the rows, as a document, as JSON lines,
// and cut short.
func TestHistoryTwoPasses(t *testing.T) {
	t.Parallel()
	paths, _ := filepath.Glob("testdata/history_*.json")
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	for _, p := range paths {
		doc := historyDoc(t, p)
		for i, m := range doc { // one line each
			var c bytes.Buffer
			if err := json.Compact(&c, m); err != nil {
				t.Fatal(err)
			}
			doc[i] = c.Bytes()
		}
		orders := map[string][]json.RawMessage{"as is": doc}
		rev := make([]json.RawMessage, len(doc))
		for i, m := range doc {
			rev[len(rev)-1-i] = m
		}
		orders["reversed"] = rev
		for k := 0; k < 3; k++ {
			sh := append([]json.RawMessage(nil), doc...)
			r.Shuffle(len(sh), func(i, j int) { sh[i], sh[j] = sh[j], sh[i] })
			orders[fmt.Sprintf("shuffled %d", k)] = sh
		}
		var h history // the rows in the order the importer shows them
		for i, m := range doc {
			h.add(fmt.Sprint(i), m)
		}
		h.order()
		sorted := make([]json.RawMessage, len(h.rows))
		for i, row := range h.rows {
			sorted[i] = row.raw
		}
		orders["sorted"] = sorted
		for name, rows := range orders {
			// A document.
			var b strings.Builder
			b.WriteString(`{"messages": [`)
			for i, m := range rows {
				if i > 0 {
					b.WriteString(", ")
				}
				b.Write(m)
			}
			b.WriteString("]}")
			f := filepath.Join(dir, "doc.json")
			if err := os.WriteFile(f, []byte(b.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := importText(t, f)
			if want := keepAll(t, rows, "message", nil); err != nil || got != want {
				t.Errorf("%s, %s (document): %v\n got %s\nwant %s", p, name, err, got, want)
			}
			// Cut inside the last row.
			cut := b.String()[:strings.LastIndex(b.String(), ", ")+12]
			if err := os.WriteFile(f, []byte(cut), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err = importText(t, f)
			_, damage := ingest.EachElement(f, "messages", func(int, json.RawMessage) error { return nil })
			if want := keepAll(t, rows[:len(rows)-1], "message", damage); err != nil || damage == nil || got != want {
				t.Errorf("%s, %s (cut): %v\n got %s\nwant %s", p, name, err, got, want)
			}
			// JSON lines.
			b.Reset()
			for _, m := range rows {
				b.Write(m)
				b.WriteString("\n")
			}
			if err := os.WriteFile(f, []byte(b.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err = importText(t, f)
			want := keepAll(t, rows, "line", nil)
			if smp, _ := ingest.Sniff(f); streamLike(smp) {
				want = inFileOrder(t, rows) // read as a stream's frames, not sorted
			}
			if err != nil || got != want {
				t.Errorf("%s, %s (lines): %v\n got %s\nwant %s", p, name, err, got, want)
			}
		}
	}
}

// oldDecodeRows is the follower's read of a history answer as it was
// before decodeRows read each row once: rowHead for the seam, then
// readHistory's two passes (the first for the rows' times), the decoder's
// fast path tried on every row.
func oldDecodeRows(ctx context.Context, f *follower, messages []json.RawMessage, cur *wireRun, reset bool) ([]events.Event, error) {
	var since time.Time
	if cur.running() {
		since, _ = parseTime(cur.StartedAt)
	}
	if reset || f.d == nil {
		f.d, f.seen = NewDecoder(), map[string]bool{}
	}
	f.d.Deltas = false
	rows := make([]json.RawMessage, 0, len(messages))
	for _, raw := range messages {
		h := rowHead(raw)
		if h.MessageID != "" && f.seen[h.MessageID] {
			continue
		}
		if !since.IsZero() && h.Type != "user" {
			if at, ok := parseTime(h.CreatedAt); ok && !at.Before(since) {
				continue
			}
		}
		if h.MessageID != "" {
			f.seen[h.MessageID] = true
		}
		rows = append(rows, raw)
	}
	var evs []events.Event
	send := func(batch []events.Event) { evs = append(evs, batch...) }
	each := func(fn func(string, []byte) error) error {
		for i, raw := range rows {
			if err := fn("message "+strconv.Itoa(i+1), raw); err != nil {
				return err
			}
		}
		return nil
	}
	if _, err := readHistory(ctx, each, true, false, f.d, send); err != nil {
		return nil, err
	}
	return evs, nil
}

// benchHistory is the history of a fake bench run of n frames, as the
// follower reads it.
func benchHistory(t *testing.T, n int) []json.RawMessage {
	t.Helper()
	s := fakesuna.New(fakesuna.Options{FrameDelay: -1})
	defer s.Close()
	tid, rid, err := s.Start("", fmt.Sprint("bench ", n))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for s.RunStatus(rid) == "running" {
		if time.Now().After(deadline) {
			t.Fatal("the bench run did not end")
		}
		time.Sleep(5 * time.Millisecond)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/v1/threads/" + tid + "/messages?optimized=false&order=asc")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	rows, err := historyRows(body)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestDecodeRowsAsBefore: the follower's read of a history answer emits
// the events the former read emitted, for every history test file and a
// bench run's history, each in several orders: a first load, a load while
// a run goes on (its rows but the user's left to the stream), and a
// second load that skips the rows already sent.
func TestDecodeRowsAsBefore(t *testing.T) {
	t.Parallel()
	paths, _ := filepath.Glob("testdata/history_*.json")
	if len(paths) < 3 {
		t.Fatalf("history test files: %v", paths)
	}
	docs := map[string][]json.RawMessage{}
	for _, p := range paths {
		doc := historyDoc(t, p)
		docs[p] = doc
	}
	if docs["bench 3000"] = benchHistory(t, 3000); len(docs["bench 3000"]) < 100 {
		t.Fatalf("the bench history has %d rows", len(docs["bench 3000"]))
	}
	r := rand.New(rand.NewPCG(3, 4))
	ctx := context.Background()
	for p, rows := range docs {
		rev := make([]json.RawMessage, len(rows))
		for i, m := range rows {
			rev[len(rev)-1-i] = m
		}
		sh := append([]json.RawMessage(nil), rows...)
		r.Shuffle(len(sh), func(i, j int) { sh[i], sh[j] = sh[j], sh[i] })
		// A run that started at the time of the middle row.
		var mid wireRun
		if h := rowHead(rows[len(rows)/2]); h.CreatedAt != "" {
			mid = wireRun{ID: "r", Status: "running", StartedAt: h.CreatedAt}
		}
		for name, rows := range map[string][]json.RawMessage{"as is": rows, "reversed": rev, "shuffled": sh} {
			for _, c := range []struct {
				name string
				cur  *wireRun
			}{{"idle", nil}, {"running", &mid}} {
				fNew, fOld := &follower{}, &follower{}
				got, _, err1 := fNew.decodeRows(ctx, rows, c.cur, true)
				want, err2 := oldDecodeRows(ctx, fOld, rows, c.cur, true)
				if err1 != nil || err2 != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("%s, %s, %s: %v %v\n got %d events %+v\nwant %d events %+v", p, name, c.name, err1, err2, len(got), got, len(want), want)
				}
				// Again, not reset: only rows not seen yet.
				got, _, err1 = fNew.decodeRows(ctx, rows, nil, false)
				want, err2 = oldDecodeRows(ctx, fOld, rows, nil, false)
				if err1 != nil || err2 != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("%s, %s, %s, again: %v %v\n got %+v\nwant %+v", p, name, c.name, err1, err2, got, want)
				}
			}
		}
	}
}

// historyDoc reads a history test file's rows, as perch import reads one
// (a byte-order mark dropped, Python's NaN repaired).
func historyDoc(t *testing.T, path string) []json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Messages []json.RawMessage }
	if err := json.Unmarshal(ingest.Repair(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Messages
}

// TestOrderCheck: the first pass's streaming check agrees with sorting
// the rows kept whole, for rows with times present, missing and equal,
// sequences present and missing, ascending, descending and shuffled.
func TestOrderCheck(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var inOrder, out int
	for round := range 20000 {
		n := r.IntN(8)
		if round%10 == 0 {
			n = r.IntN(60)
		}
		rows := make([]histRow, n)
		times, seqs := 1+r.IntN(4), 1+r.IntN(4)
		for i := range rows {
			if r.IntN(4) > 0 {
				rows[i].at, rows[i].hasAt = base.Add(time.Duration(r.IntN(times))*time.Second), true
			}
			if r.IntN(3) > 0 {
				rows[i].seq, rows[i].hasSeq = int64(r.IntN(seqs)), true
			}
		}
		switch round % 4 {
		case 0, 1:
			var h history
			h.rows = slices.Clone(rows)
			h.order() // ascending as the importer sorts them
			copy(rows, h.rows)
			for i := range rows { // the stamps as read, not as filled
				if !rows[i].hasAt {
					rows[i].at = time.Time{}
				}
				if !rows[i].hasSeq {
					rows[i].seq = 0
				}
			}
			if round%4 == 1 {
				slices.Reverse(rows)
			}
		case 2:
			r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		}
		var o orderCheck
		h := history{rows: make([]histRow, n)}
		for i, row := range rows {
			o.add(row)
			row.idx = i
			h.rows[i] = row
		}
		want := h.inOrder()
		if got := o.inOrder(); got != want {
			t.Fatalf("round %d: check says in order %v, sorting %v: %+v", round, got, want, rows)
		}
		if want {
			inOrder++
		} else {
			out++
		}
	}
	if inOrder < 2000 || out < 2000 {
		t.Fatalf("%d row sets in order, %d not: the cases are not mixed", inOrder, out)
	}
}
