package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// tmux talks to a private tmux server (its own -L socket, no config file)
// through one control-mode client, so that polling the screen costs a
// round trip on a pipe instead of a process per capture. The control
// client sits in a session of its own and never sizes the measured ones.
type tmux struct {
	sock  string
	path  string // the socket file, removed at close
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	mu    sync.Mutex
	seq   int
}

func startTmux(sock string) (*tmux, error) {
	if _, err := exec.LookPath("tmux"); err != nil {
		return nil, errors.New("tmux is not installed (the terminal measurements need it; -measure can leave them out)")
	}
	cmd := exec.Command("tmux", "-L", sock, "-f", "/dev/null", "-C", "new-session", "-s", "ctl", "-x", "80", "-y", "24", "sleep", "86400")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start tmux: %w", err)
	}
	t := &tmux{sock: sock, cmd: cmd, in: in, lines: make(chan string, 4096)}
	go func() {
		defer close(t.lines)
		br := bufio.NewReaderSize(out, 1<<16)
		for {
			l, err := br.ReadString('\n')
			if l != "" {
				t.lines <- strings.TrimSuffix(l, "\n")
			}
			if err != nil {
				return
			}
		}
	}()
	// Replies come in the order of the commands, but the first block
	// answers the new-session above: skip blocks up to a marker.
	marker := fmt.Sprintf("perch-bench-sync-%d", time.Now().UnixNano())
	if _, err := fmt.Fprintf(in, "display-message -p '%s'\n", marker); err != nil {
		t.close()
		return nil, fmt.Errorf("tmux control client: %w", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		body, err := t.block(time.Until(deadline))
		if err != nil {
			t.close()
			return nil, fmt.Errorf("tmux control client: %w", err)
		}
		if strings.TrimSpace(body) == marker {
			break
		}
	}
	if p, err := t.run("display-message -p '#{socket_path}'"); err == nil {
		t.path = strings.TrimSpace(p)
	}
	for _, c := range []string{"set-option -g remain-on-exit on", "set-option -g status off", "set-option -g history-limit 0"} {
		if _, err := t.run(c); err != nil {
			t.close()
			return nil, err
		}
	}
	return t, nil
}

// block reads one %begin … %end reply, skipping notifications.
func (t *tmux) block(timeout time.Duration) (string, error) {
	tm := time.NewTimer(timeout)
	defer tm.Stop()
	var body []string
	in := false
	var end string
	for {
		select {
		case l, ok := <-t.lines:
			if !ok {
				return "", errors.New("tmux control client ended")
			}
			if !in {
				if strings.HasPrefix(l, "%begin ") {
					in = true
					end = strings.TrimPrefix(l, "%begin ")
					body = body[:0]
				}
				continue
			}
			if l == "%end "+end {
				return strings.Join(body, "\n"), nil
			}
			if l == "%error "+end {
				return "", fmt.Errorf("tmux: %s", strings.Join(body, "; "))
			}
			body = append(body, l)
		case <-tm.C:
			return "", fmt.Errorf("tmux did not answer within %v", timeout)
		}
	}
}

// run sends one command line and returns its output.
func (t *tmux) run(command string) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, err := io.WriteString(t.in, command+"\n"); err != nil {
		return "", fmt.Errorf("tmux %q: %w", command, err)
	}
	out, err := t.block(30 * time.Second)
	if err != nil {
		return "", fmt.Errorf("tmux %q: %w", command, err)
	}
	return out, nil
}

// quote makes one argument of a tmux command line.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// session is one measured tmux session with one pane.
type session struct {
	t    *tmux
	name string
	pid  int // the pane's program (started without a shell)
}

// newSession starts argv directly (no shell) in a detached w×h session.
func (t *tmux) newSession(w, h int, env []string, argv ...string) (*session, error) {
	t.seq++
	s := &session{t: t, name: fmt.Sprintf("s%04d", t.seq)}
	var b strings.Builder
	fmt.Fprintf(&b, "new-session -d -s %s -x %d -y %d", s.name, w, h)
	for _, e := range env {
		b.WriteString(" -e " + quote(e))
	}
	for _, a := range argv {
		b.WriteString(" " + quote(a))
	}
	if _, err := t.run(b.String()); err != nil {
		return nil, err
	}
	pid, err := s.panePID()
	if err != nil {
		s.kill()
		return nil, err
	}
	s.pid = pid
	return s, nil
}

