package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	fakesuna "github.com/perch-tui/perch/fakedaemon/suna"
)

// sunaFinal is the last reply of the fake Suna's bench run.
const sunaFinal = "## Done\n\nAll parts are summarized above. **The end.**"

// sunaRun is one fresh fake Suna API, served in this process, with the
// bench run held before its last frame.
type sunaRun struct {
	srv      *fakesuna.Server
	base     string
	tid, rid string
	frames   int
	stop     func()
}

func startSunaRun(frames int, timeout time.Duration) (*sunaRun, error) {
	s := fakesuna.New(fakesuna.Options{Hold: true, FrameDelay: -1})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(ctx, ln)
	}()
	r := &sunaRun{srv: s, base: "http://" + ln.Addr().String() + "/v1"}
	r.stop = func() {
		s.Release()
		cancel()
		<-done
		s.Close()
	}
	r.tid, r.rid, err = s.Start("", fmt.Sprintf("bench %d", frames))
	if err != nil {
		r.stop()
		return nil, err
	}
	// Held: the frame count stops growing one frame short of the end.
	deadline := time.Now().Add(timeout)
	for n := -1; ; {
		time.Sleep(100 * time.Millisecond)
		m := s.Frames(r.rid)
		if m == n && m > 0 {
			r.frames = m
			return r, nil
		}
		n = m
		if time.Now().After(deadline) {
			r.stop()
			return nil, fmt.Errorf("the fake Suna bench run did not settle within %v", timeout)
		}
	}
}

// benchSuna: the fake Suna's 20,000-frame run (reasoning, markdown a few
// words per frame, tool calls with streamed arguments and output). perch
// export --backend suna --until-idle joins the run while it is running
// (the run ends as soon as perch has opened its stream), so it reads the
// whole stream, waits for the run's end and reads the history once more,
// as a user's export would. perch attach joins a fresh run the same way,
// in a 120×40 tmux window, and is timed until the run's final reply is on
// the screen. The baseline is curl -sN reading the same run's stream,
// whole, once the run is over (the server closes it after the last
// frame), in the same round.
func (h *harness) benchSuna() error {
	scope := fmt.Sprintf("suna %d frames", h.sunaFrames)
	var curls, exports, tuis, tuiCPUs, exportCPUs, curlCPUs []time.Duration
	var rss, tuiHWM int64
	var frames int
	var streamBytes int64
	for i := range h.runs {
		progress("%s: round %d/%d", scope, i+1, h.runs)
		r, err := startSunaRun(h.sunaFrames, h.loadTimeout)
		if err != nil {
			return err
		}
		e, m, err := h.sunaExport(r)
		ecpu := h.lastCPU
		if err == nil {
			var c time.Duration
			var cw countWriter
			if c, _, err = h.runTimed(h.loadTimeout, &cw, "curl", "-sN", r.base+"/agent-run/"+r.rid+"/stream"); err == nil {
				curls, exports, rss = append(curls, c), append(exports, e), max(rss, m)
				exportCPUs, curlCPUs = append(exportCPUs, ecpu), append(curlCPUs, h.lastCPU)
				frames, streamBytes = r.srv.Frames(r.rid), cw.n
			}
		}
		r.stop()
		if err != nil {
			return err
		}
		if h.tm == nil {
			continue
		}
		if r, err = startSunaRun(h.sunaFrames, h.loadTimeout); err != nil {
			return err
		}
		t, cpu, hwm, err := h.sunaAttach(r)
		r.stop()
		if err != nil {
			return err
		}
		tuis, tuiHWM = append(tuis, t), max(tuiHWM, hwm)
		if cpu > 0 {
			tuiCPUs = append(tuiCPUs, cpu)
		}
	}
	c, e := median(curls), median(exports)
	h.add(row{scope: scope, name: "stream size", value: fmtMB(streamBytes), base: fmt.Sprintf("%d frames", frames)})
	h.add(row{scope: scope, name: "curl -sN, the run's whole stream", value: fmtDur(c), goal: "baseline"})
	h.add(row{scope: scope, name: "export --backend suna --until-idle wall", value: fmtDur(e), base: fmtDur(c) + " curl",
		cmp: fmtRatio(e, c), goal: "≤ 2× curl", verdict: verdict(e <= 2*c)})
	h.add(row{scope: scope, name: "export processor time", value: fmtDur(median(exportCPUs)),
		base: fmtDur(median(curlCPUs)) + " curl", cmp: fmtRatio(median(exportCPUs), median(curlCPUs))})
	h.add(row{scope: scope, name: "export peak RSS (VmHWM, sampled each ms)", value: fmtMB(rss), base: fmtMB(streamBytes) + " stream"})
	if len(tuis) > 0 {
		t := median(tuis)
		h.add(row{scope: scope, name: "TUI attach → final reply visible", value: fmtDur(t), base: fmtDur(c) + " curl",
			cmp: fmtRatio(t, c), goal: "≤ 3× curl", verdict: verdict(t <= 3*c)})
		if len(tuiCPUs) > 0 {
			h.add(row{scope: scope, name: "TUI processor time to final reply", value: fmtDur(median(tuiCPUs)), base: "user + system, all threads"})
		}
		h.add(row{scope: scope, name: "TUI peak RSS (VmHWM)", value: fmtMB(tuiHWM), base: fmtMB(streamBytes) + " stream"})
	}
	return nil
}

