package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/perch-tui/perch/board"
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/index"
)

// indexPath is the index's file in perch's state directory.
func indexPath(env Env) string { return index.Path(outboxRoot(env)) }

func openIndex(ctx context.Context, env Env) (*index.Index, error) {
	return index.Open(ctx, indexPath(env))
}

func runIndex(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "index")
	c := conn{noLocal: true} // the local CLIs' sessions are read as files
	c.register(fs)
	live := fs.Bool("live", false, "also read every session of the live sources (each --url, the config file's [[source]] tables, the local maria daemon)")
	watch := fs.Bool("watch", false, "go on watching the local CLIs' sessions (with --live or --url, the live sources' too) and read each run into the index as it ends, until interrupted")
	rebuild := fs.Bool("rebuild", false, "empty the index and read every source again")
	forget := fs.String("forget", "", "remove the session `SESSION` (an id, a unique prefix, or its file) from the index")
	from := fs.String("from", "", "the kind of the FILEs (detected when absent): "+kindNames())
	pos, err := parse(fs, args, 0, -1)
	if err != nil {
		return err
	}
	if err := fromFlag(*from); err != nil {
		return err
	}
	ix, err := openIndex(ctx, env)
	if err != nil {
		return err
	}
	defer ix.Close()
	if *forget != "" {
		s, err := ix.Forget(ctx, *forget)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "forgot session %s (%s)\n", s.SID, s.Path)
		return nil
	}
	var srcs []index.Source
	if len(pos) > 0 {
		for _, p := range pos {
			srcs = append(srcs, index.Source{Path: p, From: *from})
		}
	} else {
		known, err := ix.Paths(ctx)
		if err != nil {
			return err
		}
		srcs = mergeSources(index.LocalFiles(localDirs(env)), known)
	}
	if *rebuild {
		if err := ix.Clear(ctx); err != nil {
			return err
		}
	}
	if err := indexSources(ctx, env, ix, srcs); err != nil {
		return err
	}
	if *watch {
		return watchIndex(ctx, env, &c, ix, *live || len(c.urls) > 0)
	}
	if *live || len(c.urls) > 0 {
		return indexLive(ctx, env, &c, ix)
	}
	return nil
}

// indexLive reads every session of every live source into the index, each
// as its source has it once synced.
func indexLive(ctx context.Context, env Env, c *conn, ix *index.Index) error {
	srcs, err := c.boardSources(ctx, env)
	if err != nil {
		return err
	}
	var sessions, messages, failed int
	for _, src := range srcs {
		b, err := src.Open(ctx)
		if err != nil {
			failed++
			fmt.Fprintf(env.Stderr, "perch: %s: %v\n", src.Name, err)
			continue
		}
		tasks, err := b.Sessions(ctx)
		if err != nil {
			failed++
			fmt.Fprintf(env.Stderr, "perch: %s: %v\n", src.Name, err)
			continue
		}
		for _, t := range tasks {
			r, err := indexLiveSession(ctx, env, ix, src.URL, b, t)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				failed++
				fmt.Fprintf(env.Stderr, "perch: %s: session %s: %v\n", src.Name, shortID(t.ID), err)
				continue
			}
			sessions++
			messages += r.Messages
		}
	}
	fmt.Fprintf(env.Stdout, "read %s of %s, %s\n", nounCount(sessions, "live session"), nounCount(len(srcs), "source"), nounCount(messages, "message"))
	if failed > 0 {
		return fmt.Errorf("index: %d of the live sources and sessions could not be read", failed)
	}
	return nil
}

// mergeSources is a followed by the sources of b not in a.
func mergeSources(a, b []index.Source) []index.Source {
	seen := map[string]bool{}
	for _, s := range a {
		seen[s.Path] = true
	}
	for _, s := range b {
		if !seen[s.Path] {
			a = append(a, s)
		}
	}
	return a
}

