package redact

import (
	"strings"
	"testing"

	"github.com/perch-tui/perch/transcript/redact/redacttest"
)

func newTest(t testing.TB, emails bool) *Redactor {
	t.Helper()
	r, err := New(Options{Home: redacttest.Home, User: redacttest.User, Emails: emails})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSeededSecrets: every seeded credential format is taken out, alone,
// in a line of other words, and inside a JSON string.
func TestSeededSecrets(t *testing.T) {
	r := newTest(t, false)
	for _, s := range redacttest.Secrets() {
		// Alone, among other words, and twice in a row (every match of
		// a text is found, not the first only).
		for _, text := range []string{s.Text, "before " + s.Text + " after\nnext line", "a long way before " + s.Text + "\n" + s.Text, "a long way before " + s.Text + "', '" + s.Text} {
			got := r.String(text)
			if strings.Contains(got, s.Secret) {
				t.Errorf("%s: left in %q", s.Name, got)
			}
		}
	}
	if c := r.Counts(); len(c) < 10 {
		t.Errorf("counts by kind: %v", c)
	}
	if sum := r.Summary(); strings.Contains(sum, "Tr0ub") || !strings.HasPrefix(sum, "redacted ") {
		t.Errorf("summary %q", sum)
	}
}

// TestJSONStaysJSON: secrets inside JSON arguments are replaced and the
// arguments still parse.
func TestJSONStaysJSON(t *testing.T) {
	r := newTest(t, false)
	for _, s := range redacttest.Secrets() {
		raw, _ := jsonString(s.Text)
		got, ok := r.JSON([]byte(`{"command":` + raw + `,"description":` + raw + `}`))
		if !ok {
			t.Errorf("%s: no longer JSON: %s", s.Name, got)
		}
		if strings.Contains(string(got), s.Secret) {
			t.Errorf("%s: left in %s", s.Name, got)
		}
	}
}

// TestKeepsOrdinaryText: words, paths, hashes and placeholders that are no
// secret stay as they are.
func TestKeepsOrdinaryText(t *testing.T) {
	r := newTest(t, false)
	for _, s := range []string{
		"The key to this bug is the token bucket in limiter.go.",
		"git checkout 3f2b9c1d4e5f67890abcdef1234567890abcdef1",
		"password=$DB_PASSWORD and token: ${TOKEN}",
		"/home/zoltanqx/other is someone else's",
		"zoltanqx is not the user",
		"func (k *Key) Token() string { return k.tokenizer.Name() }",
		"write a@b.co to the list",
		"root owns /etc",
	} {
		if got := r.String(s); got != s {
			t.Errorf("%q became %q", s, got)
		}
	}
	if c := r.Counts(); len(c) != 0 {
		t.Errorf("counted %v", c)
	}
}

// TestEmailsOptIn: addresses stay unless asked for.
func TestEmailsOptIn(t *testing.T) {
	const text = "mail jane.doe@example.org today"
	if got := newTest(t, false).String(text); got != text {
		t.Errorf("without the option: %q", got)
	}
	if got := newTest(t, true).String(text); strings.Contains(got, "jane.doe") || !strings.Contains(got, Marker(KindEmail)) {
		t.Errorf("with it: %q", got)
	}
}

// TestHomeAndUser: the home directory becomes ~, the user name a marker,
// each counted.
func TestHomeAndUser(t *testing.T) {
	r := newTest(t, false)
	got := r.String("cd /home/zoltanq/src && whoami # zoltanq")
	if want := "cd ~/src && whoami # [user]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if sum := r.Summary(); sum != "redacted 1 home-directory, 1 user-name" {
		t.Errorf("summary %q", sum)
	}
}

func jsonString(s string) (string, error) {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String(), nil
}
