package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/perch-tui/perch/fakedaemon"
	fakepynchy "github.com/perch-tui/perch/fakedaemon/pynchy"
	fakesuna "github.com/perch-tui/perch/fakedaemon/suna"
)

// watchFakes are the three fake servers of the watch section, served in
// this process (as the suna section's): maria's daemon with stopped tasks,
// Suna with finished threads, pynchy with quiet chats. In process, the
// bench starts a run at a known instant without a program in between.
type watchFakes struct {
	maria  *fakedaemon.Server
	suna   *fakesuna.Server
	pynchy *fakepynchy.Server
	// urls of maria, Suna and pynchy, in that order; ids their sessions.
	urls [3]string
	ids  [3][]string
	stop func()
}

var watchSystems = [3]string{"maria", "suna", "pynchy"}

// startWatchFakes serves n idle sessions split over the three systems
// (17/17/16 for 50).
func startWatchFakes(n int) (*watchFakes, error) {
	per := [3]int{(n + 2) / 3, (n + 1) / 3, n / 3}
	f := &watchFakes{}
	var stops []func()
	f.stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	fail := func(err error) (*watchFakes, error) { f.stop(); return nil, err }

	// maria: a fast scripted agent, so that a run started by the bench
	// ends soon after it is seen.
	d := fakedaemon.New(fakedaemon.Options{Speed: 50})
	srv, err := d.Start("127.0.0.1:0")
	if err != nil {
		_ = d.Close()
		return nil, err
	}
	stops = append(stops, func() { _ = srv.Close() })
	f.maria, f.urls[0] = srv, srv.URL
	for i := range per[0] {
		id, err := d.AddStoppedTask(fmt.Sprintf("maria session %d", i+1))
		if err != nil {
			return fail(err)
		}
		f.ids[0] = append(f.ids[0], id)
	}

	// Suna: each thread's first run finishes at once.
	s := fakesuna.New(fakesuna.Options{FrameDelay: -1})
	url, stopSuna, err := serveHere(s.Serve)
	if err != nil {
		s.Close()
		return fail(err)
	}
	stops = append(stops, func() { s.Release(); stopSuna(); s.Close() })
	f.suna, f.urls[1] = s, url+"/v1"
	for i := range per[1] {
		tid, rid, err := s.Start("", fmt.Sprintf("suna session %d", i+1))
		if err != nil {
			return fail(err)
		}
		f.ids[1] = append(f.ids[1], tid)
		for s.RunStatus(rid) == "running" {
			time.Sleep(time.Millisecond)
		}
	}

	// pynchy: quiet chats.
	var chats []fakepynchy.Chat
	for i := range per[2] {
		jid := fmt.Sprintf("tui:bench-%d", i+1)
		chats = append(chats, fakepynchy.Chat{JID: jid, Name: fmt.Sprintf("pynchy session %d", i+1)})
		f.ids[2] = append(f.ids[2], jid)
	}
	p := fakepynchy.New(fakepynchy.Options{Chats: chats})
	url, stopPynchy, err := serveHere(p.Serve)
	if err != nil {
		_ = p.Close()
		return fail(err)
	}
	stops = append(stops, func() { stopPynchy(); _ = p.Close() })
	f.pynchy, f.urls[2] = p, url
	return f, nil
}

// serveHere serves a fake on a free local port until the returned stop.
func serveHere(serve func(context.Context, net.Listener) error) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = serve(ctx, ln) }()
	return "http://" + ln.Addr().String(), func() { cancel(); <-done }, nil
}

// startRun starts a run of session i of system sys, now. A Suna run is
// held before its last frame (Release ends it): Suna is polled, and a run
// that ended between two polls would change nothing on the board.
func (f *watchFakes) startRun(sys, i int) error {
	id := f.ids[sys][i]
	switch sys {
	case 0:
		body := `{"message":{"role":"user","content":"What changed since yesterday?"}}`
		resp, err := http.Post(f.urls[0]+"/task/"+id+"/message", "application/json", strings.NewReader(body))
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("maria: POST message: %s", resp.Status)
		}
		return nil
	case 1:
		f.suna.Hold()
		_, _, err := f.suna.Start(id, "What changed since yesterday?")
		return err
	default:
		return f.pynchy.Say(id, "What changed since yesterday?")
	}
}

// watchTimeout bounds the wait for the watcher's sources and lines.
const watchTimeout = 30 * time.Second

// watchLine is one line of perch watch --json, stamped when the bench read
// it.
type watchLine struct {
	Session, Old, New string
	at                time.Time
}

