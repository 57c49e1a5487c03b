#!/usr/bin/env bash
# Measures perch against a machine with years of Claude Code history
# (docs/live/local.md has the numbers): genlocal writes SESSIONS
# transcripts of BYTES in all and registers LIVE running sessions (sleep
# processes stand in for the CLIs), then
#   1. perch tasks --all --json: wall time and peak RSS (three runs, the
#      page cache warm after the first);
#   2. perch watch --json idle for IDLE seconds: its CPU, from /proc;
#   3. the registry files of 40 running sessions rewritten one at a time
#      (idle <-> busy): how long each takes to reach perch watch's
#      output (p50, p95, max).
#
# Usage: client/claudecode/testdata/bench-local.sh   (from anywhere; needs go, python3)
# SESSIONS=5000 BYTES=3221225472 LIVE=100 IDLE=60 BENCH_DIR=/tmp/perch-local-bench
# REUSE=1 keeps the transcripts BENCH_DIR has from an earlier run.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
base=${BENCH_DIR:-/tmp/perch-local-bench}
sessions=${SESSIONS:-5000}
bytes=${BYTES:-3221225472}
live=${LIVE:-100}
idle=${IDLE:-60}

if [[ -z ${REUSE:-} ]]; then rm -rf "$base"; fi
rm -rf "$base/state" "$base/conf"
mkdir -p "$base/state" "$base/conf"
(cd "$root" && go build -o "$base/perch" .)
go build -o "$base/gen" "$here/genlocal/main.go"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
for _ in $(seq "$live"); do
	sleep 3600 &
	pids+=($!)
done
echo "== writing $sessions sessions, $bytes bytes, $live running"
start=$(date +%s)
"$base/gen" -dir "$base/home/.claude" -sessions "$sessions" -bytes "$bytes" -live "$(IFS=,; echo "${pids[*]}")" ${REUSE:+-reuse}
echo "   written in $(($(date +%s) - start)) s; $(du -sh "$base/home/.claude" | cut -f1) on disk"

run_env=(env HOME="$base/home" XDG_STATE_HOME="$base/state" XDG_CONFIG_HOME="$base/conf" CLAUDE_CONFIG_DIR=)
echo "== perch tasks --all --json"
for i in 1 2 3; do
	/usr/bin/time -f "   run $i: %e s wall, %M KB peak RSS" "${run_env[@]}" "$base/perch" tasks --all --json >"$base/tasks.json"
done
python3 -c "import json,sys; b=json.load(open('$base/tasks.json')); print('   listed', len(b['sessions']), 'sessions')"

echo "== perch watch --json, idle ${idle}s"
"${run_env[@]}" "$base/perch" watch --json >"$base/watch.jsonl" 2>"$base/watch.err" &
watch=$!
pids+=($watch)
sleep 5
ticks() { awk '{print $14 + $15}' "/proc/$watch/stat"; }
t0=$(ticks)
sleep "$idle"
t1=$(ticks)
hz=$(getconf CLK_TCK)
python3 -c "print('   CPU: %.3f%% of a core' % (100.0 * ($t1 - $t0) / $hz / $idle))"

echo "== state changes to perch watch"
python3 - "$base" <<'EOF'
import glob, json, os, sys, time
base = sys.argv[1]
regs = sorted(glob.glob(base + "/home/.claude/sessions/*.json"))[:40]
sent = []
for i, p in enumerate(regs):
    r = json.load(open(p))
    r["status"] = "busy"
    r["statusUpdatedAt"] = int(time.time() * 1000)
    tmp = p + ".tmp"
    with open(tmp, "w") as f:
        json.dump(r, f)
    t = time.time()
    os.rename(tmp, p)
    sent.append((r["sessionId"], t))
    time.sleep(0.3)
time.sleep(2)
seen = {}
for line in open(base + "/watch.jsonl"):
    c = json.loads(line)
    if c.get("new") == "generating" and c["session"] not in seen:
        at = c["at"]
        # RFC 3339 with nanoseconds, UTC
        from datetime import datetime, timezone
        sec, frac = at.rstrip("Z").split(".") if "." in at else (at.rstrip("Z"), "0")
        ts = datetime.strptime(sec, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp() + float("0." + frac)
        seen[c["session"]] = ts
lat = sorted((seen[s] - t) * 1000 for s, t in sent if s in seen)
missing = sum(1 for s, _ in sent if s not in seen)
if not lat:
    print("   no change seen", missing)
else:
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
    print("   %d changes: p50 %.0f ms, p95 %.0f ms, max %.0f ms; %d not seen" % (len(lat), p(0.5), p(0.95), lat[-1], missing))
EOF
