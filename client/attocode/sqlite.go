package attocode

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	// The stores are read with modernc's pure Go SQLite, linked here
	// where they are opened, so every program that imports Attocode's
	// files can read them.
	_ "modernc.org/sqlite"
)

// Driver is the name modernc.org/sqlite registers its database/sql
// driver under.
const Driver = "sqlite"

// Reading a SQLite store that its agent may be using at the same moment.
//
// The store is opened read-only (mode=ro, query_only) and everything is read
// in one read transaction, so the tables agree with each other. A reader
// sees the last committed state: in WAL mode the committed frames of the
// -wal file are part of it, and a writer's open transaction is not.
//
// When that fails — another process holds an exclusive lock past a short
// wait, a crashed writer left a journal that a read-only reader may not
// roll back, or the -shm file of a WAL database cannot be created in a
// read-only directory — the database, its -wal and its -journal are copied
// to a temporary directory and the copy is opened: SQLite then recovers the
// last committed state from them (replaying the WAL or rolling back the
// journal) without touching the original. Last, the file is opened as
// immutable, which reads the main file alone.

// busyTimeout is how long a read waits for a lock before the copy is used.
var busyTimeout = 300

// errUser marks errors about what the user asked for (they are not retried
// on a copy of the database).
type userError struct{ err error }

func (e userError) Error() string { return e.err.Error() }
func (e userError) Unwrap() error { return e.err }

// readDB runs fn in one read transaction on the database at path, trying a
// read-only open, then a private copy, then an immutable open. note says
// how it was read when it was not the first way.
func readDB(ctx context.Context, path string, fn func(*sql.Tx) error) (note string, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	dsn := "file:" + (&url.URL{Path: abs}).EscapedPath() +
		fmt.Sprintf("?mode=ro&_pragma=busy_timeout(%d)&_pragma=query_only(1)", busyTimeout)
	first := runTx(ctx, dsn, fn)
	if first == nil {
		return "", nil
	}
	var ue userError
	if errors.As(first, &ue) || ctx.Err() != nil {
		return "", first
	}
	if dir, cerr := copyDB(abs); cerr == nil {
		defer os.RemoveAll(dir)
		cp := "file:" + (&url.URL{Path: filepath.Join(dir, "store.db")}).EscapedPath() +
			"?_pragma=busy_timeout(1000)"
		if err := runTx(ctx, cp, fn); err == nil {
			return fmt.Sprintf("The store could not be read in place (%s); a copy of its last committed state was read.", short(first)), nil
		} else if errors.As(err, &ue) {
			return "", err
		}
	}
	imm := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?mode=ro&immutable=1&_pragma=query_only(1)"
	if err := runTx(ctx, imm, fn); err == nil {
		return fmt.Sprintf("The store could not be read in place (%s); its main file was read alone, without its journal or write-ahead log.", short(first)), nil
	} else if errors.As(err, &ue) {
		return "", err
	}
	return "", first
}

func short(err error) string {
	s := err.Error()
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

func runTx(ctx context.Context, dsn string, fn func(*sql.Tx) error) error {
	db, err := sql.Open(Driver, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	return fn(tx)
}

// copyDB copies the database and the files SQLite keeps beside it (the
// write-ahead log and the rollback journal; not the shared-memory index,
// which is rebuilt) into a new temporary directory.
func copyDB(abs string) (string, error) {
	dir, err := os.MkdirTemp("", "perch-attocode-")
	if err != nil {
		return "", err
	}
	for _, suffix := range []string{"", "-wal", "-journal"} {
		err := copyFile(abs+suffix, filepath.Join(dir, "store.db"+suffix))
		if err != nil && (suffix == "" || !errors.Is(err, os.ErrNotExist)) {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// row is one table row, by column name. Values are int64, float64,
// string, []byte or nil.
type row map[string]any

// queryRows reads every row of a query.
func queryRows(tx *sql.Tx, query string, args ...any) ([]row, error) {
	rs, err := tx.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return nil, err
	}
	var out []row
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			return nil, err
		}
		r := make(row, len(cols))
		for i, c := range cols {
			r[c] = vals[i]
		}
		out = append(out, r)
	}
	return out, rs.Err()
}

// tables lists the database's tables with their columns.
func tables(tx *sql.Tx) (map[string]map[string]bool, error) {
	rs, err := queryRows(tx, "SELECT name FROM sqlite_master WHERE type = 'table'")
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]bool{}
	for _, r := range rs {
		name := r.str("name")
		cols, err := queryRows(tx, "SELECT name FROM pragma_table_info(?)", name)
		if err != nil {
			return nil, err
		}
		out[name] = map[string]bool{}
		for _, c := range cols {
			out[name][c.str("name")] = true
		}
	}
	return out, nil
}

func (r row) str(col string) string {
	switch v := r[col].(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case int64:
		return fmt.Sprint(v)
	case float64:
		return fmt.Sprint(v)
	}
	return ""
}

func (r row) num(col string) (float64, bool) {
	switch v := r[col].(type) {
	case int64:
		return float64(v), true
	case float64:
		return v, true
	case string, []byte:
		if f, err := strconv.ParseFloat(strings.TrimSpace(r.str(col)), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f, true
		}
	}
	return 0, false
}

func (r row) int(col string) (int64, bool) {
	f, ok := r.num(col)
	if !ok || f > 1e15 || f < -1e15 {
		return 0, false
	}
	return int64(f), true
}