// sunaAttach times perch attach of the held run's thread in tmux until the
// final reply is on the screen; the run is released once perch has opened
// its stream. It also returns the processor time perch had used by then
// and its peak RSS.
func (h *harness) sunaAttach(r *sunaRun) (time.Duration, time.Duration, int64, error) {
	stopWatch, released := r.releaseOnStream()
	defer func() { close(stopWatch); <-released }()
	start := time.Now()
	s, err := h.tm.newSession(h.width, h.height, nil, h.perch, "attach", r.tid, "--backend", "suna", "--url", r.base)
	if err != nil {
		return 0, 0, 0, err
	}
	defer s.kill()
	// The reply's last words, as the markdown renderer shows them (bold
	// drops its asterisks).
	_, at, err := s.waitScreen(h.loadTimeout, 5*time.Millisecond, func(scr string) bool {
		return strings.Contains(scr, "summarized above. The end.")
	})
	if err != nil {
		return 0, 0, 0, fmt.Errorf("perch attach: waiting for the final reply: %w", err)
	}
	cpu, _ := cpuTime(s.pid)
	hwm, _ := vmHWM(s.pid)
	return at.Sub(start), cpu, hwm, nil
}

// releaseOnStream releases the held run as soon as a client opens its
// stream (until stop is closed); released is closed when the watch ends.
func (r *sunaRun) releaseOnStream() (stop chan struct{}, released chan struct{}) {
	const stream = "GET /agent-run/{id}/stream"
	before := r.srv.Requests(stream)
	stop, released = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(released)
		for r.srv.Requests(stream) == before {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
		r.srv.Release()
	}()
	return stop, released
}

// sunaExport times perch export --until-idle of the held run: the run is
// released once perch has opened its stream. The export must end with the
// run's final reply.
func (h *harness) sunaExport(r *sunaRun) (time.Duration, int64, error) {
	path := filepath.Join(h.tmp, "suna-export.jsonl")
	f, err := os.Create(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	stopWatch, released := r.releaseOnStream()
	el, rss, err := h.runTimed(h.loadTimeout, f, h.perch, "export", r.tid, "--backend", "suna", "--url", r.base,
		"--until-idle", "--format", "jsonl")
	close(stopWatch)
	<-released
	if err != nil {
		return el, rss, err
	}
	if st := r.srv.RunStatus(r.rid); st != "completed" {
		return el, rss, fmt.Errorf("perch export ended while the run was %s", st)
	}
	if err := checkExport(path, sunaFinal); err != nil {
		return el, rss, err
	}
	_ = os.Remove(path)
	return el, rss, nil
}

// countWriter counts what curl wrote.
type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

var _ io.Writer = (*countWriter)(nil)
