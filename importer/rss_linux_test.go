package importer

import (
	"io"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

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
// 50 MB input and reports its peak resident set (peak-MB, what
// `/usr/bin/time -f %M` shows) against the size of what it prints (out-MB).
func BenchmarkImportRSS(b *testing.B) {
	dir := benchDir(b)
	bin := filepath.Join(b.TempDir(), "perch")
	build := exec.Command("go", "build", "-o", bin, "..")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	for _, g := range gens {
		b.Run(g.name, func(b *testing.B) {
			p := benchInput(b, dir, g)
			b.ResetTimer()
			var peak, out int64
			for b.Loop() {
				var c counter
				cmd := exec.Command(bin, "import", p)
				cmd.Stdout = &c
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
				if rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss; rss > peak {
					peak = rss // KiB on Linux
				}
				out = c.n
			}
			b.ReportMetric(float64(peak)/1024, "peak-MB")
			b.ReportMetric(float64(out)/(1<<20), "out-MB")
			b.ReportMetric(float64(peak)*1024/float64(out), "peak/out")
		})
	}
}
