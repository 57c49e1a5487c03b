package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/perch-tui/perch/sse"
)

// Reason is the part of a connection error a person acts on: the
// server's answer (its status and message), or the network's ("connection
// refused", "no such host", "i/o timeout"). The method and URL an error
// starts with took the whole status bar before (`dial tcp loca…`); the
// URL is the one perch was given, and the full error is shown where there
// is room (the empty transcript, the empty task list).
func Reason(err error) string {
	var se *sse.StatusError
	var he *HTTPError
	var dns *net.DNSError
	switch {
	case errors.As(err, &se):
		return statusReason(se.Status, se.Message)
	case errors.As(err, &he):
		return statusReason(he.Status, he.Message)
	case errors.As(err, &dns):
		return dns.Err + " (" + dns.Name + ")"
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	}
	// The innermost cause: "GET …: dial tcp …: connect: connection
	// refused (hint)" → "connection refused", "GET …: unexpected EOF
	// (hint)" → "unexpected EOF". An error that wraps nothing is its own
	// cause, its URLs shortened.
	inner := err
	for u := errors.Unwrap(inner); u != nil; u = errors.Unwrap(u) {
		inner = u
	}
	return ShortenURLs(inner.Error())
}

func statusReason(status int, msg string) string {
	s := strconv.Itoa(status)
	if t := http.StatusText(status); t != "" {
		s += " " + t
	}
	if msg != "" {
		s += ": " + msg
	}
	return s
}

// ShortenURLs replaces each http(s) URL in an error text by its host, with
// "/…" when it had a path: "GET http://localhost:8090/v1/tasks/x/stream:
// dial …" becomes "GET localhost:8090/…: dial …", which leaves room for
// what went wrong.
func ShortenURLs(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		start := i
		for start > 0 && isSchemeByte(s[start-1]) {
			start--
		}
		scheme := s[start:i]
		if scheme != "http" && scheme != "https" {
			b.WriteString(s[:i+3])
			s = s[i+3:]
			continue
		}
		end := i + 3
		for end < len(s) && !strings.ContainsRune(" \t\n\"'()<>,", rune(s[end])) {
			end++
		}
		u := strings.TrimRight(s[i+3:end], ":.;")
		end = i + 3 + len(u)
		host, path, _ := strings.Cut(u, "/")
		host, _, _ = strings.Cut(host, "?")
		b.WriteString(s[:start])
		b.WriteString(host)
		if path != "" {
			b.WriteString("/…")
		}
		s = s[end:]
	}
}

func isSchemeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}
