package attocode_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/transcript"
)

// export imports path (detected) and returns its jsonl export.
func export(t *testing.T, path string, opts ingest.Options) string {
	t.Helper()
	out, kind := importJSONL(t, path, "", opts)
	if kind != "attocode" {
		t.Fatalf("detected as %q", kind)
	}
	return string(out)
}

// addSession adds a session, newer than the fixture's, with one exchange.
func addSession(t *testing.T, db interface {
	Exec(string, ...any) (sql.Result, error)
}, id, text string) {
	t.Helper()
	if _, err := db.Exec(`INSERT INTO sessions (id, task, status, created_at, updated_at) VALUES (?, 'later', 'active', 1767300000.0, 1767300000.0)`, id); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO checkpoints (session_id, messages, created_at) VALUES (?, ?, 1767300000.0)`, id,
		msgs(O{{"role", "user"}, {"content", text}})); err != nil {
		t.Fatal(err)
	}
}

func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStoreWAL: committed rows still in the write-ahead log (another
// connection keeps it open, no checkpoint ran) are read; the files are not
// written.
func TestStoreWAL(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sessions.db")
	buildStore(t, path)
	db := openRW(t, path)
	defer db.Close()
	mustExec(t, db, "PRAGMA journal_mode = WAL")
	mustExec(t, db, "PRAGMA wal_autocheckpoint = 0")
	addSession(t, db, "wal-session", "written to the WAL only")
	if st, err := os.Stat(path + "-wal"); err != nil || st.Size() == 0 {
		t.Fatalf("want a non-empty WAL: %v", err)
	}
	main, wal := fileBytes(t, path), fileBytes(t, path+"-wal")

	out := export(t, path, ingest.Options{})
	if !strings.Contains(out, "written to the WAL only") || !strings.Contains(out, "Session wal-session") {
		t.Errorf("the WAL's session is missing:\n%s", out)
	}
	if strings.Contains(out, "could not be read in place") {
		t.Errorf("a WAL store was read from a copy:\n%s", out)
	}
	if !bytes.Equal(main, fileBytes(t, path)) || !bytes.Equal(wal, fileBytes(t, path+"-wal")) {
		t.Error("the import changed the store's files")
	}
}

// TestStoreWriterOpen: a writer in the middle of a transaction (a reserved
// lock) does not stop the import, and its uncommitted rows are not read.
func TestStoreWriterOpen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sessions.db")
	buildStore(t, path)
	db := openRW(t, path)
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	addSession(t, tx, "uncommitted", "not committed yet")

	out := export(t, path, ingest.Options{})
	if strings.Contains(out, "not committed yet") {
		t.Errorf("read an uncommitted row:\n%s", out)
	}
	if !strings.Contains(out, "Session a1c3e5f7") {
		t.Errorf("want the newest committed session:\n%s", out)
	}
}

// TestStoreLocked: another connection holds an exclusive lock (a write
// transaction that will not let readers in). The import does not wait for
// it: it reads the last committed state from a copy and says so.
func TestStoreLocked(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sessions.db")
	buildStore(t, path)
	db := openRW(t, path)
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = conn.ExecContext(ctx, "ROLLBACK") }()
	addSession(t, conn2exec{ctx, conn}, "locked-uncommitted", "held under an exclusive lock")
	// The lock is real: a plain read-only reader is refused.
	probe, _ := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(50)")
	var n int
	if err := probe.QueryRow("SELECT count(*) FROM sessions").Scan(&n); err == nil {
		t.Fatalf("the exclusive lock let a reader in (%d sessions)", n)
	}
	probe.Close()

	start := time.Now()
	out := export(t, path, ingest.Options{})
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the import waited %v", d)
	}
	if strings.Contains(out, "held under an exclusive lock") {
		t.Errorf("read an uncommitted row:\n%s", out)
	}
	if !strings.Contains(out, "Session a1c3e5f7") || !strings.Contains(out, "Fix the flaky date test in tests/test_dates.py") {
		t.Errorf("want the committed newest session:\n%s", out)
	}
	if !strings.Contains(out, "a copy of its last committed state was read") {
		t.Errorf("want a notice that a copy was read:\n%s", out)
	}
}

type conn2exec struct {
	ctx  context.Context
	conn *sql.Conn
}

func (c conn2exec) Exec(q string, args ...any) (sql.Result, error) {
	return c.conn.ExecContext(c.ctx, q, args...)
}

// TestStoreReadOnlyDir: a WAL store in a directory the reader may not
// write (no WAL index can be made) is still read.
func TestStoreReadOnlyDir(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root may write any directory")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "sessions.db")
	buildStore(t, path)
	db := openRW(t, path)
	mustExec(t, db, "PRAGMA journal_mode = WAL")
	mustExec(t, db, "PRAGMA wal_autocheckpoint = 0")
	addSession(t, db, "wal-session", "written to the WAL only")
	// Keep the WAL: copy the files aside while the writer has them open.
	ro := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"", "-wal"} {
		if err := os.WriteFile(filepath.Join(ro, "sessions.db"+s), fileBytes(t, path+s), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(ro, 0o755)
	out := export(t, filepath.Join(ro, "sessions.db"), ingest.Options{})
	if !strings.Contains(out, "written to the WAL only") {
		t.Errorf("the WAL's session is missing:\n%s", out)
	}
}

func emptyStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sessions.db")
	db := openRW(t, path)
	mustExec(t, db, pythonSchema)
	db.Close()
	return path
}

// TestStoreErrors: no sessions is an error; an unknown or ambiguous
// --session is a usage error that lists the sessions.
func TestStoreErrors(t *testing.T) {
	t.Parallel()
	empty := emptyStore(t)
	_, err := registry.Run(context.Background(), empty, "", ingest.Options{})
	var ue *ingest.UsageError
	if err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), "holds no sessions") {
		t.Errorf("empty store: %v", err)
	}

	two := emptyStore(t)
	db := openRW(t, two)
	addSession(t, db, "abc-1", "one")
	addSession(t, db, "abc-2", "two")
	db.Close()
	_, err = registry.Run(context.Background(), two, "attocode", ingest.Options{Session: "abc"})
	if !errors.As(err, &ue) || !strings.Contains(ue.Msg, "matches 2 sessions") || !strings.Contains(ue.Msg, "abc-1") {
		t.Errorf("ambiguous prefix: %v", err)
	}
	_, err = registry.Run(context.Background(), two, "attocode", ingest.Options{Session: "zzz"})
	if !errors.As(err, &ue) || !strings.Contains(ue.Msg, `no session "zzz"`) || !strings.Contains(ue.Msg, "abc-2") {
		t.Errorf("unknown session: %v", err)
	}
	out := export(t, two, ingest.Options{Session: "abc-1"})
	if !strings.Contains(out, `"text":"one"`) || strings.Contains(out, `"text":"two"`) {
		t.Errorf("--session abc-1:\n%s", out)
	}
}

// TestStoreDamagedCheckpoint: a newest checkpoint that is not JSON gives
// way to the previous one, with a notice.
func TestStoreDamagedCheckpoint(t *testing.T) {
	t.Parallel()
	path := emptyStore(t)
	db := openRW(t, path)
	addSession(t, db, "s1", "the older checkpoint")
	mustExec(t, db, `INSERT INTO checkpoints (session_id, messages, created_at) VALUES ('s1', '[{"role": "user", "content": "cut', 1767300001.0)`)
	db.Close()
	out := export(t, path, ingest.Options{})
	if !strings.Contains(out, "the older checkpoint") || !strings.Contains(out, "checkpoint 2: its messages are not JSON") {
		t.Errorf("damaged checkpoint:\n%s", out)
	}
}

// TestTypeScriptStore: the TypeScript agent's SQLite store is read as its
// session log.
func TestTypeScriptStore(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sessions.db")
	db := openRW(t, path)
	mustExec(t, db, `
CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT, created_at TEXT NOT NULL, last_active_at TEXT NOT NULL,
  message_count INTEGER DEFAULT 0, token_count INTEGER DEFAULT 0, summary TEXT);
