// Package redact takes secrets out of a session's texts before they are
// shared: well-known credential formats (gitleaks' default rule set,
// embedded as data, with a few rules of perch's own), the user's home
// directory and login name, and, when asked, e-mail addresses. Each
// secret is replaced by a marker that names its kind, never kept.
package redact

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Options say what besides credentials is taken out.
type Options struct {
	// Home is the user's home directory, written as ~ (none when "").
	Home string
	// User is the user's login name, replaced as a whole word (none when
	// "", and never a generic account name such as root).
	User string
	// Emails takes out e-mail addresses too.
	Emails bool
}

// Kinds of what is not a credential rule.
const (
	KindHome  = "home-directory"
	KindUser  = "user-name"
	KindEmail = "email"
)

// Marker is what stands for a secret of kind: plain ASCII without quotes
// or backslashes, so that it can replace text inside a JSON string.
func Marker(kind string) string { return "[REDACTED:" + kind + "]" }

// Redactor takes secrets out of texts and counts them by kind. It is not
// safe for concurrent use.
type Redactor struct {
	rules  []rule
	global allowlist
	home   string
	user   string
	counts map[string]int
}

// genericAccounts are login names that say nothing about a person.
var genericAccounts = []string{"root", "admin", "user", "runner", "ubuntu", "debian"}

// New compiles the rule set (some tens of milliseconds: only commands
// that redact pay it).
func New(o Options) (*Redactor, error) {
	rules, global, err := loadGitleaks()
	if err != nil {
		return nil, err
	}
	rules = append(rules, perchRules()...)
	if o.Emails {
		rules = append(rules, rule{id: KindEmail, re: regexp.MustCompile(emailPattern), keywords: []string{"@"}})
	}
	r := &Redactor{rules: rules, global: global, counts: map[string]int{}}
	if h := strings.TrimRight(o.Home, "/"); len(h) > 1 {
		r.home = h
	}
	if u := o.User; len(u) >= 2 && !slices.Contains(genericAccounts, strings.ToLower(u)) {
		r.user = u
	}
	return r, nil
}

// span is a secret found in a text: [start, end) and its kind.
type span struct {
	start, end int
	kind       string
}

// String returns s with every secret replaced by its marker.
func (r *Redactor) String(s string) string {
	if s == "" {
		return s
	}
	spans := r.find(s)
	if len(spans) > 0 {
		var b strings.Builder
		b.Grow(len(s))
		at := 0
		for _, sp := range spans {
			b.WriteString(s[at:sp.start])
			b.WriteString(Marker(sp.kind))
			r.counts[sp.kind]++
			at = sp.end
		}
		b.WriteString(s[at:])
		s = b.String()
	}
	if r.home != "" {
		s = r.replaceWord(s, r.home, "~", KindHome, false)
	}
	if r.user != "" {
		s = r.replaceWord(s, r.user, "[user]", KindUser, true)
	}
	return s
}

// JSON returns raw (a JSON value) with its secrets replaced. ok is false
// when the result is no longer JSON (a rule's match took part of the
// syntax): the caller then keeps it as text.
func (r *Redactor) JSON(raw json.RawMessage) (out json.RawMessage, ok bool) {
	if len(raw) == 0 {
		return raw, true
	}
	s := r.String(string(raw))
	if s == string(raw) {
		return raw, true
	}
	return json.RawMessage(s), json.Valid([]byte(s))
}

// find lists the secrets of s, in order, overlapping ones merged.
func (r *Redactor) find(s string) []span {
	var lower string
	var spans []span
	for i := range r.rules {
		ru := &r.rules[i]
		if len(ru.keywords) > 0 {
			if lower == "" {
				lower = strings.ToLower(s)
			}
			if !containsAny(lower, ru.keywords) {
				continue
			}
		}
		for _, m := range ru.re.FindAllStringSubmatchIndex(s, -1) {
			start, end := secretOf(ru, m)
			if start < 0 || start == end {
				continue
			}
			secret := s[start:end]
			if ru.entropy > 0 && entropy(secret) <= ru.entropy {
				continue
			}
			if ru.digit && !strings.ContainsAny(secret, "0123456789") {
				continue
			}
			if r.allowed(ru, s, secret, m[0], m[1]) {
				continue
			}
			spans = append(spans, span{start, end, ru.id})
		}
	}
	if len(spans) < 2 {
		return spans
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].start != spans[j].start {
			return spans[i].start < spans[j].start
		}
		return spans[i].end > spans[j].end
	})
	merged := spans[:1]
	for _, sp := range spans[1:] {
		last := &merged[len(merged)-1]
		if sp.start < last.end {
			last.end = max(last.end, sp.end)
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// secretOf is where a match's secret is: the rule's group, else the
// first group that matched, else the whole match (gitleaks' reading).
func secretOf(ru *rule, m []int) (int, int) {
	if ru.group > 0 && 2*ru.group+1 < len(m) {
		return m[2*ru.group], m[2*ru.group+1]
	}
	for g := 1; 2*g+1 < len(m); g++ {
		if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
			return m[2*g], m[2*g+1]
		}
	}
	return m[0], m[1]
}

// allowed reports whether the global allowlist or one of the rule's says
// the finding is not a secret.
func (r *Redactor) allowed(ru *rule, s, secret string, mStart, mEnd int) bool {
	match := s[mStart:mEnd]
	lineStart := strings.LastIndexByte(s[:mStart], '\n') + 1
	lineEnd := len(s)
	if i := strings.IndexByte(s[mEnd:], '\n'); i >= 0 {
		lineEnd = mEnd + i
	}
	line := s[lineStart:lineEnd]
	if r.global.allows(secret, match, line) {
		return true
	}
	for i := range ru.allow {
		if ru.allow[i].allows(secret, match, line) {
			return true
		}
	}
	return false
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// nameByte reports whether c goes on a name, so that /home/al is not
// replaced inside /home/alice (a dot ends it: "in /home/alice." is the
// directory).
func nameByte(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// replaceWord replaces each occurrence of word in s that does not go on
// into a longer name (nor, with before, start inside one).
func (r *Redactor) replaceWord(s, word, with, kind string, before bool) string {
	var b strings.Builder
	at, n := 0, 0
	for from := 0; ; {
		i := strings.Index(s[from:], word)
		if i < 0 {
			break
		}
		i += from
		j := i + len(word)
		from = j
		if j < len(s) && nameByte(s[j]) || before && i > 0 && nameByte(s[i-1]) {
			continue
		}
		b.WriteString(s[at:i])
		b.WriteString(with)
		at = j
		n++
	}
	if n == 0 {
		return s
	}
	b.WriteString(s[at:])
	r.counts[kind] += n
	return b.String()
}

// Count is how many secrets of a kind were taken out.
type Count struct {
	Kind string
	N    int
}

// Counts lists what was taken out so far, by kind, most first.
func (r *Redactor) Counts() []Count {
	out := make([]Count, 0, len(r.counts))
	for k, n := range r.counts {
		out = append(out, Count{k, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].N != out[j].N {
			return out[i].N > out[j].N
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

// Summary says what was taken out, by kind and count ("redacted 2
// aws-access-token, 1 home-directory"), or that nothing was. It never
// holds a secret.
func (r *Redactor) Summary() string {
	c := r.Counts()
	if len(c) == 0 {
		return "redaction: nothing found to take out"
	}
	parts := make([]string, len(c))
	for i, k := range c {
		parts[i] = fmt.Sprintf("%d %s", k.N, k.Kind)
	}
	return "redacted " + strings.Join(parts, ", ")
}
