//go:build linux

package tui

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"unsafe"
)

// nameMax is the longest file name (NAME_MAX).
const nameMax = 255

// watchFile reports changes of the file at path (written, replaced by a
// rename, removed) through inotify on its directory: no polling, so an
// idle perch does not wake up. ok is false when inotify is not available;
// the caller then polls.
func watchFile(ctx context.Context, path string) (<-chan struct{}, bool) {
	dir, name := filepath.Dir(path), []byte(filepath.Base(path))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false
	}
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, false
	}
	const mask = syscall.IN_MODIFY | syscall.IN_CLOSE_WRITE | syscall.IN_CREATE | syscall.IN_DELETE |
		syscall.IN_MOVED_TO | syscall.IN_MOVED_FROM | syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF
	if _, err := syscall.InotifyAddWatch(fd, dir, mask); err != nil {
		syscall.Close(fd)
		return nil, false
	}
	// A non-blocking descriptor goes through the runtime's poller: Close
	// ends a pending Read.
	f := os.NewFile(uintptr(fd), "inotify:"+dir)
	ch := make(chan struct{}, 1)
	stop := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-stop:
		}
		f.Close()
	}()
	go func() {
		defer close(ch)
		defer close(stop)
		buf := make([]byte, 64*(syscall.SizeofInotifyEvent+nameMax+1))
		for {
			n, err := f.Read(buf)
			if err != nil || n <= 0 {
				return
			}
			hit := false
			for off := 0; off+syscall.SizeofInotifyEvent <= n; {
				ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
				end := off + syscall.SizeofInotifyEvent + int(ev.Len)
				if end > n {
					break
				}
				evName := bytes.TrimRight(buf[off+syscall.SizeofInotifyEvent:end], "\x00")
				if bytes.Equal(evName, name) || ev.Mask&(syscall.IN_DELETE_SELF|syscall.IN_MOVE_SELF|syscall.IN_Q_OVERFLOW) != 0 {
					hit = true
				}
				off = end
			}
			if hit {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		}
	}()
	return ch, true
}
