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
# Prints per counter the median per transaction of each, the ratio, and the range of the
# rounds' ratios. Both draw at random (enginebench with the round's number as its --seed), so
# each round's counts differ a little; enginebench runs sysbench-tpcc's weights
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
# SB_NURAND_C=enginebench (the default): sysbench-tpcc's NURand constants C set to
# enginebench's (loader C_LAST 157; run C_LAST 223, C_ID 259, OL_I_ID 7911) in the copy of
# its scripts the bench runs, through the environment. sysbench-tpcc draws them at random
# in each process, so how many customers share the last name a Payment or Order-Status
# looks up differs from run to run, and with it the index entries read. SB_NURAND_C=random
# keeps its own draw, to see that spread.
# TRANSACTION=each runs the five types one after another (ROUNDS rounds each, EVENTS
# transactions, 80 Deliveries) and ends with a table of every type's ratios and the mix's
# weights applied to the per-type medians: each tool's counters per transaction of the mix,
# free of which types a mixed run happened to draw.
# PURGE=hold (the default, bench/status_per_event.sh): a snapshot held open over each tool's
# transactions keeps InnoDB's purge out of the window; PURGE=run lets it run.
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
SB_NURAND_C=${SB_NURAND_C:-enginebench}
if [ "$TRANSACTION" = each ]; then
  medians=$(mktemp)
  trap 'rm -f "$medians"' EXIT
  for type in new_order payment orderstatus delivery stocklevel; do
    events=$EVENTS
    [ "$type" = delivery ] && events=80
    TRANSACTION=$type EVENTS=$events MEDIANS_OUT=$medians bash "$0"
    echo
  done
  python3 - "$medians" <<'PY'
import sys
sys.path.insert(0, "bench")
from within5 import judged
# tpcc.lua's draw of 1..23: 10 New-Order, 10 Payment, 1 each of the others.
weights = {"new_order": 10, "payment": 10, "orderstatus": 1, "delivery": 1, "stocklevel": 1}
medians = {}
for kind, counter, sb, eb in (line.split() for line in open(sys.argv[1])):
    medians.setdefault(counter, {})[kind] = (float(sb), float(eb))
print("Per type (ratio enginebench / sysbench-tpcc) and the mix's weights applied to the per-type medians:")
print(f"{'counter':36}" + "".join(f"{kind:>12}" for kind in weights) + f"{'mix sb':>10}{'mix eb':>10}{'ratio':>8}")
outside = compared = 0
for counter, by_kind in medians.items():
    ratios = []
    for kind in weights:
        sb, eb = by_kind.get(kind, (0.0, 0.0))
        ratios.append(f"{eb / sb:12.3f}" if sb else f"{'-':>12}")
    total = sum(weights.values())
    sb_mix = sum(w * by_kind.get(k, (0.0, 0.0))[0] for k, w in weights.items()) / total
    eb_mix = sum(w * by_kind.get(k, (0.0, 0.0))[1] for k, w in weights.items()) / total
    ratio = eb_mix / sb_mix if sb_mix else float("nan")
    counted, flag = judged(sb_mix, eb_mix)
    compared += counted
    outside += bool(flag)
    print(f"{counter:36}" + "".join(ratios) + f"{sb_mix:10.3f}{eb_mix:10.3f}{ratio:8.3f}{flag}")
print(f"{compared} counters >= 0.05 per transaction of the mix compared; {outside} outside 0.95-1.05")
PY
  exit 0
