package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// daemon is a running `perch fake-daemon --long-session N`.
type daemon struct {
	cmd    *exec.Cmd
	url    string
	task   string
	events int
	bytes  int64
	last   string // id of the final event
	n      int
}

var bannerRE = regexp.MustCompile(`listening on (http://\S+/v1) \(long-session task ([0-9a-f-]{36}); (\d+) events, (\d+) bytes, last event (\S+)\)`)

// parseBanner reads the fake daemon's one-line banner.
func parseBanner(line string) (url, task string, events int, bytes int64, last string, err error) {
	m := bannerRE.FindStringSubmatch(line)
	if m == nil {
		return "", "", 0, 0, "", fmt.Errorf("unexpected banner %q", line)
	}
	events, _ = strconv.Atoi(m[3])
	bytes, _ = strconv.ParseInt(m[4], 10, 64)
	return m[1], m[2], events, bytes, m[5], nil
}

func (h *harness) startDaemon(n int, extra ...string) (*daemon, error) {
	args := append([]string{"fake-daemon", "--addr", "127.0.0.1:0", "--dialect", h.dialect, "--long-session", strconv.Itoa(n)}, extra...)
	cmd := exec.Command(h.server, args...)
	logf, err := os.Create(filepath.Join(h.tmp, fmt.Sprintf("daemon-%d.log", n)))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := h.start(cmd); err != nil {
		return nil, fmt.Errorf("start the fake daemon: %w", err)
	}
	d := &daemon{cmd: cmd, n: n}
	lines := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		lines <- l
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case l := <-lines:
		if d.url, d.task, d.events, d.bytes, d.last, err = parseBanner(l); err != nil {
			h.stop(cmd)
			b, _ := os.ReadFile(logf.Name())
			return nil, fmt.Errorf("fake daemon: %w; its stderr: %s", err, bytes.TrimSpace(b))
		}
	case <-time.After(h.loadTimeout):
		h.stop(cmd)
		return nil, fmt.Errorf("the fake daemon printed no banner within %v", h.loadTimeout)
	}
	if d.events != n {
		h.stop(cmd)
		return nil, fmt.Errorf("the fake daemon made %d events, not %d", d.events, n)
	}
	return d, nil
}

func (h *harness) stopDaemon(d *daemon) {
	if d != nil {
		h.stop(d.cmd)
	}
}

// curlStream times `curl -sN` reading the whole replay: the stream stays
// open, so it ends when the bytes of the final event have arrived.
func (h *harness) curlStream(d *daemon) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), h.loadTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "curl", "-sN", d.url+"/task/"+d.task+"/events")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := h.start(cmd); err != nil {
		return 0, fmt.Errorf("start curl: %w", err)
	}
	defer h.stop(cmd)
	buf := make([]byte, 1<<20)
	var n int64
	var tail []byte
	for n < d.bytes {
		k, err := out.Read(buf)
		n += int64(k)
		tail = append(tail, buf[:k]...)
		if len(tail) > 8192 {
			tail = tail[len(tail)-8192:]
		}
		if err != nil {
			return 0, fmt.Errorf("curl read %d of %d bytes: %v", n, d.bytes, err)
		}
	}
	el := time.Since(start)
	if n != d.bytes || !bytes.Contains(tail, []byte(d.last)) {
		return 0, fmt.Errorf("curl read %d bytes (want %d) and the last frame does not name event %s", n, d.bytes, d.last)
	}
	return el, nil
}

