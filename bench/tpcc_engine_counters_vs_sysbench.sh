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
# Prints per counter the median per transaction of each and the ratio. Both draw the mix at
# random, so each round's counts differ a little; enginebench runs sysbench-tpcc's weights
# (tpcc.lua draws 1..23: 10 new-order, 10 payment, 1 each of the others: --mix 10,10,1,1,1)
# rather than its own default 45,43,4,4,4, since a heavier share of Delivery and Stock-Level
# is more rows read per transaction, not a different engine path.
# TRANSACTION=new_order|payment|orderstatus|delivery|stocklevel runs that one alone in both
# (sysbench-tpcc through a wrapper script calling its function; keep EVENTS under 90 for
# delivery: each takes a new order from each district, 900 of which are loaded).
# SB_EXTRA_INDEXES=drop: sysbench-tpcc's tables without the four secondary indexes its
# foreign keys need and enginebench's schema does not have (stock by item, order lines by
# supplying warehouse and item, history by customer and by district): prepared with
# --use_fk=0 and dropped before the run, so what they cost the engine can be measured.
# Issue 66: engine-level parity beside the Com_* checks.
# The Lua script is fetched, never kept in this project: SYSBENCH_TPCC_DIR names a checkout,
# else it is cloned from GitHub into the scratch directory.
set -euo pipefail
cd "$(dirname "$0")/.."
WAREHOUSES=${WAREHOUSES:-1}
EVENTS=${EVENTS:-2000}
THREADS=${THREADS:-1}
ROUNDS=${ROUNDS:-3}
COUNTERS=${COUNTERS:-"Handler_read_key Handler_read_next Handler_read_prev Handler_read_first Handler_update Handler_write Handler_delete Innodb_buffer_pool_read_requests Innodb_rows_read Innodb_rows_updated Innodb_rows_inserted Innodb_rows_deleted Com_select Com_update Com_insert Com_delete Com_commit Com_rollback"}
TRANSACTION=${TRANSACTION:-}
SB_EXTRA_INDEXES=${SB_EXTRA_INDEXES:-keep}
case "$TRANSACTION" in
  "") mix=10,10,1,1,1 ;;
  new_order) mix=1,0,0,0,0 ;;
  payment) mix=0,1,0,0,0 ;;
  orderstatus) mix=0,0,1,0,0 ;;
  delivery) mix=0,0,0,1,0 ;;
  stocklevel) mix=0,0,0,0,1 ;;
  *) echo "TRANSACTION=$TRANSACTION: give new_order, payment, orderstatus, delivery or stocklevel (or none for the mix)"; exit 2 ;;
esac
case "$SB_EXTRA_INDEXES" in
  keep) use_fk=1 ;;
  drop) use_fk=0 ;;
  *) echo "SB_EXTRA_INDEXES=$SB_EXTRA_INDEXES: give keep (sysbench-tpcc's own tables) or drop"; exit 2 ;;
esac
source bench/throwaway_server.sh
tpcc_dir=${SYSBENCH_TPCC_DIR:-$work/sysbench-tpcc}
if [ ! -f "$tpcc_dir/tpcc.lua" ]; then
  git clone -q https://github.com/Percona-Lab/sysbench-tpcc "$tpcc_dir" || {
    echo "cannot fetch Percona-Lab/sysbench-tpcc: set SYSBENCH_TPCC_DIR to a checkout of it"; exit 1; }
fi
export ENGINEBENCH_DB="$work/eb.db"
dsn="mysql://root@localhost?socket=$socket"
sb_options=(--db-driver=mysql --mysql-socket="$socket" --mysql-user=root --mysql-db=enginebench
  --tables=1 --scale="$WAREHOUSES" --use_fk="$use_fk")
sb=(sysbench "$tpcc_dir/tpcc.lua" "${sb_options[@]}")
# The run: tpcc.lua's mix, or one transaction alone through a wrapper of its functions,
# beside a copy of its scripts (the checkout is left as it is) so `require` finds them.
sb_run=("${sb[@]}")
run_dir=$tpcc_dir
if [ -n "$TRANSACTION" ]; then
  run_dir=$work/sysbench-tpcc-one
  mkdir -p "$run_dir" && cp "$tpcc_dir"/*.lua "$run_dir/"
  cat >"$run_dir/tpcc_one.lua" <<LUA
require("tpcc_common")
require("tpcc_run")
function thread_init() drv, con = db_connection_init() end
function thread_done() con:disconnect() end
function event() $TRANSACTION() end
LUA
  sb_run=(sysbench "$run_dir/tpcc_one.lua" "${sb_options[@]}")
fi
sql() { mariadb --socket="$socket" -uroot enginebench -e "$1"; }
source bench/status_per_event.sh
sb_round() {
  (cd "$tpcc_dir" && "${sb[@]}" --threads=2 cleanup >/dev/null 2>&1 || true)
  (cd "$tpcc_dir" && "${sb[@]}" --threads=2 prepare >/dev/null 2>"$work/err") || { cat "$work/err"; exit 1; }
  if [ "$SB_EXTRA_INDEXES" = drop ]; then
    sql "ALTER TABLE stock1 DROP INDEX fkey_stock_21; ALTER TABLE order_line1 DROP INDEX fkey_order_line_21;
         ALTER TABLE history1 DROP INDEX fkey_history_11, DROP INDEX fkey_history_21"
  fi
  status "$work/before"
  (cd "$run_dir" && "${sb_run[@]}" --threads="$THREADS" --events="$EVENTS" --time=0 run >"$work/out" 2>"$work/err") || { cat "$work/err"; exit 1; }
  status "$work/after"
  events=$(grep -o 'transactions: *[0-9]*' "$work/out" | grep -o '[0-9]*$')
  per_event sysbench-tpcc "$work/before" "$work/after" "$events" >>"$work/per_event"
  (cd "$tpcc_dir" && "${sb[@]}" --threads=2 cleanup >/dev/null 2>&1)
}
eb_round() {
  "$eb" run tpcc --dsn "$dsn" --warehouses "$WAREHOUSES" --mix "$mix" --threads "$THREADS" --events "$EVENTS" \
    --repeat 1 --no-crash --no-db --json "$work/eb.json" >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
  python3 - "$work/eb.json" "$COUNTERS" >>"$work/per_event" <<'PY'
import json, sys
cell = json.load(open(sys.argv[1]))["cells"][0]
delta, events = cell["server_status_delta"], float(cell["events"])
for counter in sys.argv[2].split():
    print("enginebench", counter, delta.get(counter, 0) / events)
PY
}
echo "TPC-C engine counters per transaction: ${TRANSACTION:-the mix} ($mix), sysbench-tpcc's extra indexes: $SB_EXTRA_INDEXES, $WAREHOUSES warehouse(s), $EVENTS transactions on $THREADS thread(s), $ROUNDS rounds (load $(cut -d' ' -f1-3 /proc/loadavg))"
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
