#!/usr/bin/env bash
# Records a real Claude Code session with a subagent, whole (the session
# file and its subagents/ folder), for the index's comparison with ccusage:
# the real CLI (from npm) runs client/claudecode's subagent scenario
# against that package's fake Anthropic API on loopback
# (client/claudecode/testdata/capture/main.go). It writes
#   claude/projects/<project>/<session>.jsonl
#   claude/projects/<project>/<session>/subagents/agent-<id>.jsonl
# (less the CLI's own prompt text), then run index/testdata/ccusage.sh.
#
# Usage: index/testdata/capture.sh   (needs go, npm; CLAUDE=/path/to/claude skips the install)
set -euo pipefail

version=2.1.332
here=$(cd "$(dirname "$0")" && pwd)
fake_src=$here/../../client/claudecode/testdata/capture/main.go
out=$here/claude/projects/-tmp-perch-index-capture-work
base=/tmp/perch-index-capture
work=$base/work
home=$base/home
rm -rf "$work" "$home" "$out"
mkdir -p "$base" "$work" "$home" "$out"
if [[ -z "${CLAUDE:-}" ]]; then
	if [[ ! -x $base/npm/bin/claude ]] || [[ "$("$base/npm/bin/claude" --version)" != "$version "* ]]; then
		npm install -g --prefix "$base/npm" "@anthropic-ai/claude-code@$version"
	fi
	CLAUDE=$base/npm/bin/claude
fi
go build -o "$base/fake" "$fake_src"
"$base/fake" -addr 127.0.0.1:0 -port-file "$base/port" -cwd "$work" -log "$base/requests.jsonl" 2>"$base/fake.log" &
fake_pid=$!
trap 'kill $fake_pid 2>/dev/null || true; wait $fake_pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do [[ -s $base/port ]] && break; sleep 0.1; done
(cd "$work" && HOME=$home ANTHROPIC_BASE_URL=http://127.0.0.1:$(cat "$base/port") ANTHROPIC_API_KEY=dummy \
	CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 \
	timeout 300 "$CLAUDE" -p "How many files are in this directory? Ask a subagent." --output-format stream-json --verbose \
	--model claude-sonnet-4-5-20250929 --allowedTools "Bash Agent" >/dev/null 2>"$base/claude.stderr")
cd "$home/.claude/projects"
find . -name '*.jsonl' | while read -r f; do
	mkdir -p "$out/$(dirname "${f#./*/}")"
	"$base/fake" -trim-session "$f" "$out/${f#./*/}"
done
find "$out" -type f
