#!/usr/bin/env bash
# Regenerates the fixtures recorded from the real Codex CLI (testdata/cli-*.jsonl
# and testdata/cli/): installs the CLI from npm, starts the fake model provider
# of capture/ on loopback, and runs each scenario of capture/*.json with
# `codex exec --json` (and `codex exec resume --last --json` for the second
# turn of the same thread) in a scratch directory, where Codex's tools run real
# commands. Keeps what Codex printed, the rollout it wrote under
# CODEX_HOME/sessions, and the requests it sent the fake (the tool outputs in
# them are what the tools really returned). Then run
#   go test ./client/codex/ -run TestGolden -update
# and read the golden diff.
set -euo pipefail

CODEX_VERSION=${CODEX_VERSION:-0.171.0}
here=$(cd "$(dirname "$0")" && pwd)
scratch=${SCRATCH:-/tmp/perch-codex-capture} # a fixed place: its paths end up in the fixtures
out=$here/cli

if [ "$(codex --version 2>/dev/null)" != "codex-cli $CODEX_VERSION" ]; then
	npm install -g "@openai/codex@$CODEX_VERSION"
fi

rm -rf "$scratch"
mkdir -p "$scratch" "$out"
(cd "$here/capture" && go build -o "$scratch/fake" .)

# scenario NAME PROMPT [RESUME-PROMPT]: one thread, one or two codex exec runs.
scenario() {
	local name=$1 prompt=$2 resume=${3:-}
	local dir=$scratch/$name
	mkdir -p "$dir/home" "$dir/work"
	printf 'old line\n' > "$dir/work/notes.txt"
	"$scratch/fake" -script "$here/capture/$name.json" -log "$dir/requests.jsonl" > "$dir/addr" 2> "$dir/fake.err" &
	local fake=$!
	for _ in $(seq 50); do [ -s "$dir/addr" ] && break; sleep 0.1; done
	cat > "$dir/home/config.toml" <<-EOF
		model = "gpt-5.5"
		model_provider = "fake"
		approval_policy = "never"
		sandbox_mode = "danger-full-access"

		[model_providers.fake]
		name = "fake"
		base_url = "http://$(cat "$dir/addr")/v1"
		wire_api = "responses"
		env_key = "FAKE_OPENAI_KEY"
		request_max_retries = 0
		stream_max_retries = 2
		stream_idle_timeout_ms = 20000
	EOF
	local run=(env CODEX_HOME="$dir/home" FAKE_OPENAI_KEY=dummy codex exec --json --skip-git-repo-check)
	(cd "$dir/work" && "${run[@]}" "$prompt" < /dev/null > "$dir/exec.jsonl" 2> "$dir/exec.err") || true
	if [ -n "$resume" ]; then
		(cd "$dir/work" && env CODEX_HOME="$dir/home" FAKE_OPENAI_KEY=dummy \
			codex exec resume --last --json --skip-git-repo-check "$resume" < /dev/null >> "$dir/exec.jsonl" 2> "$dir/resume.err") || true
	fi
	kill "$fake"
	wait "$fake" 2> /dev/null || true
	cp "$dir/exec.jsonl" "$here/cli-$name.jsonl"
	cp "$dir/requests.jsonl" "$out/$name.requests.jsonl"
	find "$dir/home/sessions" -name 'rollout-*.jsonl' | sort | xargs cat > "$out/$name.rollout.jsonl"
	echo "$name: $(wc -l < "$dir/exec.jsonl") events, $(wc -l < "$dir/requests.jsonl") requests"
}

scenario session "Add a hello script and update the notes." "Run it again."
scenario failed "Say hello."
