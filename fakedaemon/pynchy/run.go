package pynchy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
)

// Run serves a fake pynchy on addr until ctx ends, after printing the URL
// to give perch. Its first chat starts with one finished exchange, so
// there is something to attach to.
func Run(ctx context.Context, addr string, opts Options, out io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("fake pynchy: listen on %s: %w", addr, err)
	}
	s := New(opts)
	defer s.Close()
	url := "http://" + ln.Addr().String()
	jids := make([]string, 0, len(s.opts.Chats))
	for _, c := range s.opts.Chats {
		jids = append(jids, c.JID)
	}
	if err := s.Say(jids[0], "What is in this repository?"); err != nil {
		_ = ln.Close()
		return err
	}
	if _, err := fmt.Fprintf(out, "fake pynchy server listening on %s (chats: %s; try: perch attach %s --backend pynchy --url %s)\n",
		url, strings.Join(jids, ", "), jids[0], url); err != nil {
		_ = ln.Close()
		return fmt.Errorf("fake pynchy: write banner: %w", err)
	}
	if err := s.Serve(ctx, ln); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
