//go:build !unix

package uiexec

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
)

// Exec runs path as a child with this process's standard streams (a
// system without exec(2) cannot replace the process) and exits with its
// exit code; interrupts reach the child from the console, so this process
// ignores them while it waits. It returns only when the child cannot be
// started.
func Exec(path string, args, env []string) error {
	cmd := exec.Command(path, args...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	signal.Ignore(os.Interrupt)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the terminal UI %s: %w", path, err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		os.Exit(0)
	case errors.As(err, &exit):
		os.Exit(exit.ExitCode())
	}
	return fmt.Errorf("the terminal UI %s: %w", path, err)
}
