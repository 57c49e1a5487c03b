package suna_test

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/suna"
	"github.com/perch-tui/perch/events"
	fake "github.com/perch-tui/perch/fakedaemon/suna"
)

// BenchmarkBenchRun compares, on the fake's 20,000-frame run (held before
// its last frame, so that it is still running), reading its stream raw
// (what curl does: bytes, frames counted) with following it (decoded and
// applied to a timeline until the final answer is in), and the history of
// the finished run fetched raw with its load by Follow.
//
//	go test ./client/suna -run '^$' -bench BenchRun -benchtime 5x
func BenchmarkBenchRun(b *testing.B) {
	f := newFake(b, fake.Options{Hold: true, FrameDelay: -1})
	tid, rid, err := f.srv.Start("", "bench")
	if err != nil {
		b.Fatal(err)
	}
	for n := -1; n != f.srv.Frames(rid); {
		n = f.srv.Frames(rid)
		time.Sleep(200 * time.Millisecond)
	}
	frames := f.srv.Frames(rid)
	hc := httpClient(b)
	streamURL := f.base + "/agent-run/" + rid + "/stream"

	b.Run("raw-stream", func(b *testing.B) {
		for range b.N {
			resp, err := hc.Get(streamURL)
			if err != nil {
				b.Fatal(err)
			}
			countFrames(b, resp.Body, frames)
			resp.Body.Close()
		}
		b.ReportMetric(float64(frames), "frames")
	})

	// curl as its own process, as the measurement has it: its
	// output is counted until the last stored frame, then it is stopped.
	if curl, err := exec.LookPath("curl"); err == nil {
		b.Run("curl-stream", func(b *testing.B) {
			for range b.N {
				cmd := exec.Command(curl, "-sN", streamURL)
				out, err := cmd.StdoutPipe()
				if err != nil {
					b.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				countFrames(b, out, frames)
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			}
		})
	}

	b.Run("follow-stream", func(b *testing.B) {
		for range b.N {
			l := open(b, f, "")
			ctx, cancel := context.WithCancel(context.Background())
			tl := events.NewTimeline()
			done := make(chan struct{})
			go func() {
				_ = l.Follow(ctx, tid, func(u client.Update) {
					for _, ev := range u.Events {
						tl.Apply(ev)
					}
					if its := tl.Items(); len(its) > 0 {
						last := its[len(its)-1]
						if strings.Contains(last.Text, "The end.") && last.StopReason != "" {
							select {
							case <-done:
							default:
								close(done)
							}
						}
					}
				})
			}()
			<-done
			cancel()
		}
	})

	f.srv.Release()
	for f.srv.RunStatus(rid) == "running" {
		time.Sleep(10 * time.Millisecond)
	}
	b.Run("raw-history", func(b *testing.B) {
		for range b.N {
			resp, err := hc.Get(f.base + "/threads/" + tid + "/messages?optimized=false&order=asc")
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	b.Run("follow-history", func(b *testing.B) {
		for range b.N {
			l := open(b, f, "")
			ctx, cancel := context.WithCancel(context.Background())
			tl := events.NewTimeline()
			done := make(chan struct{})
			go func() {
				_ = l.Follow(ctx, tid, func(u client.Update) {
					for _, ev := range u.Events {
						tl.Apply(ev)
					}
					if u.Synced {
						select {
						case <-done:
						default:
							close(done)
						}
					}
				})
			}()
			<-done
			cancel()
		}
	})
}

// countFrames reads r until it has seen n frame ends.
func countFrames(b *testing.B, r io.Reader, n int) {
	buf := make([]byte, 64<<10)
	seen := 0
	var tail []byte
	for seen < n {
		k, err := r.Read(buf)
		chunk := append(tail, buf[:k]...)
		seen += bytes.Count(chunk, []byte("\n\n"))
		if i := bytes.LastIndex(chunk, []byte("\n\n")); i >= 0 {
			tail = append([]byte(nil), chunk[i+2:]...)
		} else {
			tail = chunk
		}
		if err != nil {
			b.Fatalf("after %d frames: %v", seen, err)
		}
	}
}

// BenchmarkDecodeBenchRun decodes the data of the fake's 20,000-frame run,
// read once from its stream, as Follow does (deltas on): the decoder's
// share of following a run, without the network.
//
//	go test ./client/suna -run '^$' -bench DecodeBenchRun -benchmem
func BenchmarkDecodeBenchRun(b *testing.B) {
	f := newFake(b, fake.Options{Hold: true, FrameDelay: -1})
	_, rid, err := f.srv.Start("", "bench")
	if err != nil {
		b.Fatal(err)
	}
	for n := -1; n != f.srv.Frames(rid); {
		n = f.srv.Frames(rid)
		time.Sleep(200 * time.Millisecond)
	}
	frames := f.srv.Frames(rid)
	resp, err := httpClient(b).Get(f.base + "/agent-run/" + rid + "/stream")
	if err != nil {
		b.Fatal(err)
	}
	var raw bytes.Buffer
	countFrames(b, io.TeeReader(resp.Body, &raw), frames)
	resp.Body.Close()
	var data [][]byte
	for _, fr := range bytes.Split(raw.Bytes(), []byte("\n\n")) {
		if d, ok := bytes.CutPrefix(fr, []byte("data: ")); ok {
			data = append(data, d)
		}
	}
	b.ResetTimer()
	for range b.N {
		d := suna.NewDecoder()
		d.Deltas = true
		for _, x := range data {
			_ = d.Decode(x)
		}
	}
	b.ReportMetric(float64(len(data)), "frames")
}

// BenchmarkLoadBenchHistory reads the finished 20,000-frame run's history
// (fetched once) as Follow's load does at the run's end: its rows, then
// the importer's decoding of them, applied to a timeline.
//
//	go test ./client/suna -run '^$' -bench LoadBenchHistory -benchmem
func BenchmarkLoadBenchHistory(b *testing.B) {
	f := newFake(b, fake.Options{FrameDelay: -1})
	tid, rid, err := f.srv.Start("", "bench")
	if err != nil {
		b.Fatal(err)
	}
	for f.srv.RunStatus(rid) == "running" {
		time.Sleep(50 * time.Millisecond)
	}
	resp, err := httpClient(b).Get(f.base + "/threads/" + tid + "/messages?optimized=false&order=asc")
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for range b.N {
		tl := events.NewTimeline()
		if err := suna.LoadHistoryBody(body, func(evs []events.Event) {
			for _, ev := range evs {
				tl.Apply(ev)
			}
		}); err != nil {
			b.Fatal(err)
		}
	}
}