fi
case "$TRANSACTION" in
  "") mix=10,10,1,1,1 ;;
  new_order) mix=1,0,0,0,0 ;;
  payment) mix=0,1,0,0,0 ;;
  orderstatus) mix=0,0,1,0,0 ;;
  delivery) mix=0,0,0,1,0 ;;
  stocklevel) mix=0,0,0,0,1 ;;
  *) echo "TRANSACTION=$TRANSACTION: give new_order, payment, orderstatus, delivery, stocklevel or each (or none for the mix)"; exit 2 ;;
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
# sysbench-tpcc runs from a copy of its scripts (the checkout is left as it is): its NURand
# constants read from the environment where given, and the wrapper of one transaction.
run_dir=$work/sysbench-tpcc-run
mkdir -p "$run_dir" && cp "$tpcc_dir"/*.lua "$run_dir/"
for c in 255 1023 8191; do
  sed -i "s/^\(\s*\)C_$c = sysbench.rand.uniform(0, $c)/\1C_$c = tonumber(os.getenv(\"TPCC_C_$c\")) or sysbench.rand.uniform(0, $c)/" "$run_dir/tpcc_common.lua"
done
[ "$(grep -c 'os.getenv("TPCC_C_' "$run_dir/tpcc_common.lua")" = 3 ] || {
  echo "sysbench-tpcc's NURand constants not found in $tpcc_dir/tpcc_common.lua"; exit 1; }
case "$SB_NURAND_C" in
  enginebench) load_c=(env TPCC_C_255=157) run_c=(env TPCC_C_255=223 TPCC_C_1023=259 TPCC_C_8191=7911) ;;
  random) load_c=(env) run_c=(env) ;;
  *) echo "SB_NURAND_C=$SB_NURAND_C: give enginebench or random"; exit 2 ;;
esac
sb=("${load_c[@]}" sysbench "$run_dir/tpcc.lua" "${sb_options[@]}")
# The run: tpcc.lua's mix, or one transaction alone through a wrapper of its functions.
sb_run=("${run_c[@]}" sysbench "$run_dir/tpcc.lua" "${sb_options[@]}")
if [ -n "$TRANSACTION" ]; then
  cat >"$run_dir/tpcc_one.lua" <<LUA
require("tpcc_common")
require("tpcc_run")
function thread_init() drv, con = db_connection_init() end
function thread_done() con:disconnect() end
function event() $TRANSACTION() end
LUA
  sb_run=("${run_c[@]}" sysbench "$run_dir/tpcc_one.lua" "${sb_options[@]}")
fi
sql() { mariadb --socket="$socket" -uroot enginebench -e "$1"; }
source bench/status_per_event.sh
sb_round() {
  (cd "$run_dir" && "${sb[@]}" --threads=2 cleanup >/dev/null 2>&1 || true)
  (cd "$run_dir" && "${sb[@]}" --threads=2 prepare >/dev/null 2>"$work/err") || { cat "$work/err"; exit 1; }
  if [ "$SB_EXTRA_INDEXES" = drop ]; then
    sql "ALTER TABLE stock1 DROP INDEX fkey_stock_21; ALTER TABLE order_line1 DROP INDEX fkey_order_line_21;
         ALTER TABLE history1 DROP INDEX fkey_history_11, DROP INDEX fkey_history_21"
  fi
  hold_purge
  status "$work/before"
  (cd "$run_dir" && "${sb_run[@]}" --threads="$THREADS" --events="$EVENTS" --time=0 run >"$work/out" 2>"$work/err") || { cat "$work/err"; exit 1; }
  status "$work/after"
  release_purge
  events=$(grep -o 'transactions: *[0-9]*' "$work/out" | grep -o '[0-9]*$')
  per_event sysbench-tpcc "$work/before" "$work/after" "$events" >>"$work/per_event"
  (cd "$run_dir" && "${sb[@]}" --threads=2 cleanup >/dev/null 2>&1)
}
eb_round() { # round: its seed, so that each round draws other transactions, as sysbench-tpcc's do
  hold_purge
  "$eb" run tpcc --dsn "$dsn" --warehouses "$WAREHOUSES" --mix "$mix" --threads "$THREADS" --events "$EVENTS" \
    --seed "$1" --repeat 1 --no-crash --no-db --json "$work/eb.json" >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
  release_purge
  python3 - "$work/eb.json" "$COUNTERS" >>"$work/per_event" <<'PY'
import json, sys
cell = json.load(open(sys.argv[1]))["cells"][0]
delta, events = cell["server_status_delta"], float(cell["events"])
for counter in sys.argv[2].split():
    print("enginebench", counter, delta.get(counter, 0) / events)
PY
}
echo "TPC-C engine counters per transaction: ${TRANSACTION:-the mix} ($mix), sysbench-tpcc's extra indexes: $SB_EXTRA_INDEXES, its NURand C: $SB_NURAND_C, purge: $PURGE, $WAREHOUSES warehouse(s), $EVENTS transactions on $THREADS thread(s), $ROUNDS rounds (load $(cut -d' ' -f1-3 /proc/loadavg))"
: >"$work/per_event"
for round in $(seq "$ROUNDS"); do
  if [ $((round % 2)) -eq 1 ]; then sb_round; eb_round "$round"; else eb_round "$round"; sb_round; fi
  echo "round $round done"
done
python3 - "$work/per_event" "${MEDIANS_OUT:-}" "${TRANSACTION:-mix}" <<'PY'
import sys, statistics
sys.path.insert(0, "bench")
from within5 import judged
values = {}
for tool, counter, value in (line.split() for line in open(sys.argv[1])):
    values.setdefault(counter, {}).setdefault(tool, []).append(float(value))
print(f"{'counter':36}{'sysbench-tpcc':>15}{'enginebench':>13}{'ratio':>8}{'rounds':>14}")
outside = compared = 0
for counter, by_tool in values.items():
    sb = statistics.median(by_tool.get("sysbench-tpcc", [0.0]))
    eb = statistics.median(by_tool.get("enginebench", [0.0]))
    ratio = eb / sb if sb else float("inf") if eb else float("nan")
    # Each round's ratio (its enginebench run over its sysbench-tpcc run): the spread.
    ratios = [e / s for s, e in zip(by_tool.get("sysbench-tpcc", []), by_tool.get("enginebench", [])) if s]
    spread = f"{min(ratios):.3f}-{max(ratios):.3f}" if ratios else "-"
    counted, flag = judged(sb, eb)
    compared += counted
    outside += bool(flag)
    print(f"{counter:36}{sb:15.3f}{eb:13.3f}{ratio:8.3f}{spread:>14}{flag}")
    if sys.argv[2]:
        with open(sys.argv[2], "a") as medians:
            print(sys.argv[3], counter, sb, eb, file=medians)
print(f"{compared} counters >= 0.05 per transaction compared; {outside} outside 0.95-1.05")
PY
