package index

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/perch-tui/perch/client/registry"
)

// Session is an indexed session.
type Session struct {
	SID, Parent, System, Project, Title, Path string
	Deleted                                   bool
}

// Paths lists the files of every indexed session (live sessions aside).
func (ix *Index) Paths(ctx context.Context) ([]Source, error) {
	rows, err := ix.db.QueryContext(ctx, `SELECT path, system, parent FROM sessions WHERE path NOT LIKE 'live:%' ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	defer rows.Close()
	var out []Source
	for rows.Next() {
		var s Source
		if err := rows.Scan(&s.Path, &s.From, &s.Parent); err != nil {
			return nil, fmt.Errorf("index: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Find finds the session whose id (or a unique prefix of it) is id, or
// whose file is at path id.
func (ix *Index) Find(ctx context.Context, id string) (Session, error) {
	abs, _ := filepath.Abs(id)
	rows, err := ix.db.QueryContext(ctx, `SELECT sid, parent, system, project, title, path, deleted FROM sessions
		WHERE sid = ? OR path = ? OR sid LIKE ? ESCAPE '\' ORDER BY sid = ? DESC, path = ? DESC, id LIMIT 3`,
		id, abs, likePrefix(id), id, abs)
	if err != nil {
		return Session{}, fmt.Errorf("index: %w", err)
	}
	defer rows.Close()
	var found []Session
	for rows.Next() {
		var s Session
		var del int
		if err := rows.Scan(&s.SID, &s.Parent, &s.System, &s.Project, &s.Title, &s.Path, &del); err != nil {
			return Session{}, fmt.Errorf("index: %w", err)
		}
		s.Deleted = del == 1
		found = append(found, s)
	}
	if err := rows.Err(); err != nil {
		return Session{}, fmt.Errorf("index: %w", err)
	}
	switch {
	case len(found) == 0:
		return Session{}, fmt.Errorf("index: no session %q", id)
	case found[0].SID == id || found[0].Path == abs || len(found) == 1:
		return found[0], nil
	}
	return Session{}, fmt.Errorf("index: %q is the start of several sessions' ids; give more of it", id)
}

// Forget removes a session (and its subagents) from the index.
func (ix *Index) Forget(ctx context.Context, id string) (Session, error) {
	s, err := ix.Find(ctx, id)
	if err != nil {
		return s, err
	}
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return s, fmt.Errorf("index: %w", err)
	}
	defer tx.Rollback()
	for _, q := range []string{
		`INSERT INTO texts(texts, rowid, text) SELECT 'delete', id, text FROM message_texts WHERE id IN
			(SELECT m.id FROM messages m JOIN sessions s ON s.id = m.session WHERE s.path = ?1 OR (s.parent = ?2 AND ?2 != ''))`,
		`DELETE FROM sessions WHERE path = ?1 OR (parent = ?2 AND ?2 != '')`,
	} {
		if _, err := tx.ExecContext(ctx, q, s.Path, s.SID); err != nil {
			return s, fmt.Errorf("index: forget %s: %w", s.SID, err)
		}
	}
	return s, tx.Commit()
}

// Clear empties the index (--rebuild reads every source again).
func (ix *Index) Clear(ctx context.Context) error {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	defer tx.Rollback()
	for _, q := range []string{`INSERT INTO texts(texts) VALUES('delete-all')`, `DELETE FROM chunks`, `DELETE FROM usage_sums`, `DELETE FROM usage`, `DELETE FROM messages`, `DELETE FROM sessions`} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("index: clear: %w", err)
		}
	}
	return tx.Commit()
}

// CheckSources marks the sessions whose file is gone as "source deleted"
// (their copy stays), and clears the mark of one that is back, in one
// transaction.
func (ix *Index) CheckSources(ctx context.Context) (gone int, err error) {
	srcs, err := ix.Paths(ctx)
	if err != nil {
		return 0, err
	}
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("index: %w", err)
	}
	defer tx.Rollback()
	for _, s := range srcs {
		_, err := os.Stat(s.Path)
		mark := 0
		if errors.Is(err, fs.ErrNotExist) {
			mark = 1
			gone++
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET deleted=? WHERE path=? AND deleted!=?`, mark, s.Path, mark); err != nil {
			return gone, fmt.Errorf("index: %w", err)
		}
	}
	return gone, tx.Commit()
}

// WriteCopy writes the session's source as the index keeps it: the bytes
// read from its file, for a replay when the file is gone.
func (ix *Index) WriteCopy(ctx context.Context, path string, w io.Writer) error {
	rows, err := ix.db.QueryContext(ctx, `SELECT c.texts, c.data FROM chunks c JOIN sessions s ON s.id = c.session WHERE s.path = ? ORDER BY c.id`, path)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var texts int64
		var data []byte
		if err := rows.Scan(&texts, &data); err != nil {
			return fmt.Errorf("index: %w", err)
		}
		if err := writeRaw(w, data, texts); err != nil {
			return fmt.Errorf("index: the copy of %s: %w", path, err)
		}
	}
	return rows.Err()
}

// Stats are the index's counts.
type Stats struct {
	Sessions, Deleted, Messages, Requests int64
	SourceBytes, FileBytes                int64
}

// Stats counts what the index holds.
func (ix *Index) Stats(ctx context.Context) (Stats, error) {
	var s Stats
	err := ix.db.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(deleted), 0), coalesce(sum(size), 0) FROM sessions`).Scan(&s.Sessions, &s.Deleted, &s.SourceBytes)
	if err == nil {
		err = ix.db.QueryRowContext(ctx, `SELECT count(*) FROM messages`).Scan(&s.Messages)
	}
	if err == nil {
		err = ix.db.QueryRowContext(ctx, `SELECT count(*) FROM usage`).Scan(&s.Requests)
	}
	if err != nil {
		return s, fmt.Errorf("index: %w", err)
	}
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(ix.path + suffix); err == nil {
			s.FileBytes += fi.Size()
		}
	}
	return s, nil
}

// LocalFiles lists the session files of the local CLIs under their
// directories (the caller resolves them: client/registry's LocalStates,
// keyed by system name), as each system lists them (SessionFiles).
func LocalFiles(dirs map[string]string) []Source {
	var out []Source
	for _, sys := range registry.Default().Systems {
		if dir := dirs[sys.Name]; dir != "" && sys.SessionFiles != nil {
			for _, p := range sys.SessionFiles(dir) {
				out = append(out, Source{Path: p, From: sys.Name})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