// benchWatch: perch watch --json over three sources (maria, Suna,
// pynchy) holding -watch-sessions idle sessions: how soon every session
// is listed, the watcher's processor time while nothing happens, and how
// soon a run started on one session is a line of its output; its peak
// RSS at the end.
func (h *harness) benchWatch() error {
	n := h.watchSessions
	scope := fmt.Sprintf("watch %d sessions", n)
	if err := exec.Command(h.perch, "watch", "--help").Run(); err != nil {
		h.note("%s: %s has no watch command (%v): not measured", scope, h.perch, err)
		return nil
	}
	progress("%s: starting the fake maria, Suna and pynchy servers", scope)
	f, err := startWatchFakes(n)
	if err != nil {
		return err
	}
	defer f.stop()

	// A private home: no config file's sources, no maria daemon found,
	// the board's state kept apart.
	home := filepath.Join(h.tmp, "watch-home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	env := append(withoutPerchEnv(os.Environ()), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_STATE_HOME="+filepath.Join(home, "state"))
	urls := []string{"--url", f.urls[0], "--url", f.urls[1], "--url", f.urls[2]}

	// The board must see every session: perch tasks --all counts them.
	all := exec.Command(h.perch, append([]string{"tasks", "--all", "--json"}, urls...)...)
	all.Env = env
	b, err := all.Output()
	if err != nil {
		return fmt.Errorf("perch tasks --all: %w", err)
	}
	var board struct{ Sessions []json.RawMessage }
	if err := json.Unmarshal(b, &board); err != nil {
		return fmt.Errorf("perch tasks --all --json: %w", err)
	}
	if len(board.Sessions) != n {
		return fmt.Errorf("perch tasks --all lists %d sessions, not %d", len(board.Sessions), n)
	}

	cmd := exec.Command(h.perch, append([]string{"watch", "--json"}, urls...)...)
	cmd.Env = env
	logf, err := os.Create(filepath.Join(h.tmp, "watch.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	errOut, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	start := time.Now()
	if err := h.start(cmd); err != nil {
		return fmt.Errorf("start perch watch: %w", err)
	}
	defer h.stop(cmd)
	// Sources' states go to stderr ("perch: source URL: live"): kept in
	// the log, and each source's first "live" is passed on.
	live := make(chan time.Time, 3)
	go func() {
		sc := bufio.NewScanner(errOut)
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if strings.HasSuffix(sc.Text(), ": live") {
				select {
				case live <- time.Now():
				default:
				}
			}
		}
	}()
	lines := make(chan watchLine, 4*n)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			at := time.Now()
			var l watchLine
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				l.at = at
				lines <- l
			}
		}
	}()
	// next waits for the next line that passes ok.
	next := func(ok func(watchLine) bool) (watchLine, error) {
		deadline := time.After(watchTimeout)
		for {
			select {
			case l, open := <-lines:
				if !open {
					b, _ := os.ReadFile(logf.Name())
					return watchLine{}, fmt.Errorf("perch watch ended: %s", strings.TrimSpace(string(b)))
				}
				if ok(l) {
					return l, nil
				}
			case <-deadline:
				return watchLine{}, errTimeout
			}
		}
	}

	progress("%s: perch watch --json until every source is live", scope)
	var lastLive time.Time
	for i := range 3 {
		select {
		case lastLive = <-live:
		case <-time.After(watchTimeout):
			b, _ := os.ReadFile(logf.Name())
			return fmt.Errorf("%d of 3 sources live after %v: %s", i, watchTimeout, strings.TrimSpace(string(b)))
		}
	}
	h.add(row{scope: scope, name: "sessions watched", value: fmt.Sprint(n),
		base: fmt.Sprintf("%d maria, %d suna, %d pynchy", len(f.ids[0]), len(f.ids[1]), len(f.ids[2]))})
	h.add(row{scope: scope, name: "perch watch start → every source live", value: fmtDur(lastLive.Sub(start))})

	// Nothing happens: what the watcher spends on three sources' cheap
	// signals (maria's and pynchy's streams, Suna's poll).
	pid := cmd.Process.Pid
	h.idleRow(scope, "watch", pid)

	// A run starts on one session of one source: the clock runs from the
	// request to the line that says the session is generating; then the
	// run ends and the bench waits for its line before the next. Each
	// start waits a random part of a second first: right after a line
	// the bench would start in step with Suna's poll, always its worst
	// phase.
	for sys, name := range watchSystems {
		var ts []time.Duration
		for i := range h.runs {
			progress("%s: %s run start → line %d/%d", scope, name, i+1, h.runs)
			id := f.ids[sys][i%len(f.ids[sys])]
			time.Sleep(rand.N(time.Second))
			t0 := time.Now()
			if err := f.startRun(sys, i%len(f.ids[sys])); err != nil {
				return fmt.Errorf("%s: start a run: %w", name, err)
			}
			l, err := next(func(l watchLine) bool { return l.Session == id && l.New == "generating" })
			if err != nil {
				return fmt.Errorf("%s: waiting for %s to be generating: %w", name, id, err)
			}
			ts = append(ts, l.at.Sub(t0))
			if sys == 1 {
				f.suna.Release()
			}
			if _, err := next(func(l watchLine) bool { return l.Session == id && l.Old == "generating" }); err != nil {
				return fmt.Errorf("%s: waiting for %s's run to end: %w", name, id, err)
			}
		}
		worst := percentile(ts, 100)
		h.add(row{scope: scope, name: fmt.Sprintf("%s run starts → watch line, median / max of %d", name, len(ts)),
			value: fmtDur(median(ts)) + " / " + fmtDur(worst), goal: "≤ 1 s", verdict: verdict(worst <= time.Second)})
	}
	if m, err := vmHWM(pid); err == nil {
		h.add(row{scope: scope, name: "watch peak RSS (VmHWM)", value: fmtMB(m)})
	}
	return nil
}

// withoutPerchEnv drops perch's own settings from an environment, so that
// only the bench's flags choose the sources.
func withoutPerchEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PERCH_") {
			out = append(out, kv)
		}
	}
	return out
}
