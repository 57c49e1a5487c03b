package registry

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perch-tui/perch/internal/gentranscript"
)

// rssProbe makes the test binary the RSS probe of BenchmarkImportRSS
// (TestMain calls it first): with PERCH_RSS_PROBE set it runs that command and prints the child's peak
// resident set (KiB) on stderr. The hop is needed because on Linux a child
// exec'd from a large process inherits that process's high-water mark
// (ru_maxrss survives exec), so measured from the benchmark itself every
// import would peak at the benchmark's own size.
func rssProbe() {
	if probe := os.Getenv("PERCH_RSS_PROBE"); probe != "" {
		args := strings.Split(probe, "\x1f")
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Stdout = os.Stdout
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "probe:", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "maxrss=%d\n", cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)
		os.Exit(0)
	}
}

// peakRSS runs bin with args through the probe and returns its output's
// size and its peak resident set in KiB.
func peakRSS(bin string, args ...string) (out int64, kib int64, err error) {
	var c counter
	var stderr bytes.Buffer
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "PERCH_RSS_PROBE="+strings.Join(append([]string{bin}, args...), "\x1f"))
	cmd.Stdout = &c
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("%v: %s", err, stderr.Bytes())
	}
	_, v, ok := strings.Cut(strings.TrimSpace(stderr.String()), "maxrss=")
	if !ok {
		return 0, 0, fmt.Errorf("no maxrss in %q", stderr.Bytes())
	}
	kib, err = strconv.ParseInt(v, 10, 64)
	return c.n, kib, err
}

// cpuTime is the processor time this process has used, all threads.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// counter counts bytes written.
type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*counter)(nil)

// BenchmarkImportRSS runs the built binary, `perch import FILE`, on each
// 50 MB input (PERCH_BENCH_MB sets another size) and reports its peak resident set (peak-MB, what
// `/usr/bin/time -f %M` shows) against the size of what it prints (out-MB).
func BenchmarkImportRSS(b *testing.B) {
	dir := benchDir(b)
	bin := filepath.Join(b.TempDir(), "perch")
	build := exec.Command("go", "build", "-o", bin, "../..")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	for _, g := range gentranscript.All() {
		b.Run(g.Name, func(b *testing.B) {
			p := benchInput(b, dir, g)
			b.ResetTimer()
			var peak, out int64
			for b.Loop() {
				n, rss, err := peakRSS(bin, "import", p)
				if err != nil {
					b.Fatal(err)
				}
				peak, out = max(peak, rss), n
			}
			b.ReportMetric(float64(peak)/1024, "peak-MB")
			b.ReportMetric(float64(out)/(1<<20), "out-MB")
			b.ReportMetric(float64(peak)*1024/float64(out), "peak/out")
		})
	}
}
