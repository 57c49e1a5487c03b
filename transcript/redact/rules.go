package redact

import (
	_ "embed"
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// gitleaksTOML is gitleaks' default rule set (config/gitleaks.toml of
// github.com/zricethezav/gitleaks/v8, MIT licensed: gitleaks.LICENSE),
// kept byte for byte as released so that updating it is a copy
// (docs/redaction.md says how). It is read as data: gitleaks' own
// packages would bring a command-line tool's dependencies into perch.
//
//go:embed gitleaks.toml
var gitleaksTOML []byte

// gitleaksFile is the part of gitleaks' configuration perch applies.
type gitleaksFile struct {
	Allowlist gitleaksAllow  `toml:"allowlist"`
	Rules     []gitleaksRule `toml:"rules"`
}

type gitleaksRule struct {
	ID          string          `toml:"id"`
	Regex       string          `toml:"regex"`
	Path        string          `toml:"path"`
	SecretGroup int             `toml:"secretGroup"`
	Entropy     float64         `toml:"entropy"`
	Keywords    []string        `toml:"keywords"`
	Allowlists  []gitleaksAllow `toml:"allowlists"`
}

type gitleaksAllow struct {
	Condition   string   `toml:"condition"`
	RegexTarget string   `toml:"regexTarget"`
	Regexes     []string `toml:"regexes"`
	Paths       []string `toml:"paths"`
	Stopwords   []string `toml:"stopwords"`
}

// rule is one compiled pattern: a gitleaks rule or one of perch's own.
type rule struct {
	id       string
	re       *regexp.Regexp
	group    int     // the submatch that is the secret; 0: the first non-empty one, else the match
	entropy  float64 // the secret's Shannon entropy must exceed it (0: no check)
	digit    bool    // the secret must hold a digit (gitleaks' generic rules)
	keywords []string
	kw       []int32 // the keywords' indices in Redactor.keywords
	allow    []allowlist
	// windowed: the match holds a keyword, shortly after the match's
	// start (see keyed): the rule is run on the text around each keyword
	// only, not on the whole text.
	windowed bool
	// anchored, when set, is the rule's pattern anchored at its start:
	// every match starts with one of the keywords (literalStarts), so it
	// is tried only where they are. wordStart: the pattern starts with \b.
	anchored  *regexp.Regexp
	wordStart bool
}

// anchor sets the rule's anchored form when every match of its pattern
// starts with one of its keywords.
func (r *rule) anchor(src string) {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil || len(r.keywords) == 0 {
		return
	}
	lits, word := literalStarts(re.Simplify())
	if lits == nil {
		return
	}
	for _, l := range lits {
		if !slices.ContainsFunc(r.keywords, func(k string) bool { return strings.HasPrefix(strings.ToLower(l), k) }) {
			return
		}
	}
	r.anchored, r.wordStart = anchoredForm(src), word
}

// anchoredForm is src matching only at the start of the text.
func anchoredForm(src string) *regexp.Regexp {
	return regexp.MustCompile(`^(?:` + src + `)`) // src compiled already
}

// literalStarts lists the literal text each of re's alternatives starts
// with (nil when one starts with anything else), and whether re starts
// with \b.
func literalStarts(re *syntax.Regexp) (lits []string, word bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return []string{strings.ToLower(string(re.Rune))}, false
		}
		return []string{string(re.Rune)}, false
	case syntax.OpCapture:
		return literalStarts(re.Sub[0])
	case syntax.OpConcat:
		subs := re.Sub
		if len(subs) > 0 && subs[0].Op == syntax.OpWordBoundary {
			subs, word = subs[1:], true
		}
		if len(subs) == 0 {
			return nil, false
		}
		lits, _ := literalStarts(subs[0])
		return lits, word
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			l, _ := literalStarts(sub)
			if l == nil {
				return nil, false
			}
			lits = append(lits, l...)
		}
		return lits, false
	}
	return nil, false
}

// keyedPrefix starts gitleaks' rules of a name, an assignment and a value
// ("generic-api-key" and the vendor rules shaped like it): at most 50
// name bytes before the keyword. Go's regexp runs such a pattern slowly
// (every byte may start a match), and they are the rules whose keywords
// ("key", "token", "api") are in nearly every text.
const keyedPrefix = `(?i)[\w.-]{0,50}?(?:`

// allowlist says which findings of a rule are not secrets.
type allowlist struct {
	target    string // "" (the secret), "match" or "line"
	regexes   []*regexp.Regexp
	stopwords []string
}