CREATE TABLE entries (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, timestamp TEXT NOT NULL,
  type TEXT NOT NULL, data TEXT NOT NULL);
INSERT INTO sessions VALUES ('session-old', 'old', '2026-01-01T00:00:00Z', '2026-01-01T00:10:00Z', 2, 0, NULL);
INSERT INTO sessions VALUES ('session-new', 'new work', '2026-01-02T00:00:00Z', '2026-01-02T00:10:00Z', 2, 0, NULL);
INSERT INTO entries (session_id, timestamp, type, data) VALUES
  ('session-old', '2026-01-01T00:00:01Z', 'message', '{"role":"user","content":"old question"}'),
  ('session-new', '2026-01-02T00:00:01Z', 'message', '{"role":"user","content":"list the files"}'),
  ('session-new', '2026-01-02T00:00:02Z', 'message', '{"role":"assistant","content":"","toolCalls":[{"id":"c1","name":"list_files","arguments":{"path":"."}}]}'),
  ('session-new', '2026-01-02T00:00:03Z', 'tool_result', '{"callId":"c1","result":"a.txt\nb.txt"}'),
  ('session-new', '2026-01-02T00:00:04Z', 'bogus', 'not json');
`)
	db.Close()
	out := export(t, path, ingest.Options{})
	for _, want := range []string{
		`"text":"Session session-new: new work — the newest of the store's 2 sessions; --session picks another"`,
		`{"type":"user","id":"msg-1","text":"list the files"}`,
		`{"type":"tool","id":"c1","name":"list_files","status":"ok","args":{"path":"."},"output":"a.txt\nb.txt"}`,
		`entry 4: an entry of unknown type \"bogus\"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "old question") {
		t.Errorf("read the older session:\n%s", out)
	}
	if out := export(t, path, ingest.Options{Session: "session-o"}); !strings.Contains(out, "old question") {
		t.Errorf("--session session-o:\n%s", out)
	}
}

