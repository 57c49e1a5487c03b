package outbox

import "context"

// LockFile takes the advisory lock (a flock) on path, creating the file,
// waiting until ctx ends; unlock releases it. Other state under perch's
// state directory (the board's seen marks) is shared between processes
// with the same lock the journals use.
func LockFile(ctx context.Context, path string) (unlock func(), err error) {
	return acquire(ctx, path)
}
