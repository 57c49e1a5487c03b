#!/usr/bin/env bash
# Records what a running interactive Claude Code writes as its session
# goes idle -> busy -> waiting (a permission prompt) -> busy -> idle,
# takes a follow-up through its messaging socket at idle and another while
# busy, and is killed (kill -9): testdata/real/live.record.jsonl, one line
# per change of its config directory with the milliseconds since the
# recording began (capture/main.go -record: registry files whole, the
# bytes appended to transcripts, key files and removals; no token).
# The CLI runs in tmux against the fake Anthropic API of capture/main.go
# (the "Walk through the live states." script, whose replies are delayed
# so each state lasts).
#
# Usage: client/claudecode/testdata/capture-live.sh   (needs go, tmux, claude or npm)
# CLAUDE=/path/to/claude skips the install.
set -euo pipefail

version=2.1.332
here=$(cd "$(dirname "$0")" && pwd)
out=$here/real/live.record.jsonl
# Fixed paths: they appear in the recording.
base=/tmp/perch-claude-live
work=$base/work
home=$base/home
conf=$home/.claude
sock=perch-claude-live

if [[ -z "${CLAUDE:-}" ]]; then
	CLAUDE=$(command -v claude || true)
	if [[ -z $CLAUDE ]] || [[ "$("$CLAUDE" --version)" != "$version "* ]]; then
		npm install -g --prefix "$base/npm" "@anthropic-ai/claude-code@$version"
		CLAUDE=$base/npm/bin/claude
	fi
fi
rm -rf "$base"
mkdir -p "$work" "$conf"
go build -o "$base/fake" "$here/capture/main.go"

pids=()
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null || true
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

"$base/fake" -addr 127.0.0.1:0 -port-file "$base/port" -cwd "$work" -log "$base/requests.jsonl" 2>"$base/fake.log" &
pids+=($!)
for _ in $(seq 50); do [[ -s $base/port ]] && break; sleep 0.1; done
cat >"$home/.claude.json" <<EOF
{"hasCompletedOnboarding":true,"lastOnboardingVersion":"$version","theme":"dark","customApiKeyResponses":{"approved":["dummy"],"rejected":[]},"projects":{"$work":{"hasTrustDialogAccepted":true,"hasCompletedProjectOnboarding":true,"allowedTools":[]}}}
EOF
"$base/fake" -record "$conf" -record-out "$base/record.jsonl" -record-stop "$base/stop" &
recorder=$!

tmux -L "$sock" new-session -d -s live -x 150 -y 40 \
	"cd $work && env -i PATH=/usr/bin:/bin:$(dirname "$CLAUDE") HOME=$home TERM=xterm-256color \
	ANTHROPIC_BASE_URL=http://127.0.0.1:$(cat "$base/port") ANTHROPIC_API_KEY=dummy \
	DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
	$CLAUDE --model claude-sonnet-4-5-20250929; sleep 600"

# status STATE: wait until the registry file says STATE.
status() {
	for _ in $(seq 300); do
		if grep -qs "\"status\":\"$1\"" "$conf"/sessions/*.json; then return 0; fi
		sleep 0.1
	done
	echo "never $1" >&2
	tmux -L "$sock" capture-pane -p -t live >&2
	exit 1
}

echo "== waiting for the prompt"
status idle
sleep 1
tmux -L "$sock" send-keys -t live "Walk through the live states." Enter
status busy
echo "== busy; waiting for the permission prompt"
status waiting
sleep 1.5
tmux -L "$sock" send-keys -t live Enter # approve the default choice
status busy
status idle
echo "== idle; a follow-up through the socket"
sleep 1
"$base/fake" -send "$conf" "First follow-up, sent at idle."
status busy
sleep 1
echo "== busy; a second follow-up"
"$base/fake" -send "$conf" "Second follow-up, sent while busy."
sleep 4
status idle
sleep 1
echo "== kill -9"
pid=$(basename "$(ls "$conf"/sessions/*.json)" .json)
kill -9 "$pid"
sleep 1.5
touch "$base/stop"
wait "$recorder"
mkdir -p "$(dirname "$out")"
cp "$base/record.jsonl" "$out"
echo "recorded $(wc -l <"$out") changes in $out"
