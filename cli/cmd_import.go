package cli

import (
	"context"
	"strings"

	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/internal/spill"

	"github.com/perch-tui/perch/transcript"
)

func runImport(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "import")
	from := fs.String("from", "", "the file's kind (detected when absent): "+kindNames())
	chat := fs.String("chat", "", "pynchy: the chat (jid) to import when the file holds several")
	session := fs.String("session", "", "attocode: the session id to import (default: the newest)")
	format := fs.String("format", "jsonl", "output: jsonl, json, md or html (one page to share, secrets taken out)")
	full := fs.Bool("full", false, "md: print tool outputs whole instead of shortened")
	noThinking := noThinkingFlag(fs)
	of := registerOutFlags(fs)
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if err := oneOf("format", *format, exportFormats()...); err != nil {
		return err
	}
	if err := fromFlag(*from); err != nil {
		return err
	}
	if err := of.check(); err != nil {
		return err
	}
	opts := ingest.Options{Chat: *chat, Session: *session, Stdin: env.Stdin}
	head := transcript.HTMLOptions{System: *from}
	if *format == "html" && head.System == "" && pos[0] != registry.Stdin {
		// The page names the file's kind: sniffed here, as the import will.
		if s, k, err := registry.Choose(pos[0], "", opts); err == nil {
			s.Close()
			head.System = k.Name
		}
	}
	out, err := of.openExport(env, *format, fileTitle(pos[0]), head, transcript.MarkdownOptions{Full: *full, NoThinking: *noThinking})
	if err != nil {
		return err
	}
	return out.close(importTo(ctx, env, pos[0], *from, opts, out.w))
}

// importTo reads the transcript file at path and writes it to w as it is
// read: each item once the timeline settled it, which it then forgets,
// and long texts wait in a spill file until written. A file of hundreds
// of megabytes is so printed with the memory of a small one. A file that
// fails after items went out ends with a notice that the transcript is
// incomplete.
func importTo(ctx context.Context, env Env, path, from string, opts ingest.Options, w transcript.Writer) error {
	tl, sp := fileTimeline(path, writeHold)
	defer sp.Close()
	// Most files have no run ends to settle at (API logs, a Suna
	// thread): an item also settles once enough items followed.
	tl.SettleAfter(events.FileSettleLag)
	ex := &exportStream{w: w}
	var werr error
	_, err := registry.RunWith(ctx, path, from, opts, func(ev events.Event) {
		tl.Apply(ev)
		if werr == nil {
			werr = ex.settled(tl)
		}
	})
	saySpillErr(env, tl)
	switch {
	case werr != nil:
		return werr
	case err != nil && ex.written > 0:
		if werr := ex.endShort(tl, events.LevelError, "perch stopped reading the file before its end"); werr != nil {
			return werr
		}
		return importErr(err)
	case err != nil:
		return importErr(err)
	}
	return ex.end(tl)
}

// importFile reads the transcript file at path (from names its kind)
// into a timeline whose long texts wait in a spill file, not the heap,
// until they are written, as export's do: a file of hundreds of megabytes
// is printed with the memory of a small one. The caller closes the spill
// file (which removes it) once the timeline is written. When the spill
// file fails, the texts stay in memory and stderr says so once.
func importFile(ctx context.Context, env Env, path, from string, opts ingest.Options) (*events.Timeline, *spill.File, error) {
	tl, sp := fileTimeline(path, 0)
	if _, err := registry.RunInto(ctx, tl, path, from, opts); err != nil {
		sp.Close()
		return nil, nil, importErr(err)
	}
	saySpillErr(env, tl)
	return tl, sp, nil
}

// fileTimeline is a timeline for the file at path whose long texts wait
// in a spill file of their own (the caller closes it), quietly: stderr
// says it when the file fails (saySpillErr). hold is SpillOptions.Hold:
// writeHold for a timeline written as it settles, 0 for one kept whole.
func fileTimeline(path string, hold int) (*events.Timeline, *spill.File) {
	sp := spill.Open("import-" + fileTitle(path))
	tl := events.NewTimeline()
	tl.SetBodyStore(sp, events.SpillOptions{Quiet: true, Hold: hold})
	return tl, sp
}

func kindNames() string {
	return strings.Join(registry.Names(), ", ")
}

// fromFlag checks --from before anything is read, and suggests the kind
// nearest to a misspelt one.
func fromFlag(v string) error {
	if _, ok := registry.Default().Kind(v); v == "" || ok {
		return nil
	}
	return usagef("unknown kind %q for --from%s; the kinds are:\n%s", v, didYouMean(v, registry.Names()), registry.Default().KindList())
}