// indexSources reads the sources into the index, with a progress bar on a
// terminal, and says what it did.
func indexSources(ctx context.Context, env Env, ix *index.Index, srcs []index.Source) error {
	var total int64
	for _, s := range srcs {
		if fi, err := os.Stat(s.Path); err == nil {
			total += fi.Size()
		}
	}
	bar := newProgress(env, total)
	var read int64
	var sessions, messages, failed int
	ix.IndexFiles(ctx, srcs, func(s index.Source, r index.FileResult, err error) {
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failed++
			bar.clear()
			fmt.Fprintf(env.Stderr, "perch: %v\n", firstLineOf(err.Error()))
			return
		}
		read += r.Read
		messages += r.Messages
		if r.Read > 0 {
			sessions++
		}
	}, bar.set)
	if err := ctx.Err(); err != nil {
		bar.end()
		return err
	}
	bar.end()
	if _, err := ix.CheckSources(ctx); err != nil {
		return err
	}
	if err := ix.Checkpoint(ctx); err != nil {
		return err
	}
	st, err := ix.Stats(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "read %s new in %d of %s, %s; the index holds %s (%d with the source deleted), %s, %s: %s\n",
		byteCount(read), sessions, nounCount(len(srcs), "file"), nounCount(messages, "message"),
		nounCount(int(st.Sessions), "session"), st.Deleted, nounCount(int(st.Messages), "message"), nounCount(int(st.Requests), "request"), ix.File())
	if failed > 0 {
		return fmt.Errorf("index: %s could not be read", nounCount(failed, "file"))
	}
	return nil
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func byteCount(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return strconv.FormatInt(n, 10) + " B"
}

// progress is a bar on stderr when it is a terminal, nothing otherwise.
type progress struct {
	w     io.Writer
	total int64
	last  time.Time
	shown bool
}

func newProgress(env Env, total int64) *progress {
	if !env.StderrIsTerminal || total <= 0 {
		return &progress{}
	}
	return &progress{w: env.Stderr, total: total}
}

func (p *progress) set(n int64) {
	if p.w == nil || time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	frac := min(1, float64(n)/float64(p.total))
	const width = 30
	fill := int(frac * width)
	fmt.Fprintf(p.w, "\r\x1b[Kindexing [%s%s] %3.0f%% of %s", strings.Repeat("#", fill), strings.Repeat(".", width-fill), frac*100, byteCount(p.total))
	p.shown = true
}

func (p *progress) clear() {
	if p.w != nil && p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
		p.last = time.Time{}
	}
}

func (p *progress) end() { p.clear() }

// parseWhen reads a --since/--until value: a date (2026-01-31), a time
// (RFC 3339), or an age before now (90m, 36h, 7d, 2w).
func parseWhen(flagName, v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.ParseInLocation("2006-01-02", v, time.Local); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if n := len(v); n > 1 {
		if k, err := strconv.Atoi(v[:n-1]); err == nil && k >= 0 {
			switch v[n-1] {
			case 'm':
				return now.Add(-time.Duration(k) * time.Minute), nil
			case 'h':
				return now.Add(-time.Duration(k) * time.Hour), nil
			case 'd':
				return now.AddDate(0, 0, -k), nil
			case 'w':
				return now.AddDate(0, 0, -7*k), nil
			}
		}
	}
	return time.Time{}, usagef("--%s: %q is not a date (2026-01-31), a time (2026-01-31T09:00:00Z) or an age (90m, 36h, 7d, 2w)", flagName, v)
}

