#!/usr/bin/env bash
# Records ccusage's reports on the comparison corpus (index/ccusage_test.go):
# the generated session files with the counting pitfalls and the real
# Claude Code captures, in a Claude config directory of their own.
#
# Usage: index/testdata/ccusage.sh   (needs go and ccusage; CCUSAGE=path/to/cli.js picks one)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
config=$(mktemp -d)
trap 'rm -rf "$config"' EXIT
(cd "$here/.." && go test . -run '^TestAgainstCCUsage$' -count=1 -corpus "$config" >/dev/null)
ccusage=(ccusage)
if [[ -n ${CCUSAGE:-} ]]; then ccusage=(node "$CCUSAGE"); fi
"${ccusage[@]}" --version >"$here/ccusage/VERSION"
for report in session daily; do
	CLAUDE_CONFIG_DIR=$config TZ=UTC "${ccusage[@]}" "$report" --json --offline >"$here/ccusage/$report.json"
done
