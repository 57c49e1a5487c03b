package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"path/filepath"
	"strings"

	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/internal/ingest"

	"github.com/perch-tui/perch/transcript"
	"github.com/perch-tui/perch/tui"
)

// runReplay opens a transcript file of any known system: in the terminal
// UI (read-only) when stdout is a terminal and no --format is asked for,
// else printed like tail or export.
func runReplay(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "replay")
	format := fs.String("format", "text", "output when printing: text (as tail prints it), md, json or jsonl")
	from := fs.String("from", "", "the file's kind (detected when absent): "+kindNames())
	chat := fs.String("chat", "", "pynchy: the chat (jid) to open when the file holds several")
	session := fs.String("session", "", "attocode: the session id to open (default: the newest)")
	full := fs.Bool("full", false, "md: quote every tool output whole")
	noThinking := noThinkingFlag(fs)
	theme := themeFlag(fs)
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if err := oneOf("format", *format, "text", "md", "json", "jsonl"); err != nil {
		return err
	}
	if err := resolveTheme(env, theme); err != nil {
		return err
	}
	if err := fromFlag(*from); err != nil {
		return err
	}
	formatSet := false
	fs.Visit(func(f *flag.Flag) { formatSet = formatSet || f.Name == "format" })
	path, kind, done, err := indexedSource(ctx, env, pos[0], *from)
	if err != nil {
		return err
	}
	defer done()
	*from = kind
	opts := ingest.Options{Chat: *chat, Session: *session, Stdin: env.Stdin}
	toUI := env.IsTerminal && !formatSet
	if toUI {
		prepareUI()
	}
	if toUI {
		// The file is read before the UI starts, so that one that cannot
		// be read fails here with a clear line (exit 1 or 2), not inside
		// the UI. The UI reads it again as it shows it; Close removes the
		// copy of standard input it reads.
		b, err := registry.OpenFile(ctx, path, *from, opts)
		if err != nil {
			return importErr(err)
		}
		defer b.Close()
		ts, err := b.Sessions(ctx)
		if err != nil {
			return err
		}
		cfg := uiConfig(env, *theme)
		if len(ts) > 0 {
			cfg.TaskID = ts[0].ID // the file's one session
		}
		return env.runUI(ctx, b, cfg)
	}
	if *format != "text" {
		w := transcript.NewWriter(env.Stdout, *format, fileTitle(path), transcript.MarkdownOptions{Full: *full, NoThinking: *noThinking})
		return importTo(ctx, env, path, *from, opts, w)
	}
	tl, sp, err := importFile(ctx, env, path, *from, opts)
	if err != nil {
		return err
	}
	defer sp.Close()
	out := bufio.NewWriterSize(env.Stdout, 1<<20)
	newPrinter(out, false).update(tl)
	return out.Flush()
}

// fileTitle is the title of a transcript read from path ("-" is stdin).
func fileTitle(path string) string {
	if path == registry.Stdin {
		return "stdin"
	}
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

// importErr turns an importer's error into what the command returns: a
// usage error is perch's (exit 2).
func importErr(err error) error {
	var ue *ingest.UsageError
	if errors.As(err, &ue) {
		return usageError{msg: ue.Msg}
	}
	return err
}

// uiOpenIndexed is how the UI replays a session of the index that no
// list of its holds (tui.Config.OpenIndexed): as perch replay SESSION
// does, from its file or, when that is gone, the index's copy; read-only.
func uiOpenIndexed(env Env) func(ctx context.Context, session string) (tui.IndexedSession, error) {
	env.StderrIsTerminal = false // the UI owns the terminal: no note on stderr
	return func(ctx context.Context, session string) (tui.IndexedSession, error) {
		path, kind, done, err := indexedSource(ctx, env, session, "")
		if err != nil {
			return tui.IndexedSession{}, err
		}
		b, err := registry.OpenFile(ctx, path, kind, ingest.Options{})
		if err != nil {
			done()
			return tui.IndexedSession{}, importErr(err)
		}
		closeAll := func() { b.Close(); done() }
		ts, err := b.Sessions(ctx)
		if err != nil {
			closeAll()
			return tui.IndexedSession{}, err
		}
		id := session
		if len(ts) > 0 {
			id = ts[0].ID // the file's one session
		}
		for _, t := range ts {
			if t.ID == session {
				id = t.ID
			}
		}
		return tui.IndexedSession{Backend: b, TaskID: id, Close: closeAll}, nil
	}
}
