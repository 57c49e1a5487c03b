package sse

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// redacted replaces a token's value wherever this package shows a URL.
const redacted = "REDACTED"

// redaction is a URL as this package shows it, with the secrets it held:
// the values of its "token" query parameter (Suna's stream accepts its JWT
// there), in their escaped and unescaped forms.
type redaction struct {
	url     string
	secrets []string
}

// redact hides the token parameter of u (and a userinfo password). It works
// on the raw query, so the rest of the URL reads as it was given.
func redact(u string) redaction {
	r := redaction{url: u}
	base, query, hasQuery := strings.Cut(u, "?")
	frag := ""
	if hasQuery {
		query, frag, _ = strings.Cut(query, "#")
	}
	if pu, err := url.Parse(base); err == nil && pu.User != nil {
		if p, ok := pu.User.Password(); ok && p != "" {
			r.secrets = append(r.secrets, p)
			base = pu.Redacted()
		}
	}
	if !hasQuery {
		r.url = base
		return r
	}
	parts := strings.Split(query, "&")
	for i, p := range parts {
		k, v, _ := strings.Cut(p, "=")
		if uk, err := url.QueryUnescape(k); err != nil || uk != "token" {
			continue
		}
		parts[i] = k + "=" + redacted
		if v == "" {
			continue
		}
		r.secrets = append(r.secrets, v)
		if uv, err := url.QueryUnescape(v); err == nil && uv != v && uv != "" {
			r.secrets = append(r.secrets, uv)
		}
	}
	r.url = base + "?" + strings.Join(parts, "&")
	if frag != "" {
		r.url += "#" + frag
	}
	return r
}

// scrubString replaces every secret in s.
func (r redaction) scrubString(s string) string {
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, sec, redacted)
	}
	return s
}

// scrub makes sure err's text holds no secret: an error that names the URL
// in its own way (a parse error quoting it) is wrapped so that its text is
// scrubbed, while errors.Is and errors.As still see it.
func (r redaction) scrub(err error) error {
	if err == nil || len(r.secrets) == 0 {
		return err
	}
	if s := err.Error(); r.scrubString(s) != s {
		return &scrubbedError{msg: r.scrubString(s), err: err}
	}
	return err
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// streamError gives a stream failure the URL and a hint, unless it already
// is a *StatusError (which names both), and hides the token.
func streamError(u redaction, server string, err error) error {
	var se *StatusError
	if errors.As(err, &se) {
		return u.scrub(err)
	}
	if errors.Is(err, context.Canceled) {
		return u.scrub(fmt.Errorf("GET %s: %w", u.url, err))
	}
	// *url.Error repeats the method and URL (unredacted); keep its cause.
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		err = ue.Err
	}
	return u.scrub(fmt.Errorf("GET %s: %w (%s)", u.url, err, hint(err, server)))
}

// hint says what to try after a connection failed.
func hint(err error, server string) string {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var netErr net.Error
	switch {
	case errors.Is(err, errEventTooLarge):
		return server + " sent an event larger than perch accepts"
	case isCertError(err):
		return "the server's TLS certificate is not trusted"
	case errors.As(err, &dnsErr):
		return "check the host name; set --url or PERCH_URL"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return server + " did not answer in time; is it running and responsive? set --url or PERCH_URL"
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return "is " + server + " running there? set --url or PERCH_URL"
	}
	return "the connection broke; is " + server + " running there? set --url or PERCH_URL"
}

func isCertError(err error) bool {
	// The x509 error types vary (unknown authority, hostname, invalid);
	// matching on the package prefix of the message covers all of them.
	return err != nil && (strings.Contains(err.Error(), "x509:") ||
		strings.Contains(err.Error(), "tls: failed to verify certificate"))
}

// serverMessage finds the message in a refusal's body, in the shapes the
// servers perch follows use: {"error":{"message"}}, {"error":"text"},
// {"message"}, {"detail":"text"} (FastAPI), a JSON string, or plain text
// (quoted in part).
func serverMessage(body []byte) string {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return ""
	}
	switch trimmed[0] {
	case '{':
		var w struct {
			Error   json.RawMessage `json:"error"`
			Message string          `json:"message"`
			Detail  json.RawMessage `json:"detail"`
		}
		if json.Unmarshal(trimmed, &w) == nil {
			var inner struct {
				Message string `json:"message"`
			}
			var str string
			switch {
			case len(w.Error) > 0 && json.Unmarshal(w.Error, &inner) == nil && inner.Message != "":
				return oneLine(inner.Message)
			case len(w.Error) > 0 && json.Unmarshal(w.Error, &str) == nil && str != "":
				return oneLine(str)
			case w.Message != "":
				return oneLine(w.Message)
			case len(w.Detail) > 0 && json.Unmarshal(w.Detail, &str) == nil && str != "":
				return oneLine(str)
			}
		}
	case '"':
		var str string
		if json.Unmarshal(trimmed, &str) == nil {
			return oneLine(str)
		}
	}
	return excerpt(trimmed)
}

// excerpt makes a short one-line quote of a body for an error message.
func excerpt(b []byte) string {
	s := string(b)
	if len(s) > errorBodyExcerpt {
		s = strings.ToValidUTF8(s[:errorBodyExcerpt], "")
		return oneLine(s) + fmt.Sprintf("… (%d bytes)", len(b))
	}
	return oneLine(strings.ToValidUTF8(s, "\uFFFD"))
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
