// Package index is perch's memory across sessions: one SQLite database
// (with FTS5) of every session perch has read — the local Claude Code and
// Codex session files, files the user adds, live sessions — holding each
// session's messages for search, its per-request token usage for cost
// reports, and a compressed copy of its source (with the texts, text.go),
// so that a session whose file was deleted is still found and replayed.
//
// The database is in WAL mode with a busy timeout, so two perch processes
// can use it at once; every change is one transaction, so a process killed
// mid-index leaves the index as it was after its last committed file. The
// file is the user's alone (0600).
package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/perch-tui/perch/internal/pricing"
	_ "modernc.org/sqlite" // the database/sql driver "sqlite"
)

// FileName is the index's file name in perch's state directory.
const FileName = "index.db"

// schemaVersion changes when the tables change in a way an older index
// cannot be read with; such an index is rebuilt from its sources.
const schemaVersion = "4"

// Index is an open index database.
type Index struct {
	db   *sql.DB
	path string
	enc  *zstd.Encoder // compresses chunks (text.go)
}

// Path is where the index lives in the state directory dir.
func Path(stateDir string) string { return filepath.Join(stateDir, FileName) }

// Open opens (creating it when absent) the index at path.
func Open(ctx context.Context, path string) (*Index, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	// Create the file with the user's mode before SQLite does (it would
	// use the umask); its WAL and shared-memory files take the same mode.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	f.Close()
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	q := url.Values{}
	// Pages freed (FTS5 merges its segments as it goes: some 5% of the
	// file by the end of a first index) are given back by Checkpoint. A
	// database takes this before its first table (schema sees to an
	// older one); on any other it does nothing.
	q.Add("_pragma", "auto_vacuum(INCREMENTAL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	// Checkpoint the log into the database every 64 MiB, not 4: each
	// checkpoint waits for the disk, and a file's read writes a few MiB.
	// Checkpoint (below) ends a long run of writes.
	q.Add("_pragma", "wal_autocheckpoint(16384)")
	q.Add("_pragma", "foreign_keys(ON)")
	// Writers take the write lock when they begin: two processes that
	// both read then write would otherwise deadlock on the upgrade.
	q.Add("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("index: open %s: %w", path, err)
	}
	enc, err := newEncoder()
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("index: %w", err)
	}
	ix := &Index{db: db, path: path, enc: enc}
	if err := ix.schema(ctx); err != nil {
		ix.Close()
		return nil, fmt.Errorf("index: %s: %w", path, err)
	}
	return ix, nil
}

// Checkpoint gives back the database's free pages, moves the log into
// the database and empties it: after a long run of writes, so that the
// index on disk is the database alone, no bigger than it needs.
func (ix *Index) Checkpoint(ctx context.Context) error {
	if _, err := ix.db.ExecContext(ctx, `PRAGMA incremental_vacuum`); err != nil {
		return fmt.Errorf("index: free pages: %w", err)
	}
	if _, err := ix.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("index: checkpoint: %w", err)
	}
	return nil
}

// Close closes the database.
func (ix *Index) Close() error {
	ix.enc.Close()
	return ix.db.Close()
}

// File is the index's path.
func (ix *Index) File() string { return ix.path }

