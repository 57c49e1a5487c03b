package cli

import "context"

// startDemoOther handles the demo backends without a fake server here.
func startDemoOther(_ context.Context, _ Env, _ UI, name, _ string, _ float64) error {
	return usagef("perch demo --backend %s: no fake %s server in this build", name, name)
}
