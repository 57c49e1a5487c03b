package client

import (
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