// loadGitleaks compiles the embedded rule set. Rules that only apply to
// files of a given path are left out (a transcript's texts have none),
// and so are allowlists that only apply to paths.
func loadGitleaks() ([]rule, allowlist, error) {
	var f gitleaksFile
	if err := toml.Unmarshal(gitleaksTOML, &f); err != nil {
		return nil, allowlist{}, fmt.Errorf("read gitleaks rules: %w", err)
	}
	global, ok, err := compileAllow(f.Allowlist)
	if err != nil {
		return nil, allowlist{}, err
	}
	if !ok {
		global = allowlist{}
	}
	var rules []rule
	for _, g := range f.Rules {
		if g.Regex == "" || g.Path != "" {
			continue
		}
		re, err := regexp.Compile(g.Regex)
		if err != nil {
			return nil, allowlist{}, fmt.Errorf("gitleaks rule %s: %w", g.ID, err)
		}
		r := rule{id: g.ID, re: re, group: g.SecretGroup, entropy: g.Entropy, digit: g.Entropy > 0 && strings.HasPrefix(g.ID, "generic"),
			windowed: strings.HasPrefix(g.Regex, keyedPrefix) && len(g.Keywords) > 0}
		for _, k := range g.Keywords {
			r.keywords = append(r.keywords, strings.ToLower(k))
		}
		if r.windowed {
			r.anchored = anchoredForm(g.Regex)
		} else {
			r.anchor(g.Regex)
		}
		for _, a := range g.Allowlists {
			al, ok, err := compileAllow(a)
			if err != nil {
				return nil, allowlist{}, fmt.Errorf("gitleaks rule %s: %w", g.ID, err)
			}
			if ok {
				r.allow = append(r.allow, al)
			}
		}
		rules = append(rules, r)
	}
	return rules, global, nil
}

// compileAllow compiles an allowlist; ok is false for one that can never
// apply to a text without a path (only paths, or paths AND regexes).
func compileAllow(a gitleaksAllow) (allowlist, bool, error) {
	if len(a.Paths) > 0 && (strings.EqualFold(a.Condition, "AND") || len(a.Regexes)+len(a.Stopwords) == 0) {
		return allowlist{}, false, nil
	}
	al := allowlist{target: a.RegexTarget}
	for _, s := range a.Regexes {
		re, err := regexp.Compile(s)
		if err != nil {
			return allowlist{}, false, fmt.Errorf("allowlist: %w", err)
		}
		al.regexes = append(al.regexes, re)
	}
	for _, s := range a.Stopwords {
		al.stopwords = append(al.stopwords, strings.ToLower(s))
	}
	return al, true, nil
}

// allows reports whether the finding (secret within match within line)
// is allowed, as gitleaks reads an allowlist: a regex of the target, or a
// stopword in the secret.
func (a *allowlist) allows(secret, match, line string) bool {
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line
	}
	for _, re := range a.regexes {
		if re.MatchString(target) {
			return true
		}
	}
	lower := strings.ToLower(secret)
	for _, w := range a.stopwords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// perchRules are what the issue asks for beyond gitleaks' set: passwords
// in URLs and connection strings, assignments of high-entropy values to
// names that say key, token, secret or password, private key blocks cut
// before their end (up to a quote, which no key holds: the end of a
// JSON string), and the newer OpenAI and Anthropic key shapes that
// gitleaks' fixed lengths miss.
func perchRules() []rule {
	return []rule{
		{id: "url-password", re: regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]{1,30}://[^\s:/?#@"'<>\x60]+:([^\s/?#@"'<>\x60]+)@`), keywords: []string{"://"}},
		{id: "connection-string-password", re: regexp.MustCompile(`(?i)(?:^|[;&?\s"'{,])(?:password|passwd|pwd)\s*=\s*([^;&\s"'}]+)`), keywords: []string{"password", "passwd", "pwd"}},
		{id: "secret-assignment", windowed: true, re: regexp.MustCompile(secretAssignment), anchored: anchoredForm(secretAssignment),
			entropy: 3, digit: true, keywords: []string{"key", "token", "secret", "pass", "pwd", "credential", "auth"}},
		{id: "private-key", re: regexp.MustCompile(`-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:[^"\x60]*?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|[^"\x60]*)`), keywords: []string{"private key"}},
		{id: "anthropic-api-key", re: regexp.MustCompile(`\bsk-ant-[a-z]+[0-9]{2}-[A-Za-z0-9_-]{20,}`), keywords: []string{"sk-ant-"}},
		{id: "openai-api-key", re: regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}`), keywords: []string{"t3blbkfj"}},
	}
}

// secretAssignment is perch's NAME=VALUE rule, shaped like gitleaks'
// keyed rules (a name part, the keyword, an assignment) so that it runs
// as they do (rule.windowed).
const secretAssignment = `(?i)[a-z0-9_.-]{0,50}?(?:key|token|secret|passw(?:or)?d|pwd|credential|auth)[a-z0-9_.-]{0,20}\\?["']?\s{0,3}(?::=|=|:)\s{0,3}\\?["']?([A-Za-z0-9+/_.~=-]{12,})`

// emailPattern finds e-mail addresses; taking them out is opt-in (an
// address is often the point of a message).
const emailPattern = `[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`

// entropy is the Shannon entropy of s's bytes, in bits.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	var h float64
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