// TestStoreBigOutput: a multi-MB tool output comes through whole.
func TestStoreBigOutput(t *testing.T) {
	t.Parallel()
	path := emptyStore(t)
	big := strings.Repeat("0123456789abcdef\n", 3<<20/17)
	db := openRW(t, path)
	mustExec(t, db, `INSERT INTO sessions (id, task, created_at, updated_at) VALUES ('s', 't', 1, 1)`)
	mustExec(t, db, `INSERT INTO checkpoints (session_id, messages, created_at) VALUES ('s', ?, 1)`, msgs(
		O{{"role", "user"}, {"content", "cat the log"}},
		O{{"role", "assistant"}, {"tool_calls", []any{O{{"id", "c1"}, {"name", "bash"}, {"arguments", O{{"command", "cat log"}}}}}}},
		O{{"role", "tool"}, {"content", big}, {"tool_call_id", "c1"}},
	))
	db.Close()
	res, err := registry.Run(context.Background(), path, "", ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkToolOutput(t, res.Timeline, "c1", big)
}

func checkToolOutput(t *testing.T, tl *events.Timeline, id, want string) {
	t.Helper()
	for _, it := range tl.Items() {
		if it.Kind == events.ItemTool && it.Tool.CallID == id {
			if it.Tool.Result == nil || it.Tool.Result.Text != want {
				got := 0
				if it.Tool.Result != nil {
					got = len(it.Tool.Result.Text)
				}
				t.Fatalf("tool %s output: %d bytes, want %d", id, got, len(want))
			}
			var b bytes.Buffer
			if err := transcript.WriteJSONL(&b, tl); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no tool %s", id)
}

// TestStoreHotJournal: a writer died in the middle of a transaction that
// had already written pages (its journal is "hot"). A read-only reader may
// not roll it back; the import reads the last committed state from a copy
// and leaves the files as they were.
func TestStoreHotJournal(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sessions.db")
	buildStore(t, path)
	db := openRW(t, path)
	defer db.Close()
	mustExec(t, db, "PRAGMA cache_size = 1") // spill changed pages to the file
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = conn.ExecContext(ctx, "ROLLBACK") }()
	for i := 0; i < 40; i++ {
		addSession(t, conn2exec{ctx, conn}, "crashed-"+strings.Repeat("x", i), strings.Repeat("never committed ", 200))
	}
	if _, err := os.Stat(path + "-journal"); err != nil {
		t.Fatalf("want a journal: %v", err)
	}
	// The crash: the files as they are now, with no process holding them.
	dir := t.TempDir()
	crashed := filepath.Join(dir, "sessions.db")
	for _, s := range []string{"", "-journal"} {
		if err := os.WriteFile(crashed+s, fileBytes(t, path+s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	main, journal := fileBytes(t, crashed), fileBytes(t, crashed+"-journal")

	out := export(t, crashed, ingest.Options{})
	if strings.Contains(out, "never committed") || !strings.Contains(out, "Session a1c3e5f7") {
		t.Errorf("want the last committed state:\n%s", out)
	}
	if !bytes.Equal(main, fileBytes(t, crashed)) || !bytes.Equal(journal, fileBytes(t, crashed+"-journal")) {
		t.Error("the import changed the crashed store's files")
	}
	t.Log(strings.SplitN(out, "\n", 2)[0])
}

// TestSessionLogBigOutput: a multi-MB tool result in one line of the
// session log comes through whole.
func TestSessionLogBigOutput(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("line of output \u2713 \"quoted\"\n", 5<<20/28)
	res, _ := json.Marshal(map[string]any{"callId": "c9", "result": big})
	path := filepath.Join(t.TempDir(), "session.jsonl")
	text := `{"timestamp":"t","type":"message","data":{"role":"assistant","content":"","toolCalls":[{"id":"c9","name":"bash","arguments":{"command":"yes"}}]}}` + "\n" +
		`{"timestamp":"t","type":"tool_result","data":` + string(res) + "}\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := registry.Run(context.Background(), path, "", ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkToolOutput(t, r.Timeline, "c9", big)
}

// TestOtherDatabases: SQLite files of other systems are not claimed.
func TestOtherDatabases(t *testing.T) {
	t.Parallel()
	for name, schema := range map[string]string{
		"chat store":           `CREATE TABLE chats (jid TEXT PRIMARY KEY, name TEXT); CREATE TABLE messages (id TEXT, chat_jid TEXT, content TEXT);`,
		"sessions, no history": `CREATE TABLE sessions (id TEXT PRIMARY KEY); CREATE TABLE notes (session_id TEXT, body TEXT);`,
		"empty":                ``,
	} {
		path := filepath.Join(t.TempDir(), "other.db")
		db := openRW(t, path)
		mustExec(t, db, "CREATE TABLE IF NOT EXISTS x (a)")
		if schema != "" {
			mustExec(t, db, schema)
		}
		db.Close()
		_, err := registry.Run(context.Background(), path, "", ingest.Options{})
		var ue *ingest.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%s: want a usage error naming no kind, got %v", name, err)
		}
		if _, err := registry.Run(context.Background(), path, "attocode", ingest.Options{}); err == nil || !strings.Contains(err.Error(), "not an Attocode session store") {
			t.Errorf("%s --from attocode: %v", name, err)
		}
	}
}

// TestSessionLogLongFirstLine: a log whose first entry (a checkpoint of a
// long conversation) is longer than the sample is still recognised and read
// line by line.
func TestSessionLogLongFirstLine(t *testing.T) {
	t.Parallel()
	var ms []any
	for i := 0; i < 400; i++ {
		ms = append(ms, map[string]any{"role": "user", "content": strings.Repeat("long conversation ", 200)})
	}
	data, _ := json.Marshal(map[string]any{"id": "c1", "messages": ms})
	path := filepath.Join(t.TempDir(), "session.jsonl")
	// The agent writes {type, data, timestamp}: the sample stops inside data.
	text := `{"type":"checkpoint","data":` + string(data) + `,"timestamp":"t"}` + "\nnot json\n" + `{"timestamp":"t","type":"message","data":{"role":"user","content":"after the long line"}}` + "\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := export(t, path, ingest.Options{})
	if !strings.Contains(out, `"id":"msg-400"`) || !strings.Contains(out, "line 2: not JSON") || !strings.Contains(out, "after the long line") {
		t.Errorf("long first line:\n%.600s", out)
	}
}
