package registry

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind (the probes of a
// URL must all return), after letting the binary serve as the RSS probe of
// BenchmarkImportRSS.
func TestMain(m *testing.M) {
	rssProbe()
	goleak.VerifyTestMain(m)
}
