package board

import (
	"net/url"
	"strings"
)

// SourceLabel is how a row names its source in a few cells: the name the
// config gave it, or, for a source named by its URL (a --url), the URL's
// host and port. Every source of one machine then reads apart
// ("127.0.0.1:8090", "127.0.0.1:8091"), never "http://127.0.0.…" for all.
func SourceLabel(name string) string {
	if !strings.Contains(name, "://") {
		return name
	}
	u, err := url.Parse(strings.TrimSpace(name))
	if err != nil || u.Host == "" {
		return name
	}
	return u.Host
}
