package index

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/perch-tui/perch/internal/pricing"
)

// The test binary is also the child process of the tests that need
// another process: PERCH_INDEX_CHILD names what it does.
func TestMain(m *testing.M) {
	switch os.Getenv("PERCH_INDEX_CHILD") {
	case "":
		os.Exit(m.Run())
	case "index":
		os.Exit(child(os.Getenv("PERCH_INDEX_DB"), strings.Split(os.Getenv("PERCH_INDEX_FILES"), ",")))
	}
}

// child indexes files into db, saying "reading" once it is past its
// first chunk of a file, then searches.
func child(db string, files []string) int {
	ctx := context.Background()
	ix, err := Open(ctx, db)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer ix.Close()
	said := false
	for _, f := range files {
		_, err := ix.IndexFile(ctx, Source{Path: f}, func(n int64) {
			if !said && n >= progressStep {
				fmt.Println("reading")
				said = true
			}
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if _, err := ix.Search(ctx, Query{Text: "hello"}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

func session(id string, words ...string) string {
	c := newCC(id, t0)
	for i, w := range words {
		c.user("question " + w)
		c.reply(fmt.Sprintf("msg_%s_%d", id, i), fmt.Sprintf("req_%s_%d", id, i), sonnet, "answer about "+w, usage{in: 10, out: 5}, "end_turn", nil)
	}
	return c.text()
}

func TestIncrementalRead(t *testing.T) {
	ix := openTemp(t)
	path := filepath.Join(t.TempDir(), "s1.jsonl")
	first := session("s1", "apple", "banana")
	writeFile(t, path, first)
	if r := mustIndex(t, ix, path); r.Read != int64(len(first)) || r.Messages != 4 {
		t.Fatalf("first read: %+v, want %d bytes and 4 messages", r, len(first))
	}
	if r := mustIndex(t, ix, path); !r.Unchanged {
		t.Fatalf("an unchanged file was read again: %+v", r)
	}

	// Lines added: only they are read.
	c := newCC("s1", t0.Add(time.Hour))
	c.user("question zebra")
	c.reply("msg_new", "req_new", sonnet, "answer about zebra", usage{in: 10, out: 5}, "end_turn", nil)
	more := c.text()
	appendFile(t, path, more)
	if r := mustIndex(t, ix, path); r.Read != int64(len(more)) || r.Messages != 2 || r.Reset {
		t.Fatalf("after an append: %+v, want %d new bytes and 2 messages", r, len(more))
	}
	if n := len(search(t, ix, Query{Text: "zebra"})); n != 2 {
		t.Errorf("zebra: %d hits, want 2", n)
	}
	if n := len(search(t, ix, Query{Text: "apple"})); n != 2 {
		t.Errorf("apple: %d hits after the append, want 2 (not read twice)", n)
	}

	// A line still being written waits for its end.
	c = newCC("s1", t0.Add(2*time.Hour))
	c.user("question quokka")
	line := c.text()
	appendFile(t, path, line[:len(line)/2])
	if r := mustIndex(t, ix, path); !r.Unchanged || r.Read != 0 {
		t.Fatalf("half a line was read: %+v", r)
	}
	appendFile(t, path, line[len(line)/2:])
	if r := mustIndex(t, ix, path); r.Read != int64(len(line)) {
		t.Fatalf("the finished line: %+v, want %d bytes", r, len(line))
	}
	if n := len(search(t, ix, Query{Text: "quokka"})); n != 1 {
		t.Errorf("quokka: %d hits, want 1", n)
	}
	// The copy is the file, however many reads it took.
	var copy bytes.Buffer
	abs, _ := filepath.Abs(path)
	if err := ix.WriteCopy(context.Background(), abs, &copy); err != nil {
		t.Fatal(err)
	}
	if want, _ := os.ReadFile(path); copy.String() != string(want) {
		t.Errorf("the copy after three reads: %d bytes, the file %d", copy.Len(), len(want))
	}
	_, total, err := ix.Usage(context.Background(), UsageQuery{By: "day", Prices: pricing.DefaultPrices()})
	if err != nil || total.Requests != 3 {
		t.Errorf("usage after the appends: %d requests (%v), want 3", total.Requests, err)
	}

	// Another file at the same path: read again from its start.
	writeFile(t, path, session("s1", "cherry"))
	if r := mustIndex(t, ix, path); !r.Reset {
		t.Fatalf("a replaced file was not read again: %+v", r)
	}
	if n := len(search(t, ix, Query{Text: "apple"})); n != 0 {
		t.Errorf("apple: %d hits after the file was replaced, want 0", n)
	}
	if n := len(search(t, ix, Query{Text: "cherry"})); n != 2 {
		t.Errorf("cherry: %d hits, want 2", n)
	}
}

func TestDeletedSource(t *testing.T) {
	ctx := context.Background()
	ix := openTemp(t)
	path := filepath.Join(t.TempDir(), "gone.jsonl")
	text := session("gone", "walrus")
	writeFile(t, path, text)
	mustIndex(t, ix, path)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if n, err := ix.CheckSources(ctx); err != nil || n != 1 {
		t.Fatalf("CheckSources = %d, %v; want 1 gone", n, err)
	}
	hits := search(t, ix, Query{Text: "walrus"})
	if len(hits) != 2 || !hits[0].Deleted {
		t.Fatalf("hits = %+v, want 2 marked source deleted", hits)
	}
	s, err := ix.Find(ctx, "gon")
	if err != nil || !s.Deleted {
		t.Fatalf("Find = %+v, %v", s, err)
	}
	var copy bytes.Buffer
	if err := ix.WriteCopy(ctx, s.Path, &copy); err != nil {
		t.Fatal(err)
	}
	if copy.String() != text {
		t.Errorf("the kept copy differs from the file: %d bytes, want %d", copy.Len(), len(text))
	}
	// The file comes back: the mark goes.
	writeFile(t, path, text)
	mustIndex(t, ix, path)
	if hits := search(t, ix, Query{Text: "walrus"}); len(hits) != 2 || hits[0].Deleted {
		t.Errorf("after the file came back: %+v", hits)
	}
	if _, err := ix.Forget(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if hits := search(t, ix, Query{Text: "walrus"}); len(hits) != 0 {
		t.Errorf("a forgotten session is found: %+v", hits)
	}
}

func TestHostileSnippets(t *testing.T) {
	ix := openTemp(t)
	path := filepath.Join(t.TempDir(), "h.jsonl")
	c := newCC("h", t0)
	c.user("zebra \x1b]0;owned\x07 \x1b[31mred\x1b[0m \u202eevil\u202c \x00 \r\n second line zebra " + string([]byte{0xff, 0xfe}) + " \uE000fake\uE001")
	writeFile(t, path, c.text())
	mustIndex(t, ix, path)
	for _, q := range []string{"zebra", `zebra" OR "x`, "NEAR(zebra", "zeb*", `"second line"`, "red:zebra", "-zebra"} {
		hits, err := ix.Search(context.Background(), Query{Text: q})
		if err != nil {
			t.Errorf("%q: %v", q, err)
			continue
		}
		for _, h := range hits {
			s := h.SnippetText()
			if strings.ContainsAny(s, "\x1b\x07\x00\r\n\u202e\u202c") || !utf8.ValidString(s) {
				t.Errorf("%q: the snippet keeps control text: %q", q, s)
			}
		}
		if q == "zebra" && (len(hits) != 1 || !hasMatch(hits[0].Snippet, "zebra")) {
			t.Errorf("zebra: %+v, want one hit with zebra marked", hits)
		}
	}
	if _, err := ix.Search(context.Background(), Query{Text: `" * "`}); err == nil {
		t.Error("a query without words is accepted")
	}
}

func hasMatch(parts []Part, word string) bool {
	for _, p := range parts {
		if p.Match && strings.EqualFold(p.Text, word) {
			return true
		}
	}
	return false
}

func TestFilters(t *testing.T) {
	ix := openTemp(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.jsonl"), session("a", "otter"))
	c := newCC("b", t0.Add(48*time.Hour))
	c.cwd = "/srv/other"
	c.user("question otter")
	writeFile(t, filepath.Join(dir, "b.jsonl"), c.text())
	mustIndex(t, ix, filepath.Join(dir, "a.jsonl"))
	mustIndex(t, ix, filepath.Join(dir, "b.jsonl"))
	for _, tc := range []struct {
		q    Query
		want int
	}{
		{Query{Text: "otter"}, 3},
		{Query{Text: "otter", Role: "assistant"}, 1},
		{Query{Text: "otter", Project: "/srv/other"}, 1},
		{Query{Text: "otter", Project: "/home/ana"}, 2},
		{Query{Text: "otter", Since: t0.Add(24 * time.Hour)}, 1},
		{Query{Text: "otter", Until: t0.Add(24 * time.Hour)}, 2},
		{Query{Text: "otter", System: "codex"}, 0},
		{Query{Text: "otter", Limit: 1}, 1},
	} {
		hits := search(t, ix, tc.q)
		if len(hits) != tc.want {
			t.Errorf("%+v: %d hits, want %d", tc.q, len(hits), tc.want)
		}
		for i := 1; i < len(hits); i++ {
			if hits[i].At.After(hits[i-1].At) {
				t.Errorf("%+v: not newest first", tc.q)
			}
		}
	}
}

func runChild(t *testing.T, db string, files ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PERCH_INDEX_CHILD=index", "PERCH_INDEX_DB="+db, "PERCH_INDEX_FILES="+strings.Join(files, ","))
	cmd.Stderr = os.Stderr
	return cmd
}

func TestTwoProcesses(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state", FileName)
	var a, b []string
	for i := range 6 {
		p := filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i))
		writeFile(t, p, session(fmt.Sprintf("s%d", i), "hello", fmt.Sprintf("word%d", i)))
		if i%2 == 0 {
			a = append(a, p)
		} else {
			b = append(b, p)
		}
	}
	ca, cb := runChild(t, db, a...), runChild(t, db, b...)
	if err := ca.Start(); err != nil {
		t.Fatal(err)
	}
	if err := cb.Start(); err != nil {
		t.Fatal(err)
	}
	if err := ca.Wait(); err != nil {
		t.Errorf("first process: %v", err)
	}
	if err := cb.Wait(); err != nil {
		t.Errorf("second process: %v", err)
	}
	ix, err := Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	checkIntegrity(t, ix)
	if n := len(search(t, ix, Query{Text: "hello", Limit: 100})); n != 12 {
		t.Errorf("hello: %d hits, want 12 (every file's two)", n)
	}
	fi, err := os.Stat(db)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the index's mode is %v (%v), want 0600", fi.Mode().Perm(), err)
	}
}

func checkIntegrity(t *testing.T, ix *Index) {
	t.Helper()
	var ok string
	if err := ix.db.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity_check = %q, %v", ok, err)
	}
	if _, err := ix.db.Exec(`INSERT INTO texts(texts, rank) VALUES('integrity-check', 1)`); err != nil {
		t.Fatalf("the search table: %v", err)
	}
}

func TestKilledMidIndex(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state", FileName)
	small := filepath.Join(dir, "small.jsonl")
	writeFile(t, small, session("small", "hello", "heron"))
	big := filepath.Join(dir, "big.jsonl")
	c := newCC("big", t0)
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 400)
	for i := 0; len(c.lines)*len(filler) < 3*progressStep; i++ {
		c.user(fmt.Sprintf("hello %d %s", i, filler))
	}
	writeFile(t, big, c.text())

	cmd := runChild(t, db, small, big)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "reading\n" {
		t.Fatalf("the child said %q, %v", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	ix, err := Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	checkIntegrity(t, ix)
	if hits := search(t, ix, Query{Text: "heron"}); len(hits) != 2 {
		t.Errorf("heron (the file indexed before the kill): %d hits, want 2", len(hits))
	}
	if hits := search(t, ix, Query{Text: "lorem"}); len(hits) != 0 {
		t.Errorf("lorem: %d hits of the file being read when killed, want 0 (nothing half-written)", len(hits))
	}
	if r := mustIndex(t, ix, big); r.Read != int64(len(c.text())) {
		t.Errorf("the file read again after the kill: %+v", r)
	}
	if hits := search(t, ix, Query{Text: "lorem", Limit: 5}); len(hits) != 5 {
		t.Errorf("lorem after indexing again: %d hits", len(hits))
	}
}

func TestIndexFilesTwice(t *testing.T) {
	ix := openTemp(t)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, path, session("s", "puffin"))
	var errs []error
	ix.IndexFiles(context.Background(), []Source{{Path: path}, {Path: path}}, func(_ Source, _ FileResult, err error) {
		errs = append(errs, err)
	}, nil)
	if len(errs) != 1 || errs[0] != nil {
		t.Fatalf("results: %v, want one without error", errs)
	}
	if n := len(search(t, ix, Query{Text: "puffin"})); n != 2 {
		t.Errorf("puffin: %d hits, want 2", n)
	}
}

// TestTurnGivenAgain: a turn the decoder gives again after many others
// (here: a reply whose lines come after 600 other messages) is one
// message with its last text, and the search table stays whole.
func TestTurnGivenAgain(t *testing.T) {
	ix := openTemp(t)
	c := newCC("again", t0)
	c.reply("msg_long", "req_long", sonnet, "first block walrus", usage{in: 1, out: 1}, "", nil)
	for i := range 600 {
		c.user(fmt.Sprintf("filler %d", i))
	}
	c.reply("msg_long", "req_long", sonnet, "second block narwhal", usage{in: 1, out: 9}, "end_turn", nil)
	path := filepath.Join(t.TempDir(), "again.jsonl")
	writeFile(t, path, c.text())
	var errs []error
	ix.IndexFiles(context.Background(), []Source{{Path: path}}, func(_ Source, _ FileResult, err error) { errs = append(errs, err) }, nil)
	if len(errs) != 1 || errs[0] != nil {
		t.Fatal(errs)
	}
	checkIntegrity(t, ix)
	if n := len(search(t, ix, Query{Text: "filler", Limit: 1000})); n != 600 {
		t.Errorf("filler: %d hits, want 600", n)
	}
	if n := len(search(t, ix, Query{Text: "narwhal"})); n != 1 {
		t.Errorf("narwhal: %d hits, want 1", n)
	}
}

func TestFindAndForget(t *testing.T) {
	ctx := context.Background()
	ix := openTemp(t)
	dir := t.TempDir()
	for _, p := range []string{"abc1.jsonl", "abc2.jsonl", "abc1/subagents/agent-x.jsonl"} {
		sid := strings.TrimSuffix(filepath.Base(p), ".jsonl")
		if strings.Contains(p, "subagents") {
			sid = "abc1"
		}
		writeFile(t, filepath.Join(dir, p), session(sid, "gannet"))
		mustIndex(t, ix, filepath.Join(dir, p))
	}
	if _, err := ix.Find(ctx, "abc"); err == nil || !strings.Contains(err.Error(), "several") {
		t.Errorf("an ambiguous prefix: %v", err)
	}
	if s, err := ix.Find(ctx, "abc2"); err != nil || s.SID != "abc2" {
		t.Errorf("Find(abc2) = %+v, %v", s, err)
	}
	if _, err := ix.Forget(ctx, "abc1"); err != nil {
		t.Fatal(err)
	}
	// The session and its subagent are gone; the other stays.
	hits := search(t, ix, Query{Text: "gannet"})
	if len(hits) != 2 || hits[0].Session != "abc2" {
		t.Errorf("after forgetting abc1: %+v", hits)
	}
	checkIntegrity(t, ix)
}

// TestDeletedSourceKeepsEveryMessage: a session of many messages (their
// texts many times what one chunk holds), read in two reads — the first
// as perch index reads files, the second as a file that grew — then
// deleted: every message is still found, marked "source deleted", with
// its own text around the match; the copy the index keeps is the file
// byte for byte, and reading that copy gives the same messages.
func TestDeletedSourceKeepsEveryMessage(t *testing.T) {
	ctx := context.Background()
	ix := openTemp(t)
	path := filepath.Join(t.TempDir(), "long.jsonl")
	c := newCC("long", t0)
	words := []string{"heron", "lapwing", "dunlin", "curlew", "godwit", "plover", "sanderling", "turnstone"}
	say := func(i int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "note%04d", i)
		for j := range 80 {
			b.WriteString(" " + words[(i*j+j*j/3+i/5)%len(words)])
		}
		return b.String()
	}
	const first, all = 400, 600
	for i := range first {
		c.user(say(i))
	}
	writeFile(t, path, c.text())
	var errs []error
	ix.IndexFiles(ctx, []Source{{Path: path}}, func(_ Source, _ FileResult, err error) { errs = append(errs, err) }, nil)
	if len(errs) != 1 || errs[0] != nil {
		t.Fatal(errs)
	}
	c.lines = nil
	for i := first; i < all; i++ {
		c.user(say(i))
	}
	appendFile(t, path, c.text())
	if r := mustIndex(t, ix, path); r.Messages != all-first {
		t.Fatalf("the append: %+v, want %d messages", r, all-first)
	}
	if (all*len(say(0)))/textBlock < 4 {
		t.Fatalf("the texts fill %d chunks' worth: the test needs several", (all*len(say(0)))/textBlock)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if n, err := ix.CheckSources(ctx); err != nil || n != 1 {
		t.Fatalf("CheckSources = %d, %v; want 1 gone", n, err)
	}
	checkIntegrity(t, ix)
	for i := range all {
		word := fmt.Sprintf("note%04d", i)
		hits := search(t, ix, Query{Text: word})
		if len(hits) != 1 || !hits[0].Deleted {
			t.Fatalf("%s: %+v, want one hit marked source deleted", word, hits)
		}
		if got := strings.TrimSuffix(hits[0].SnippetText(), "…"); !strings.HasPrefix(say(i), got) {
			t.Fatalf("%s: the snippet %q is not of its text %q", word, got, say(i))
		}
	}
	s, err := ix.Find(ctx, "long")
	if err != nil {
		t.Fatal(err)
	}
	var copy bytes.Buffer
	if err := ix.WriteCopy(ctx, s.Path, &copy); err != nil {
		t.Fatal(err)
	}
	if copy.String() != string(want) {
		t.Fatalf("the kept copy differs from the file: %d bytes, want %d", copy.Len(), len(want))
	}
	// The copy read as a file of its own gives the same messages.
	replay := filepath.Join(t.TempDir(), "long.jsonl")
	writeFile(t, replay, copy.String())
	ix2 := openTemp(t)
	mustIndex(t, ix2, replay)
	if got, kept := messageTexts(t, ix2), messageTexts(t, ix); !slices.Equal(got, kept) || len(got) != all {
		t.Errorf("the copy read again gives %d messages, the index kept %d (equal: %v)", len(got), len(kept), slices.Equal(got, kept))
	}
}

// messageTexts are the indexed messages as "role: text", in time order.
func messageTexts(t *testing.T, ix *Index) []string {
	t.Helper()
	rows, err := ix.db.Query(`SELECT m.role, t.text FROM messages m JOIN message_texts t ON t.id = m.id ORDER BY m.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var role, text string
		if err := rows.Scan(&role, &text); err != nil {
			t.Fatal(err)
		}
		out = append(out, role+": "+text)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestForgetShrinksTheFile: the room a forgotten session took is given
// back to the disk at the next checkpoint (perch index ends with one),
// also in an index first made by an older perch (another schema, made
// without auto_vacuum), which is rebuilt.
func TestForgetShrinksTheFile(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "state", FileName)
	if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
		t.Fatal(err)
	}
	old, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(`CREATE TABLE meta(k TEXT PRIMARY KEY, v TEXT NOT NULL); INSERT INTO meta VALUES('schema', '3');
		CREATE TABLE copies(session INTEGER, start INTEGER, data BLOB)`); err != nil {
		t.Fatal(err)
	}
	old.Close()
	ix, err := Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	dir := t.TempDir()
	for _, name := range []string{"keep", "drop"} {
		c := newCC(name, t0)
		for i := range 2000 {
			c.user(fmt.Sprintf("%s %d %x", name, i, sha256.Sum256([]byte(name+strconv.Itoa(i)))))
		}
		writeFile(t, filepath.Join(dir, name+".jsonl"), c.text())
		mustIndex(t, ix, filepath.Join(dir, name+".jsonl"))
	}
	size := func() int64 {
		t.Helper()
		if err := ix.Checkpoint(ctx); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(db)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	both := size()
	if _, err := ix.Forget(ctx, "drop"); err != nil {
		t.Fatal(err)
	}
	if one := size(); one > both*9/10 {
		t.Errorf("the index is %d bytes after forgetting one of two like sessions, %d before", one, both)
	}
	if n := len(search(t, ix, Query{Text: "keep"})); n == 0 {
		t.Error("the kept session is not found")
	}
	checkIntegrity(t, ix)
}