func (s *session) capture() (string, error) { return s.t.run("capture-pane -p -t " + s.name) }

func (s *session) keys(keys ...string) error {
	c := "send-keys -t " + s.name
	for _, k := range keys {
		c += " " + quote(k)
	}
	_, err := s.t.run(c)
	return err
}

// literal types text as is (no key-name lookup).
func (s *session) literal(text string) error {
	_, err := s.t.run("send-keys -l -t " + s.name + " " + quote(text))
	return err
}

func (s *session) resize(w, h int) error {
	_, err := s.t.run(fmt.Sprintf("resize-window -t %s -x %d -y %d", s.name, w, h))
	return err
}

func (s *session) panePID() (int, error) {
	out, err := s.t.run("display-message -p -t " + s.name + " '#{pane_pid}'")
	if err != nil {
		return 0, err
	}
	var pid int
	if _, err := fmt.Sscan(out, &pid); err != nil {
		return 0, fmt.Errorf("pane pid %q: %w", out, err)
	}
	return pid, nil
}

// dead reports whether the pane's program has exited (remain-on-exit keeps
// the pane and its last screen for the error message).
func (s *session) dead() (bool, string) {
	out, err := s.t.run("display-message -p -t " + s.name + " '#{pane_dead} #{pane_dead_status}'")
	if err != nil {
		return true, err.Error()
	}
	f := strings.Fields(out)
	if len(f) > 0 && f[0] == "1" {
		st := ""
		if len(f) > 1 {
			st = f[1]
		}
		return true, "exit status " + st
	}
	return false, ""
}

func (s *session) kill() {
	if s != nil {
		_, _ = s.t.run("kill-session -t " + s.name)
	}
}

func (t *tmux) close() {
	if t == nil {
		return
	}
	_ = exec.Command("tmux", "-L", t.sock, "kill-server").Run()
	_ = t.in.Close()
	done := make(chan struct{})
	go func() { _ = t.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		_ = t.cmd.Process.Kill()
		<-done
	}
	if t.path != "" {
		_ = os.Remove(t.path)
	}
}

// errTimeout marks a wait that hit its cap.
var errTimeout = errors.New("timed out")

// waitScreen polls the screen every interval until ok holds, the cap
// passes (errTimeout) or the program dies.
func (s *session) waitScreen(cap, interval time.Duration, ok func(string) bool) (string, time.Time, error) {
	deadline := time.Now().Add(cap)
	var scr string
	for n := 0; ; n++ {
		var err error
		scr, err = s.capture()
		now := time.Now()
		if err != nil {
			return scr, now, err
		}
		if ok(scr) {
			return scr, now, nil
		}
		if now.After(deadline) {
			return scr, now, errTimeout
		}
		if n%50 == 49 {
			if dead, why := s.dead(); dead {
				return scr, now, fmt.Errorf("the program in the terminal ended (%s); its screen:\n%s", why, indent(scr))
			}
		}
		pause(interval)
	}
}

// settle waits until the screen has not changed for quiet (at most max);
// false means it kept changing.
func (s *session) settle(quiet, max time.Duration) (string, bool, error) {
	prev, err := s.capture()
	if err != nil {
		return "", false, err
	}
	since := time.Now()
	deadline := since.Add(max)
	for time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
		cur, err := s.capture()
		if err != nil {
			return "", false, err
		}
		if cur != prev {
			prev, since = cur, time.Now()
			continue
		}
		if time.Since(since) >= quiet {
			return cur, true, nil
		}
	}
	return prev, false, nil
}

// quiet waits until the pane's program has used under 5 % CPU over the
// last window (at most max); it returns when that quiet window began.
func (s *session) quiet(window, max time.Duration) (time.Time, bool) {
	const step = 10 * time.Millisecond
	type sample struct {
		at  time.Time
		cpu time.Duration
	}
	start := time.Now()
	var hist []sample
	for {
		cpu, err := cpuTime(s.pid)
		now := time.Now()
		if err != nil {
			return now, false
		}
		hist = append(hist, sample{now, cpu})
		// The oldest sample at least window old.
		i := len(hist) - 1
		for i > 0 && now.Sub(hist[i].at) < window {
			i--
		}
		if old := hist[i]; now.Sub(old.at) >= window && cpu-old.cpu < now.Sub(old.at)/20 {
			return old.at, true
		}
		if now.Sub(start) >= max {
			return now, false
		}
		time.Sleep(step)
	}
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}
