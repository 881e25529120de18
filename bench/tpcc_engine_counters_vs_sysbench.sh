#!/usr/bin/env bash
# TPC-C inside the engine: enginebench's built-in kind against the public Lua TPC-C for
# sysbench (Percona-Lab/sysbench-tpcc, run with Debian's sysbench 1.0.20), on one throwaway
# server, WAREHOUSES warehouses, EVENTS transactions on THREADS threads, alternated ROUNDS
# times. Each tool loads its own tables (sysbench-tpcc: prepare; enginebench: the run's own
# load), and the engine's counters are taken over the transactions alone:
#   sysbench-tpcc  SHOW GLOBAL STATUS read before and after its `run`
#   enginebench    the cell's server_status_delta in the record (its window: the measured
#                  transactions; it also holds the interval reads of SHOW GLOBAL STATUS,
#                  which add Handler_read_rnd_next and Handler_tmp_write, not reads of tables)
# Prints per counter the median per transaction of each and the ratio; the mix is drawn at
# random by both (45% new-order, 43% payment, 4% each of the others), so each round's
# counts differ a little. Issue 66: engine-level parity beside the Com_* checks.
# The Lua script is fetched, never kept in this project: SYSBENCH_TPCC_DIR names a checkout,
# else it is cloned from GitHub into the scratch directory.
set -euo pipefail
cd "$(dirname "$0")/.."
WAREHOUSES=${WAREHOUSES:-1}
EVENTS=${EVENTS:-2000}
THREADS=${THREADS:-1}
ROUNDS=${ROUNDS:-3}
COUNTERS=${COUNTERS:-"Handler_read_key Handler_read_next Handler_read_prev Handler_read_first Handler_update Handler_write Handler_delete Innodb_buffer_pool_read_requests Innodb_rows_read Innodb_rows_updated Innodb_rows_inserted Innodb_rows_deleted Com_select Com_update Com_insert Com_delete Com_commit Com_rollback"}
source bench/throwaway_server.sh
tpcc_dir=${SYSBENCH_TPCC_DIR:-$work/sysbench-tpcc}
if [ ! -f "$tpcc_dir/tpcc.lua" ]; then
  git clone -q https://github.com/Percona-Lab/sysbench-tpcc "$tpcc_dir" || {
    echo "cannot fetch Percona-Lab/sysbench-tpcc: set SYSBENCH_TPCC_DIR to a checkout of it"; exit 1; }
fi
export ENGINEBENCH_DB="$work/eb.db"
dsn="mysql://root@localhost?socket=$socket"
sb=(sysbench "$tpcc_dir/tpcc.lua" --db-driver=mysql --mysql-socket="$socket" --mysql-user=root
  --mysql-db=enginebench --tables=1 --scale="$WAREHOUSES")
source bench/status_per_event.sh
sb_round() {
  (cd "$tpcc_dir" && "${sb[@]}" --threads=2 cleanup >/dev/null 2>&1 || true)
  (cd "$tpcc_dir" && "${sb[@]}" --threads=2 prepare >/dev/null 2>"$work/err") || { cat "$work/err"; exit 1; }
  status "$work/before"
  (cd "$tpcc_dir" && "${sb[@]}" --threads="$THREADS" --events="$EVENTS" --time=0 run >"$work/out" 2>"$work/err") || { cat "$work/err"; exit 1; }
  status "$work/after"
  events=$(grep -o 'transactions: *[0-9]*' "$work/out" | grep -o '[0-9]*$')
  per_event sysbench-tpcc "$work/before" "$work/after" "$events" >>"$work/per_event"
  (cd "$tpcc_dir" && "${sb[@]}" --threads=2 cleanup >/dev/null 2>&1)
}
eb_round() {
  "$eb" run tpcc --dsn "$dsn" --warehouses "$WAREHOUSES" --threads "$THREADS" --events "$EVENTS" \
    --repeat 1 --no-crash --no-db --json "$work/eb.json" >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
  python3 - "$work/eb.json" "$COUNTERS" >>"$work/per_event" <<'PY'
import json, sys
cell = json.load(open(sys.argv[1]))["cells"][0]
delta, events = cell["server_status_delta"], float(cell["events"])
for counter in sys.argv[2].split():
    print("enginebench", counter, delta.get(counter, 0) / events)
PY
}
echo "TPC-C engine counters per transaction: $WAREHOUSES warehouse(s), $EVENTS transactions on $THREADS thread(s), $ROUNDS rounds (load $(cut -d' ' -f1-3 /proc/loadavg))"
: >"$work/per_event"
for round in $(seq "$ROUNDS"); do
  if [ $((round % 2)) -eq 1 ]; then sb_round; eb_round; else eb_round; sb_round; fi
  echo "round $round done"
done
python3 - "$work/per_event" <<'PY'
import sys, statistics
values = {}
for tool, counter, value in (line.split() for line in open(sys.argv[1])):
    values.setdefault(counter, {}).setdefault(tool, []).append(float(value))
print(f"{'counter':36}{'sysbench-tpcc':>15}{'enginebench':>13}{'ratio':>8}")
outside = compared = 0
for counter, by_tool in values.items():
    sb = statistics.median(by_tool.get("sysbench-tpcc", [0.0]))
    eb = statistics.median(by_tool.get("enginebench", [0.0]))
    ratio = eb / sb if sb else float("inf") if eb else float("nan")
    flag = ""
    if max(sb, eb) >= 0.05:
        compared += 1
        if not 0.95 <= ratio <= 1.05:
            outside += 1
            flag = "   <- outside 5%"
    print(f"{counter:36}{sb:15.3f}{eb:13.3f}{ratio:8.3f}{flag}")
print(f"{compared} counters >= 0.05 per transaction compared; {outside} outside 0.95-1.05")
PY
