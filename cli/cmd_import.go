package cli

import (
	"bufio"
	"context"
	"path/filepath"
	"strings"

	"github.com/perch-tui/perch/importer"
	"github.com/perch-tui/perch/ingest"
)

func runImport(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "import")
	from := fs.String("from", "", "the file's kind (detected when absent): "+kindNames())
	chat := fs.String("chat", "", "pynchy: the chat (jid) to import when the file holds several")
	session := fs.String("session", "", "attocode: the session id to import (default: the newest)")
	format := fs.String("format", "jsonl", "output: jsonl, json or md")
	full := fs.Bool("full", false, "md: print tool outputs whole instead of shortened")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if err := oneOf("format", *format, "md", "json", "jsonl"); err != nil {
		return err
	}
	res, err := importer.Run(ctx, pos[0], *from, ingest.Options{Chat: *chat, Session: *session})
	if err != nil {
		return importErr(err)
	}
	out := bufio.NewWriterSize(env.Stdout, 1<<20)
	title := strings.TrimSuffix(filepath.Base(pos[0]), filepath.Ext(pos[0]))
	if err := writeExport(out, res.Timeline, *format, title, *full); err != nil {
		return err
	}
	return out.Flush()
}

func kindNames() string {
	var names []string
	for _, k := range importer.Kinds() {
		names = append(names, k.Name)
	}
	return strings.Join(names, ", ")
}
