package client

import (
	"errors"
	"fmt"
	"net/http"
)

// HTTPError is a server's answer with a status that is not a success
// (4xx, 5xx): the server was reached and said no. Consumers tell it from
// a server that could not be reached (perch send keeps a message for an
// unreachable one and says so for a refusal). A backend's own error type
// may carry more (maria's APIError) and still match it with errors.As.
type HTTPError struct {
	// Status is the HTTP status code.
	Status int
	// Message is what the server said, one line (or an excerpt of its
	// body), "" for nothing.
	Message string
	// URL is the request's URL; it never carries a token.
	URL string
}

func (e *HTTPError) Error() string {
	status := http.StatusText(e.Status)
	if status == "" {
		status = "status"
	}
	s := fmt.Sprintf("%s: %d %s", e.URL, e.Status, status)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// SendClass is what a Send error says became of the message, when the
// backend knows (see Backend.Send). perch's outbox acts on it: a retryable
// message is held and tried again, a permanent one is marked failed.
type SendClass int

const (
	// SendUnknown: the message may have arrived (the request went out and
	// no answer came back); the outbox asks the session's replay before
	// any resend.
	SendUnknown SendClass = iota
	// SendRetryable: the message certainly did not arrive, and a later try
	// may work (the server could not be reached).
	SendRetryable
	// SendPermanent: the message did not arrive and never will (the
	// session is gone, the server refused it).
	SendPermanent
)

type sendError struct {
	err   error
	class SendClass
}

func (e *sendError) Error() string { return e.err.Error() }
func (e *sendError) Unwrap() error { return e.err }

// Retryable marks a Send error after which the message certainly did not
// arrive and a later try may work.
func Retryable(err error) error {
	if err == nil {
		return nil
	}
	return &sendError{err, SendRetryable}
}

// Permanent marks a Send error after which the message did not arrive and
// never will (the session is gone, the request is refused).
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &sendError{err, SendPermanent}
}

// ClassOf is the class Retryable or Permanent gave err (anywhere in its
// chain), SendUnknown for an error marked neither.
func ClassOf(err error) SendClass {
	var e *sendError
	if errors.As(err, &e) {
		return e.class
	}
	return SendUnknown
}
