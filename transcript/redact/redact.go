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
	// The rules' keywords, and for each pair of bytes the keywords that
	// start with it: one pass over a text finds all that it holds.
	keywords []string
	byPair   *[1 << 16][]int32
	present  []bool // scratch: the keywords of the text at hand
	home     string
	user     string
	counts   map[string]int
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
	r := &Redactor{rules: rules, global: global, counts: map[string]int{}, byPair: new([1 << 16][]int32)}
	index := map[string]int32{}
	for i := range r.rules {
		for _, k := range r.rules[i].keywords {
			n, ok := index[k]
			if !ok {
				n = int32(len(r.keywords))
				index[k] = n
				r.keywords = append(r.keywords, k)
				p := pair(k)
				r.byPair[p] = append(r.byPair[p], n)
			}
			r.rules[i].kw = append(r.rules[i].kw, n)
		}
	}
	r.present = make([]bool, len(r.keywords))
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
	var spans []span
	add := func(ru *rule, m []int) {
		start, end := secretOf(ru, m)
		if start < 0 || start == end {
			return
		}
		secret := s[start:end]
		if ru.entropy > 0 && entropy(secret) <= ru.entropy {
			return
		}
		if ru.digit && !strings.ContainsAny(secret, "0123456789") {
			return
		}
		if r.allowed(ru, s, secret, m[0], m[1]) {
			return
		}
		spans = append(spans, span{start, end, ru.id})
	}
	lower := asciiLower(s)
	r.findKeywords(lower)
	for i := range r.rules {
		ru := &r.rules[i]
		if len(ru.kw) > 0 && !r.anyPresent(ru.kw) {
			continue
		}
		if ru.windowed {
			if ms, ok := keyedMatches(ru, s, lower); ok {
				for _, m := range ms {
					add(ru, m)
				}
				continue
			}
		} else if ru.anchored != nil {
			for _, m := range anchoredMatches(ru, s, lower) {
				add(ru, m)
			}
			continue
		}
		for _, m := range ru.re.FindAllStringSubmatchIndex(s, -1) {
			add(ru, m)
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

// Around a keyword, a windowed rule's match starts at most windowBefore
// bytes before it (its name part takes 50 at most) and (nearly always)
// ends within windowAfter bytes after it.
const (
	windowBefore = 50
	windowAfter  = 256
)

// assigns reports whether text (after a keyword) can go on as a windowed
// rule's name does: at most assignAfter bytes of name characters,
// blanks, quotes and backslashes (gitleaks' [ \t\w.-]{0,20}[\s'"]{0,3},
// perch's [a-z0-9_.-]{0,20}\\?["']?\s{0,3}), then an assignment
// operator. Every other byte, an operator among them, ends that run, so
// the operator must be the byte that ends it.
func assigns(text string) bool {
	for i := 0; i < len(text) && i <= assignAfter; i++ {
		c := text[i]
		switch {
		case nameByte(c) || c == '.' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\'' || c == '"' || c == '\\':
			continue
		case strings.IndexByte("=:>|?,", c) >= 0:
			return true
		}
		return false
	}
	return false
}

// assignAfter bounds the name characters between a keyword and its
// assignment: gitleaks' 20 and 3, and slack for a keyword shorter than
// the name its rule's pattern spells.
const assignAfter = 36

// keywordsAt lists where the rule's keywords occur in lower, in order,
// each with the keyword's length.
func keywordsAt(ru *rule, lower string) [][2]int {
	var at [][2]int
	for _, k := range ru.keywords {
		for from := 0; ; {
			i := strings.Index(lower[from:], k)
			if i < 0 {
				break
			}
			at = append(at, [2]int{from + i, len(k)})
			from += i + 1
		}
	}
	sort.Slice(at, func(i, j int) bool { return at[i][0] < at[j][0] })
	return at
}

// keyedMatches runs a windowed rule where its matches can be: at each
// keyword that an assignment follows, from the start of the name around
// it (the leftmost start a match can have: the pattern's name part takes
// any name bytes, lazily), anchored there and within windowAfter bytes
// after the keyword. ok is false when a match reaches the end of its
// window, where it may have been cut: the caller then runs the rule on
// the whole text.
func keyedMatches(ru *rule, s, lower string) (ms [][]int, ok bool) {
	end := 0 // where the last match ended: matches do not overlap
	for _, at := range keywordsAt(ru, lower) {
		i, after := at[0], at[0]+at[1]
		if !assigns(lower[after:]) {
			continue
		}
		p := i
		for p > 0 && i-p < windowBefore && (nameByte(s[p-1]) || s[p-1] == '.') {
			p--
		}
		if p < end {
			continue
		}
		stop := min(len(s), after+windowAfter)
		m := ru.anchored.FindStringSubmatchIndex(s[p:stop])
		if m == nil {
			continue
		}
		if stop < len(s) && p+m[1] >= stop {
			return nil, false
		}
		ms = append(ms, shift(m, p))
		end = m[1] // shifted already
	}
	return ms, true
}

// anchoredMatches runs an anchored rule at each place one of its
// keywords starts, as its every match does.
func anchoredMatches(ru *rule, s, lower string) [][]int {
	var ms [][]int
	end := 0 // where the last match ended: matches do not overlap
	for _, at := range keywordsAt(ru, lower) {
		i := at[0]
		if i < end || ru.wordStart && i > 0 && wordByte(s[i-1]) {
			continue
		}
		if m := ru.anchored.FindStringSubmatchIndex(s[i:]); m != nil {
			ms = append(ms, shift(m, i))
			end = m[1] // shifted already
		}
	}
	return ms
}

// shift moves a match found in s[by:] to its place in s.
func shift(m []int, by int) []int {
	for j := range m {
		if m[j] >= 0 {
			m[j] += by
		}
	}
	return m
}

// asciiLower is s with ASCII letters in lower case, byte for byte (so
// that offsets in it are offsets in s): the rules' keywords are ASCII.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// pair is the index of a keyword's first two bytes (keywords have two
// at least; a one-byte one pairs with a zero byte).
func pair(k string) uint16 {
	if len(k) < 2 {
		return uint16(k[0]) << 8
	}
	return uint16(k[0])<<8 | uint16(k[1])
}

// findKeywords sets present to the keywords that lower holds.
func (r *Redactor) findKeywords(lower string) {
	clear(r.present)
	for i := 0; i < len(lower); i++ {
		one := uint16(lower[i]) << 8
		r.mark(lower[i:], r.byPair[one])
		if i+1 < len(lower) {
			r.mark(lower[i:], r.byPair[one|uint16(lower[i+1])])
		}
	}
}

// mark sets present to the keywords of ks that start text.
func (r *Redactor) mark(text string, ks []int32) {
	for _, k := range ks {
		if !r.present[k] && strings.HasPrefix(text, r.keywords[k]) {
			r.present[k] = true
		}
	}
}

func (r *Redactor) anyPresent(kw []int32) bool {
	for _, k := range kw {
		if r.present[k] {
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

// wordByte is \w: what \b tells apart.
func wordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
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
		return "redaction found nothing to take out"
	}
	parts := make([]string, len(c))
	for i, k := range c {
		parts[i] = fmt.Sprintf("%d %s", k.N, k.Kind)
	}
	return "redacted " + strings.Join(parts, ", ")
}
