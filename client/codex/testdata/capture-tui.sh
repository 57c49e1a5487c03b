#!/usr/bin/env bash
# Records an interactive Codex TUI session (testdata/cli/tui.*): the real CLI
# runs in tmux against the fake model provider of capture/ (script
# capture/tui.json) and goes busy → waiting for approval → busy → idle; a
# follow-up is queued with `codex queue` while it is busy and another at idle;
# then the TUI is killed with SIGKILL. Keeps the rollout Codex wrote (each line
# carries its write time) and a timeline of what the screen showed, for the
# replay tests (live_replay_test.go).
#
# The TUI runs with --disable daemon_auto_start: by default (0.171) it starts a
# background app-server daemon that owns the thread (holds its writer lock,
# writes its rollout, takes queued messages) and outlives the TUI; without it
# the TUI is the writer, so killing it is the session's end.
set -euo pipefail

CODEX_VERSION=${CODEX_VERSION:-0.171.0}
here=$(cd "$(dirname "$0")" && pwd)
scratch=${SCRATCH:-/tmp/perch-codex-capture-tui} # a fixed place: its paths end up in the fixtures
out=$here/cli
sock=perch-codex-capture-tui

if [ "$(codex --version 2>/dev/null)" != "codex-cli $CODEX_VERSION" ]; then
	npm install -g "@openai/codex@$CODEX_VERSION"
fi

rm -rf "$scratch"
mkdir -p "$scratch/home" "$scratch/work" "$out"
(cd "$here/capture" && go build -o "$scratch/fake" .)
"$scratch/fake" -script "$here/capture/tui.json" -log "$scratch/requests.jsonl" > "$scratch/addr" 2> "$scratch/fake.err" &
fake=$!
trap 'kill $fake 2>/dev/null; tmux -L $sock kill-server 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -s "$scratch/addr" ] && break; sleep 0.1; done
cat > "$scratch/home/config.toml" <<-EOF2
	model = "gpt-5-codex"
	model_provider = "fake"
	approval_policy = "on-request"
	sandbox_mode = "workspace-write"

	[model_providers.fake]
	name = "fake"
	base_url = "http://$(cat "$scratch/addr")/v1"
	wire_api = "responses"
	env_key = "FAKE_OPENAI_KEY"
	request_max_retries = 0
	stream_max_retries = 1

	[projects."$scratch/work"]
	trust_level = "trusted"
EOF2

timeline=$scratch/screen.jsonl
: > "$timeline"
mark() { printf '{"at":"%s","screen":"%s"}\n' "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)" "$1" >> "$timeline"; }
screen() { tmux -L $sock capture-pane -p -t tui; }
# waitfor TEXT: until the screen shows TEXT (at most 30 s).
waitfor() {
	for _ in $(seq 300); do screen | grep -qF -- "$1" && return 0; sleep 0.1; done
	echo "the screen never showed: $1" >&2; screen >&2; exit 1
}

tmux -L $sock new-session -d -s tui -x 160 -y 45 -c "$scratch/work" \
	"env CODEX_HOME=$scratch/home FAKE_OPENAI_KEY=dummy codex --disable daemon_auto_start; sleep 600"
waitfor "Ask Codex to do anything"
mark idle
tmux -L $sock send-keys -t tui "Make a file and run it."
sleep 1
tmux -L $sock send-keys -t tui Enter
mark busy
waitfor "Would you like to run the following command?"
mark approval
sleep 2
tmux -L $sock send-keys -t tui y
mark busy
rollout=$(find "$scratch/home/sessions" -name 'rollout-*.jsonl')
thread=$(basename "$rollout" .jsonl | grep -oE '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')
# The second command (sleep 3) has started once its call is in the rollout.
for _ in $(seq 100); do [ "$(grep -c '"type":"function_call"' "$rollout")" -ge 2 ] && break; sleep 0.1; done
sleep 0.5
env CODEX_HOME="$scratch/home" codex queue --thread "$thread" --message "follow-up while busy" 2>/dev/null
mark queued-busy
waitfor "Got the follow-up sent while busy."
sleep 1.5
mark idle
env CODEX_HOME="$scratch/home" codex queue --thread "$thread" --message "follow-up at idle" 2>/dev/null
mark queued-idle
waitfor "Got the follow-up sent at idle."
sleep 1.5
mark idle
ino=$(stat -c %i "$scratch/home/thread-writer-locks/$thread.lock")
holder=$(awk -v ino="$ino" '$2 == "FLOCK" { n = split($6, f, ":"); if (f[n] == ino) print $5 }' /proc/locks)
kill -9 "$holder"
mark killed
sleep 1

cp "$rollout" "$out/tui.rollout.jsonl"
cp "$timeline" "$out/tui.screen.jsonl"
cp "$scratch/requests.jsonl" "$out/tui.requests.jsonl"
echo "tui: $(wc -l < "$rollout") rollout lines, thread $thread, lock holder $holder killed"
