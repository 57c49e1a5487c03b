package cli

import (
	"bufio"
	"context"
	"strings"

	"github.com/perch-tui/perch/backend/registry"
	"github.com/perch-tui/perch/ingest"

	"github.com/perch-tui/perch/transcript"
)

func runImport(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "import")
	from := fs.String("from", "", "the file's kind (detected when absent): "+kindNames())
	chat := fs.String("chat", "", "pynchy: the chat (jid) to import when the file holds several")
	session := fs.String("session", "", "attocode: the session id to import (default: the newest)")
	format := fs.String("format", "jsonl", "output: jsonl, json or md")
	full := fs.Bool("full", false, "md: print tool outputs whole instead of shortened")
	noThinking := noThinkingFlag(fs)
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if err := oneOf("format", *format, "md", "json", "jsonl"); err != nil {
		return err
	}
	if err := fromFlag(*from); err != nil {
		return err
	}
	res, err := registry.Run(ctx, pos[0], *from, ingest.Options{Chat: *chat, Session: *session, Stdin: env.Stdin})
	if err != nil {
		return importErr(err)
	}
	out := bufio.NewWriterSize(env.Stdout, 1<<20)
	if err := writeExport(out, res.Timeline, *format, fileTitle(pos[0]), transcript.MarkdownOptions{Full: *full, NoThinking: *noThinking}); err != nil {
		return err
	}
	return out.Flush()
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
