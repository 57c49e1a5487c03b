package client

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// HTTPClient is the client a backend that does not build its own makes
// its requests with: Client (nil: a default one) with Header added to
// every request to the server's host (never to a redirect's other host).
// It is nil when Config asks for neither, so the backend keeps its own
// default.
func (c Config) HTTPClient() *http.Client {
	if len(c.Header) == 0 {
		return c.Client
	}
	u, err := url.Parse(strings.TrimSpace(c.URL))
	if err != nil {
		return c.Client // the backend's own check of the URL says what is wrong
	}
	hc := &http.Client{}
	if c.Client != nil {
		*hc = *c.Client
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = &headerTransport{base: base, header: c.Header.Clone(), host: u.Host}
	return hc
}

// headerTransport adds Config.Header to every request to the server's host.
type headerTransport struct {
	base   http.RoundTripper
	header http.Header
	host   string
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == t.host {
		req = req.Clone(req.Context())
		for k, vs := range t.header {
			req.Header[k] = append([]string(nil), vs...)
		}
	}
	return t.base.RoundTrip(req)
}

// ParseHeader splits a --header flag "Name: value" for Config.Header.
// Errors never quote the input: a mistyped flag is likely to contain a
// secret.
func ParseHeader(s string) (name, value string, err error) {
	i := strings.IndexByte(s, ':')
	if i < 0 {
		return "", "", errors.New(`invalid --header: want "Name: value" (no ':' found)`)
	}
	name = strings.TrimSpace(s[:i])
	value = strings.TrimSpace(s[i+1:])
	if name == "" {
		return "", "", errors.New(`invalid --header: want "Name: value" (empty name)`)
	}
	for j := 0; j < len(name); j++ {
		if !isTokenChar(name[j]) {
			return "", "", fmt.Errorf(`invalid --header: the name has a character not allowed in a header name (at byte %d); want "Name: value"`, j+1)
		}
	}
	for j := 0; j < len(value); j++ {
		if b := value[j]; (b < 0x20 && b != '\t') || b == 0x7f {
			return "", "", fmt.Errorf("invalid --header %s: the value contains a control character", name)
		}
	}
	return name, value, nil
}

// isTokenChar reports whether b may appear in an HTTP header name (RFC 9110
// tchar).
func isTokenChar(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}

// Endpoint joins path segments onto a base URL (without a trailing slash),
// escaping each segment, so that a session id can never step into another
// route.
func Endpoint(base string, segs ...string) string {
	var b strings.Builder
	b.WriteString(base)
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}
