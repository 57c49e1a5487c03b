package maria

import (
	"errors"
	"net"
	"net/http"

	"github.com/perch-tui/perch/client"
)

// Classify marks an error of the daemon client for the outbox: a connection that never
// opened, 502/503 (the daemon or a proxy turned it away), 408 and 429 are
// retryable; other 4xx (404: the task is gone or its directory was
// removed; 400; 409) are permanent; anything else (a timeout or a broken
// connection after the request went out, 500) leaves the outcome unknown.
func Classify(err error) error {
	var ae *APIError
	if errors.As(err, &ae) {
		switch {
		case ae.Status == http.StatusRequestTimeout, ae.Status == http.StatusTooManyRequests,
			ae.Status == http.StatusBadGateway, ae.Status == http.StatusServiceUnavailable:
			return client.Retryable(err)
		case ae.Status >= 400 && ae.Status < 500:
			return client.Permanent(err)
		}
		return err
	}
	var oe *net.OpError
	var dnsErr *net.DNSError
	if errors.As(err, &oe) && oe.Op == "dial" || errors.As(err, &dnsErr) {
		return client.Retryable(err)
	}
	return err
}