const schema = `
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT NOT NULL);
-- One row per session source: a file, or a live session (path live:…).
CREATE TABLE IF NOT EXISTS sessions(
	id INTEGER PRIMARY KEY,
	path TEXT NOT NULL UNIQUE,
	sid TEXT NOT NULL,               -- the system's session id (else the file's name)
	parent TEXT NOT NULL DEFAULT '', -- sid of the session a subagent ran under
	system TEXT NOT NULL,
	project TEXT NOT NULL DEFAULT '',
	title TEXT NOT NULL DEFAULT '',
	size INTEGER NOT NULL DEFAULT 0, -- bytes read: the end of the last complete line
	head BLOB,                       -- the first bytes: another head is another file
	lines INTEGER NOT NULL DEFAULT 0, -- 1: JSON lines, read incrementally
	first_at INTEGER NOT NULL DEFAULT 0,
	last_at INTEGER NOT NULL DEFAULT 0,
	deleted INTEGER NOT NULL DEFAULT 0,
	source_cost REAL                 -- the cost the source itself reported (run results)
);
CREATE INDEX IF NOT EXISTS sessions_sid ON sessions(sid);
CREATE TABLE IF NOT EXISTS messages(
	id INTEGER PRIMARY KEY,      -- in time order: see idShift
	session INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	key TEXT NOT NULL,
	khash INTEGER NOT NULL,     -- keyHash(key): what the index of keys holds
	role TEXT NOT NULL,
	tool TEXT NOT NULL DEFAULT '',
	at INTEGER NOT NULL,
	chunk INTEGER NOT NULL,     -- the text: n bytes at off in the chunk's texts (text.go)
	off INTEGER NOT NULL,
	n INTEGER NOT NULL
);
-- A message is found by its session and key through the key's hash: an
-- index of the keys themselves (some 45 bytes each) was 0.04 of the
-- session files' bytes. It also serves each session's deletes.
CREATE INDEX IF NOT EXISTS messages_key ON messages(session, khash);
-- The messages' texts and the sources' bytes, compressed together
-- (text.go): a session whose file is gone replays from here.
CREATE TABLE IF NOT EXISTS chunks(
	id INTEGER PRIMARY KEY,     -- a session's chunks, in id order, hold its source in order
	session INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	texts INTEGER NOT NULL,     -- the length of the texts before the source's bytes
	data BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_session ON chunks(session);
CREATE VIEW IF NOT EXISTS message_texts AS SELECT m.id AS id, perch_text(c.data, m.off, m.n) AS text
	FROM messages m JOIN chunks c ON c.id = m.chunk;
-- The messages' words, rowid = messages.id; the text itself is the
-- view's (no column sizes: nothing ranks by them).
CREATE VIRTUAL TABLE IF NOT EXISTS texts USING fts5(text, content='message_texts', content_rowid='id',
	tokenize='unicode61 remove_diacritics 2', columnsize=0);
-- One row per model request, keyed so that every copy of it (streamed
-- lines, a resumed or forked session's copy) is one row.
CREATE TABLE IF NOT EXISTS usage(
	key TEXT PRIMARY KEY,
	session INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	at INTEGER NOT NULL,
	model TEXT NOT NULL,
	input INTEGER NOT NULL,     -- input tokens not read from or written to the cache
	output INTEGER NOT NULL,
	cache_read INTEGER NOT NULL,
	cache_5m INTEGER NOT NULL,  -- cache writes kept five minutes
	cache_1h INTEGER NOT NULL,  -- cache writes kept an hour
	output_final INTEGER NOT NULL, -- 0: the reply was cut off, output is a lower bound
	source_cost REAL            -- the request's cost as the source reported it
);
CREATE INDEX IF NOT EXISTS usage_at ON usage(at);
CREATE INDEX IF NOT EXISTS usage_session ON usage(session);
-- usage summed by quarter of an hour (UTC), session, model and context
-- size: what perch usage reads when it asks for no time range. Each
-- file's read sums its sessions again (sumUsage).
CREATE TABLE IF NOT EXISTS usage_sums(
	quarter INTEGER NOT NULL,   -- at / 900000
	session INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	model TEXT NOT NULL,
	long INTEGER NOT NULL,
	requests INTEGER NOT NULL,
	input INTEGER NOT NULL,
	output INTEGER NOT NULL,
	cache_read INTEGER NOT NULL,
	cache_5m INTEGER NOT NULL,
	cache_1h INTEGER NOT NULL,
	output_final INTEGER NOT NULL, -- the least of the requests'
	source_cost REAL,
	source_costs INTEGER NOT NULL, -- how many requests had one
	PRIMARY KEY(quarter, session, model, long)
);
CREATE INDEX IF NOT EXISTS usage_sums_session ON usage_sums(session);
`

func (ix *Index) schema(ctx context.Context) error {
	var v string
	err := ix.db.QueryRowContext(ctx, `SELECT v FROM meta WHERE k='schema'`).Scan(&v)
	if err == nil && v == schemaVersion {
		return nil
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) && !isNoTable(err) {
		return err
	}
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if v != "" {
		// An index of another version is made again: perch index reads
		// its sources anew (the copies of deleted ones are lost).
		for _, q := range []string{`DROP TABLE IF EXISTS texts`, `DROP VIEW IF EXISTS message_texts`, `DROP TABLE IF EXISTS copies`, `DROP TABLE IF EXISTS chunks`,
			`DROP TABLE IF EXISTS usage_sums`, `DROP TABLE IF EXISTS usage`, `DROP TABLE IF EXISTS messages`, `DROP TABLE IF EXISTS sessions`} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
	}
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return err
	}
	// An index of an earlier version has its requests but not their sums.
	if _, err := tx.ExecContext(ctx, `DELETE FROM usage_sums`); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO usage_sums `+sumSelect+` GROUP BY 1, 2, 3, 4`); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(k, v) VALUES('schema', ?)`, schemaVersion); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	// An index made before auto_vacuum was asked for takes it now, while
	// its tables are new and empty and rewriting the file costs nothing.
	var vacuum int
	if err := ix.db.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&vacuum); err != nil {
		return err
	}
	if vacuum == 0 {
		if _, err := ix.db.ExecContext(ctx, `PRAGMA auto_vacuum=INCREMENTAL`); err != nil {
			return err
		}
		if _, err := ix.db.ExecContext(ctx, `VACUUM`); err != nil {
			return err
		}
	}
	return nil
}

// sumSelect sums requests into usage_sums rows (the caller adds WHERE and
// GROUP BY 1, 2, 3, 4).
const sumSelect = `SELECT at / 900000, session, model, input + cache_read + cache_5m + cache_1h > ` + pricing.LongContextSQL + `,
	count(*), sum(input), sum(output), sum(cache_read), sum(cache_5m), sum(cache_1h), min(output_final),
	sum(source_cost), count(source_cost) FROM usage`

// sumUsage sums the requests of session again.
func sumUsage(ctx context.Context, tx *sql.Tx, session int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM usage_sums WHERE session = ?`, session); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO usage_sums `+sumSelect+` WHERE session = ? GROUP BY 1, 2, 3, 4`, session)
	return err
}

func isNoTable(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no such table")
}
