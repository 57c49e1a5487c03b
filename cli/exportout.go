package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/perch-tui/perch/transcript"
	"github.com/perch-tui/perch/transcript/redact"
)

// exportFormats are what export and import write (a new slice each
// time: oneOf sorts it).
func exportFormats() []string { return []string{"md", "json", "jsonl", "html"} }

// outFlags are the flags export and import share for where the transcript
// goes and what is taken out of it.
type outFlags struct {
	out                      *string
	redact, noRedact, emails *bool
}

func registerOutFlags(fs *flagSet) *outFlags {
	return &outFlags{
		out:      fs.String("o", "", "write to this file instead of standard output"),
		redact:   fs.Bool("redact", false, "take secrets out (credentials, your home directory and user name); on by default for html"),
		noRedact: fs.Bool("no-redact", false, "html: keep every text as it is (secrets included)"),
		emails:   fs.Bool("redact-emails", false, "when redacting, take e-mail addresses out too"),
	}
}

// check refuses contradicting flags.
func (f *outFlags) check() error {
	if *f.redact && *f.noRedact {
		return usagef("--redact and --no-redact contradict each other")
	}
	return nil
}

// redacting says whether the format's output is redacted.
func (f *outFlags) redacting(format string) bool {
	return *f.redact || format == "html" && !*f.noRedact
}

// exportOut is an open export: its writer and what ends it.
type exportOut struct {
	w   transcript.Writer
	r   *redact.Redactor
	f   *os.File
	env Env
}

// openExport opens the export's destination and writer: the format's
// writer (html gets head), behind the redactor when redacting, so that
// no text reaches the output unredacted (the title and head included).
func (f *outFlags) openExport(env Env, format, title string, head transcript.HTMLOptions, md transcript.MarkdownOptions) (*exportOut, error) {
	o := &exportOut{env: env}
	if f.redacting(format) {
		r, err := redact.New(redact.Options{Home: env.Home, User: userName(env), Emails: *f.emails})
		if err != nil {
			return nil, err
		}
		o.r = r
		title = r.String(title)
		head.Title, head.System, head.Cwd = r.String(head.Title), r.String(head.System), r.String(head.Cwd)
		head.Note = func() string {
			if len(r.Counts()) == 0 {
				return "perch looked for secrets to take out of this page and found none."
			}
			return "perch took secrets out of this page: " + strings.TrimPrefix(r.Summary(), "redacted ") + "."
		}
	}
	var w io.Writer = env.Stdout
	if *f.out != "" && *f.out != "-" {
		file, err := os.Create(*f.out)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		o.f, w = file, file
	}
	if format == "html" {
		head.Title = title
		o.w = transcript.NewHTMLWriter(w, head)
	} else {
		o.w = transcript.NewWriter(w, format, title, md)
	}
	if o.r != nil {
		o.w = redact.NewWriter(o.w, o.r)
	}
	return o, nil
}

// close closes the output file and says on stderr what was redacted, by
// kind and count (never a secret). err is the export's outcome.
func (o *exportOut) close(err error) error {
	if o.f != nil {
		if cerr := o.f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("export: %w", cerr)
		}
	}
	if o.r != nil {
		fmt.Fprintf(o.env.Stderr, "perch: %s\n", o.r.Summary())
	}
	return err
}

// userName is the user's login name, for redaction.
func userName(env Env) string {
	if env.Getenv == nil {
		return ""
	}
	for _, k := range []string{"USER", "LOGNAME", "USERNAME"} {
		if v := env.Getenv(k); v != "" {
			return v
		}
	}
	return ""
}