// runTimed runs a command to the end and returns its wall time and peak
// RSS: its VmHWM sampled every millisecond while it ran (also in
// h.lastHWM), or rusage's when no sample was read; h.lastCPU is then its
// processor time (user + system).
func (h *harness) runTimed(timeout time.Duration, stdout io.Writer, name string, args ...string) (time.Duration, int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout = stdout
	if h.childEnv != nil {
		cmd.Env = append(os.Environ(), h.childEnv...)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := h.start(cmd); err != nil {
		return 0, 0, err
	}
	// The child's own high-water mark, sampled: the rusage one counts
	// the bench's memory too (Go starts children with vfork, and Linux
	// keeps the mark across exec), which dominates when the server under
	// test runs inside the bench (Suna).
	sampled := make(chan int64, 1)
	stopSampling := make(chan struct{})
	go func() {
		var hwm int64
		for {
			if v, err := vmHWM(cmd.Process.Pid); err == nil {
				hwm = max(hwm, v)
			}
			select {
			case <-stopSampling:
				sampled <- hwm
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	err := cmd.Wait()
	el := time.Since(start)
	close(stopSampling)
	h.lastHWM = <-sampled
	h.forget(cmd)
	if ctx.Err() != nil {
		return el, 0, fmt.Errorf("%s %s: no result within %v", filepath.Base(name), strings.Join(args, " "), timeout)
	}
	if err != nil {
		return el, 0, fmt.Errorf("%s %s: %v: %s", filepath.Base(name), strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	h.lastCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	rss := h.lastHWM
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && rss == 0 {
		rss = ru.Maxrss * 1024 // at least the bench's own peak: see above
	}
	return el, rss, nil
}

// export times `perch export --format jsonl` and checks that the last
// record (before the closing state record) is the known final reply.
func (h *harness) export(d *daemon, final string) (time.Duration, int64, error) {
	path := filepath.Join(h.tmp, "export.jsonl")
	f, err := os.Create(path)
	if err != nil {
		return 0, 0, err
	}
	el, rss, err := h.runTimed(h.loadTimeout, f, h.perch, "export", d.task, "--format", "jsonl", "--url", d.url)
	f.Close()
	if err != nil {
		return el, rss, err
	}
	if err := checkExport(path, final); err != nil {
		return el, rss, err
	}
	_ = os.Remove(path)
	return el, rss, nil
}

func checkExport(path, final string) error {
	// Only the end is read: the bench's own memory must stay small, or the
	// next child's rusage peak (which inherits the parent's mark through
	// vfork) reports the bench instead of perch.
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	const tailMax = 1 << 20
	off := max(st.Size()-tailMax, 0)
	b := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil {
		return err
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if i == 0 && off > 0 {
			break // the first line of the tail may be cut
		}
		var r struct{ Type, Text string }
		if err := json.Unmarshal(lines[i], &r); err != nil {
			return fmt.Errorf("export line %d from the end: %v", len(lines)-i, err)
		}
		if r.Type == "state" {
			continue
		}
		if r.Type != "assistant" || r.Text != final {
			return fmt.Errorf("export is incomplete: its last record is %s %.80q, not the final reply", r.Type, r.Text)
		}
		return nil
	}
	return errors.New("export is empty")
}

// ---- /proc ----

// vmHWM is the peak resident set of a running process, in bytes.
func vmHWM(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			var kb int64
			if _, err := fmt.Sscan(strings.TrimPrefix(l, "VmHWM:"), &kb); err != nil {
				return 0, err
			}
			return kb * 1024, nil
		}
	}
	return 0, errors.New("no VmHWM")
}

// cpuTime is the CPU time a process has used, summed over its threads from
// schedstat (nanoseconds), else from stat's utime+stime (clock ticks).
func cpuTime(pid int) (time.Duration, error) {
	dirs, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var ns int64
	ok := false
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var v int64
		if _, err := fmt.Sscan(string(b), &v); err == nil {
			ns += v
			ok = true
		}
	}
	if ok {
		return time.Duration(ns), nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond, nil // USER_HZ is 100 on Linux
}

// initTrace sums the "ms clock" of every package init GODEBUG=inittrace=1
// reports.
func initTrace(stderr string) (float64, int) {
	var sum float64
	n := 0
	for _, l := range strings.Split(stderr, "\n") {
		if !strings.HasPrefix(l, "init ") {
			continue
		}
		i := strings.Index(l, " ms clock")
		if i < 0 {
			continue
		}
		j := strings.LastIndexByte(l[:i], ' ')
		v, err := strconv.ParseFloat(l[j+1:i], 64)
		if err == nil {
			sum += v
			n++
		}
	}
	return sum, n
}

// ---- statistics ----

func median(ds []time.Duration) time.Duration { return percentile(ds, 50) }

// percentile is the nearest-rank percentile.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	k := int(p/100*float64(len(s))+0.999999) - 1
	return s[min(max(k, 0), len(s)-1)]
}