// indexedSource is what replay opens for arg: arg itself when it is a
// file (or standard input), else the indexed session arg names (an id or
// a unique prefix): its file, or, when the file is gone, the copy the
// index kept, written to a private temporary file that done removes.
// from is the kind to read it as.
func indexedSource(ctx context.Context, env Env, arg, from string) (path, kind string, done func(), err error) {
	done = func() {}
	if arg == "-" {
		return arg, from, done, nil
	}
	if _, err := os.Stat(arg); err == nil || !errors.Is(err, os.ErrNotExist) {
		return arg, from, done, nil
	}
	if _, err := os.Stat(indexPath(env)); err != nil {
		return arg, from, done, nil // no index: the file's own error says it
	}
	ix, err := openIndex(ctx, env)
	if err != nil {
		return "", "", done, err
	}
	defer ix.Close()
	s, err := ix.Find(ctx, arg)
	if err != nil {
		return arg, from, done, nil // not a session either: the file's own error says it
	}
	if url, id, live := s.Live(); live {
		return "", "", done, fmt.Errorf("session %s is a live session of %s: open it with perch attach %s --url %s", shortID(id), url, shortID(id), url)
	}
	if from == "" {
		from = s.System
	}
	if !s.Deleted {
		if _, err := os.Stat(s.Path); err == nil {
			return s.Path, from, done, nil
		}
	}
	dir, err := os.MkdirTemp("", "perch-indexed-*")
	if err != nil {
		return "", "", done, fmt.Errorf("the indexed copy of %s: %w", s.SID, err)
	}
	done = func() { os.RemoveAll(dir) }
	path = filepath.Join(dir, filepath.Base(s.Path))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err == nil {
		err = ix.WriteCopy(ctx, s.Path, f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		done()
		return "", "", func() {}, fmt.Errorf("the indexed copy of %s: %w", s.SID, err)
	}
	if env.StderrIsTerminal {
		fmt.Fprintf(env.Stderr, "perch: %s: source deleted; replaying the copy in the index (read-only)\n", s.Path)
	}
	return path, from, done, nil
}

// localDirs are the directories of the local CLIs the board watches (the
// environment's, the config file's [local] tables, the defaults), by
// system name; a CLI turned off is left out.
func localDirs(env Env) map[string]string {
	conf, _ := env.config()
	reg := registry.Default()
	if env.registry != nil {
		reg = env.registry()
	}
	dirs := map[string]string{}
	for _, ls := range reg.LocalStates(env.Getenv, env.Home, conf.localSettings()) {
		if !ls.Off && ls.Exists {
			dirs[ls.System] = ls.Dir
		}
	}
	return dirs
}

// indexLiveSession reads one session of a live source as the source has
// it once synced, and puts it into the index in place of an earlier read.
func indexLiveSession(ctx context.Context, env Env, ix *index.Index, url string, b client.Backend, t events.Task) (index.FileResult, error) {
	var evs []events.Event
	lo := exportLiveOpts(false)
	lo.onUpdate = func(s liveStep) error {
		if s.old != nil {
			evs = evs[:0] // the source read the session again
		}
		evs = append(evs, s.u.Events...)
		return nil
	}
	if _, err := followLive(ctx, env, b, t, lo); err != nil {
		return index.FileResult{}, err
	}
	return ix.IndexEvents(ctx, index.LiveSession{URL: url, ID: t.ID, System: b.Name(), Title: t.Name,
		Project: t.Cwd, Created: t.Created, Updated: t.Updated}, evs)
}

// watchIndex is perch index --watch: the local CLIs' sessions, and with
// live those of the live sources, are watched as the board watches them;
// each session is read into the index when first listed and again each
// time a run of it ends (indexKeeper): a live session as its source has
// it, a local CLI's files from where the index stopped. It says what it
// read, until interrupted.
func watchIndex(ctx context.Context, env Env, c *conn, ix *index.Index, live bool) error {
	sources := localBoardSources(env)
	if live {
		srcs, err := c.boardSources(ctx, env)
		if err != nil {
			return err
		}
		sources = append(srcs, sources...)
	}
	if len(sources) == 0 {
		return usagef("--watch: no local Claude Code or Codex sessions to watch; add --live or --url for the live sources")
	}
	opened := &openedBackends{m: map[string]client.Backend{}}
	for i := range sources {
		sources[i] = opened.record(sources[i])
	}
	k := newIndexKeeper(env, ix, sources, opened, func(line string) { fmt.Fprintln(env.Stdout, line) })
	k.firstSight = true
	go k.run(ctx)
	said := map[string]string{} // each source's last error said
	bd := board.Start(ctx, sources, board.Options{OnChange: k.change, OnSource: func(s board.SourceState) {
		k.source(s)
		if s.Err != "" && said[s.Name] != s.Err {
			fmt.Fprintf(env.Stderr, "perch: %s: %s\n", s.Name, s.Err)
		}
		said[s.Name] = s.Err
	}})
	<-ctx.Done()
	bd.Wait()
	k.wait()
	return nil // interrupted: what was read is in
}

// localBoardSources are the local CLIs' sessions as board sources, beside
// whatever --url names: perch index --watch reads them as files.
func localBoardSources(env Env) []board.Source {
	conf, _ := env.config()
	reg := registry.Default()
	if env.registry != nil {
		reg = env.registry()
	}
	prices, _ := conf.priceTable()
	var out []board.Source
	for _, ls := range reg.LocalSources(env.Getenv, env.Home, conf.localSettings(), outboxRoot(env), prices) {
		out = append(out, board.Source{Name: ls.System, System: ls.System, URL: ls.Dir,
			Open: func(context.Context) (client.Backend, error) { return ls.Open() }})
	}
	return out
}
