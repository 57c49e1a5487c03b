#!/usr/bin/env bash
# Regenerates the real Claude Code captures in testdata/real/: the real
# CLI (from npm) runs scripted scenarios against a fake Anthropic Messages
# API on loopback (capture/main.go), its real tools running real commands
# in a scratch directory. For each scenario and mode it keeps
#   real/<scenario>-<mode>.stream.jsonl    what claude -p printed
#   real/<scenario>.session.jsonl          the session file it wrote under ~/.claude/projects/
#                                          (lines mode only; the mode does not change it)
#                                          (less the CLI's own prompt text: see capture/main.go)
#   real/<scenario>-<mode>.requests.jsonl  the tool results it sent back to the model
# (mode "lines": stream-json --verbose; "partial": with --include-partial-messages).
# Then rewrite the goldens: go test ./client/claudecode/ -run TestReal -update
#
# Usage: client/claudecode/testdata/capture.sh   (from anywhere; needs go, npm)
# CLAUDE=/path/to/claude skips the install.
set -euo pipefail

version=2.1.332
here=$(cd "$(dirname "$0")" && pwd)
out=$here/real
# Fixed paths: they appear in the captures, so regenerating changes only
# ids and timestamps.
base=/tmp/perch-claude-capture
work=$base/work
home=$base/home

mkdir -p "$base" "$out"
if [[ -z "${CLAUDE:-}" ]]; then
	if [[ ! -x $base/npm/bin/claude ]] || [[ "$("$base/npm/bin/claude" --version)" != "$version "* ]]; then
		npm install -g --prefix "$base/npm" "@anthropic-ai/claude-code@$version"
	fi
	CLAUDE=$base/npm/bin/claude
fi
go build -o "$base/fake" "$here/capture/main.go"

fake_pid=
stop_fake() {
	if [[ -n $fake_pid ]]; then
		kill "$fake_pid" 2>/dev/null || true
		wait "$fake_pid" 2>/dev/null || true
	fi
	fake_pid=
}
trap stop_fake EXIT

# run SCENARIO MODE PROMPT ALLOWED [EXTRA FLAGS...]
run() {
	local scenario=$1 mode=$2 prompt=$3 allowed=$4
	shift 4
	local name=$scenario-$mode
	rm -rf "$work" "$home" "$base/port" "$base/requests.jsonl"
	mkdir -p "$work" "$home"
	"$base/fake" -addr 127.0.0.1:0 -port-file "$base/port" -cwd "$work" -log "$base/requests.jsonl" 2>"$base/$name.fake.log" &
	fake_pid=$!
	for _ in $(seq 50); do [[ -s $base/port ]] && break; sleep 0.1; done
	echo "== $name"
	(cd "$work" && HOME=$home ANTHROPIC_BASE_URL=http://127.0.0.1:$(cat "$base/port") ANTHROPIC_API_KEY=dummy \
		CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 \
		timeout 300 "$CLAUDE" -p "$prompt" --output-format stream-json --verbose \
		--model claude-sonnet-4-5-20250929 --allowedTools "$allowed" "$@" \
		>"$out/$name.stream.jsonl" 2>"$base/$name.stderr") || echo "   claude exited $? (kept: an error run may)"
	stop_fake
	cp "$base/requests.jsonl" "$out/$name.requests.jsonl"
	# The main session file (subagents write theirs in a folder beside it).
	if [[ $mode == lines ]]; then
		local session
		session=$(find "$home/.claude/projects" -maxdepth 2 -name '*.jsonl' | head -1)
		"$base/fake" -trim-session "$session" "$out/$scenario.session.jsonl"
	fi
}

# The prompts key the fake's scripts (capture/main.go).
for mode in lines partial; do
	flags=()
	[[ $mode == partial ]] && flags=(--include-partial-messages)
	run tools "$mode" "Set up notes.txt, check it, and try the build." \
		"Bash Read Write Edit TaskCreate TaskUpdate TaskList" "${flags[@]}"
	run subagent "$mode" "How many files are in this directory? Ask a subagent." \
		"Bash Agent" "${flags[@]}"
	run apierror "$mode" "Print the date, then summarize." "Bash" "${flags[@]}"
done
echo "captures in $out"
