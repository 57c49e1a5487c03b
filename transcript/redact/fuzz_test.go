package redact

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/perch-tui/perch/transcript/redact/redacttest"
)

// FuzzRedact: any text is redacted without a panic, a seeded secret put
// into it is gone, and JSON that goes in either stays JSON or is said not
// to; and running the rules only where their matches can start finds
// what running them on the whole text finds.
func FuzzRedact(f *testing.F) {
	for _, s := range redacttest.Secrets() {
		f.Add(s.Text, 0)
	}
	f.Add("password=\"hunter2hunter2\" -----BEGIN PRIVATE KEY-----", 3)
	f.Add("\xff\xfe key: \u202e", 1)
	r, err := New(Options{Home: redacttest.Home, User: redacttest.User, Emails: true})
	if err != nil {
		f.Fatal(err)
	}
	secret := redacttest.Secrets()[1] // a GitHub token: found in any context
	fast, err := New(Options{Emails: true})
	if err != nil {
		f.Fatal(err)
	}
	slow := naive(f)
	f.Fuzz(func(t *testing.T, text string, at int) {
		_ = r.String(text)
		if got, want := fast.find(text), slow.find(text); !reflect.DeepEqual(got, want) {
			t.Errorf("rules run where matches start find %v, on the whole text %v", got, want)
		}
		at = min(max(at, 0), len(text))
		with := text[:at] + " " + secret.Text + " " + text[at:]
		if got := r.String(with); strings.Contains(got, secret.Secret) {
			t.Errorf("the token is left in %q", got)
		}
		raw, _ := json.Marshal(map[string]string{"k": text})
		if out, ok := r.JSON(raw); ok != json.Valid(out) {
			t.Errorf("JSON says ok=%v for %s", ok, out)
		}
	})
}
