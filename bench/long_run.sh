#!/usr/bin/env bash
# A long run's footprint on the client (issue 45): runs STUDY on ENGINES for TIME per cell
# (15m by default: 30 minutes for two engines), THREADS connections, TABLE_SIZE rows to
# start, one repeat each, INTERVAL-s report intervals (1 by default; 0.1 runs an hour's
# worth of intervals in 6 minutes, past the bound the client keeps in memory). Samples enginebench's resident memory every
# SAMPLE_S seconds and prints, at the end: the run's wall time; RSS at its first and last
# third (medians) and their ratio (goal: flat, within 10%); the JSON record's size, per cell
# and its interval records and interval log, and the bound the record keeps
# (MAX_INTERVALS_KEPT). The record is kept in OUT (a directory; default a new temporary one),
# with the run also stored in OUT/enginebench.db, so that `enginebench report --db
# OUT/enginebench.db --html page.html` draws it.
# A benchmark, not a test: figures depend on the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
STUDY=${STUDY:-oltp_insert}
ENGINES=${ENGINES:-innodb,rocksdb}
TIME=${TIME:-15m}
THREADS=${THREADS:-4}
TABLE_SIZE=${TABLE_SIZE:-1000000}
SAMPLE_S=${SAMPLE_S:-10}
INTERVAL=${INTERVAL:-1}
OUT=${OUT:-$(mktemp -d)}
BIN=${BIN:-target/release/enginebench}
[ -x "$BIN" ] || cargo build --release --quiet
mkdir -p "$OUT"
start=$(date +%s)
"$BIN" run "$STUDY" --engines "$ENGINES" --threads "$THREADS" --table-size "$TABLE_SIZE" \
  --time "$TIME" --repeat 1 --report-interval "$INTERVAL" --db "$OUT/enginebench.db" \
  --json "$OUT/record.json" >"$OUT/stdout.txt" 2>"$OUT/stderr.txt" &
pid=$!
: >"$OUT/rss_kb.txt"
while kill -0 "$pid" 2>/dev/null; do
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
  [ -n "$rss" ] && echo "$(($(date +%s) - start)) $rss" >>"$OUT/rss_kb.txt"
  sleep "$SAMPLE_S"
done
wait "$pid" || echo "the run failed: see $OUT/stderr.txt"
end=$(date +%s)
echo "run: $STUDY on $ENGINES, $THREADS threads, $TIME per cell, $((end - start)) s in all; record in $OUT"
python3 - "$OUT" <<'PY'
import json, os, statistics, sys
out = sys.argv[1]
samples = [tuple(map(int, line.split())) for line in open(f"{out}/rss_kb.txt") if line.strip()]
third = max(1, len(samples) // 3)
first = statistics.median(kb for _, kb in samples[:third])
last = statistics.median(kb for _, kb in samples[-third:])
print(f"client RSS: median {first/1024:.1f} MB over the first third, {last/1024:.1f} MB over the last "
      f"(ratio {last/first:.2f}; max {max(kb for _, kb in samples)/1024:.1f} MB, {len(samples)} samples)")
size = os.path.getsize(f"{out}/record.json")
record = json.load(open(f"{out}/record.json"))
print(f"record: {size/1e6:.2f} MB of JSON")
for cell in record["cells"]:
    if cell.get("warmup_repeat"):
        continue
    intervals = len(json.dumps(cell["intervals"]))
    log = len(cell.get("interval_log") or "")
    print(f"  {cell['engine']}: {cell.get('wall_ms', 0)/1000:.0f} s measured, {len(cell['intervals'])} interval records"
          f" (merged by {cell.get('intervals_merged_by') or 1}) = {intervals/1e6:.2f} MB, interval log {log/1e6:.2f} MB,"
          f" whole cell {len(json.dumps(cell))/1e6:.2f} MB")
PY
