#!/usr/bin/env bash
# TPC-C: enginebench's built-in kind vs the public Lua TPC-C for sysbench
# (Percona-Lab/sysbench-tpcc, run with Debian's sysbench 1.0.20), on one throwaway server
# (buffer pool BUFFER_POOL), alternated ROUNDS times; prints each round and the medians.
#   load:  WAREHOUSES warehouses, wall time (sysbench: tpcc.lua prepare with --threads=$(nproc);
#          enginebench: run tpcc --events 1, which loads, runs one transaction, checks and drops)
#   run:   THREADS threads for TIME seconds on freshly loaded tables; client CPU per transaction
#          (sysbench: its process's CPU over its transactions; enginebench: the cell's client CPU
#          over its transactions, from the record)
# The Lua script is fetched, never kept in this project: SYSBENCH_TPCC_DIR names a checkout,
# else it is cloned from GitHub into the scratch directory.
# Goals (issue 29): load <= 1/3 of sysbench-tpcc's; client CPU per transaction <= 0.7x its.
set -euo pipefail
cd "$(dirname "$0")/.."
WAREHOUSES=${WAREHOUSES:-2}
THREADS=${THREADS:-4}
TIME=${TIME:-20}
ROUNDS=${ROUNDS:-3}
BUFFER_POOL=${BUFFER_POOL:-1G}
SERVER_ARGS="--server-opt innodb_buffer_pool_size=$BUFFER_POOL ${SERVER_ARGS:-}"
source bench/throwaway_server.sh
tpcc_dir=${SYSBENCH_TPCC_DIR:-$work/sysbench-tpcc}
if [ ! -f "$tpcc_dir/tpcc.lua" ]; then
  git clone -q https://github.com/Percona-Lab/sysbench-tpcc "$tpcc_dir" || {
    echo "cannot fetch Percona-Lab/sysbench-tpcc: set SYSBENCH_TPCC_DIR to a checkout of it"; exit 1; }
fi
dsn="mysql://root@127.0.0.1:$port"
# sysbench-tpcc's command line (it finds tpcc_common.lua beside it: run from its directory).
sb=(sysbench "$tpcc_dir/tpcc.lua" --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port"
  --mysql-user=root --mysql-db=enginebench --tables=1 --scale="$WAREHOUSES")
cd "$tpcc_dir"
# Prints "wall_s client_cpu_s" of a command.
seconds() { /usr/bin/time -o "$work/time" -f "%e %U %S" "$@" >"$work/last.out" 2>"$work/last.err" || { cat "$work/last.err"; exit 1; }; awk '{printf "%s %.2f\n", $1, $2 + $3}' "$work/time"; }
median() { sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

echo "TPC-C, $WAREHOUSES warehouse(s), $THREADS threads for $TIME s, $ROUNDS rounds, buffer pool $BUFFER_POOL, loopback TCP port $port"
sb_load() {
  "${sb[@]}" --threads="$(nproc)" cleanup >/dev/null 2>&1 || true
  read -r wall _ < <(seconds "${sb[@]}" --threads="$(nproc)" prepare)
  echo "$wall" >>"$work/sb.load"
  read -r _ cpu < <(seconds "${sb[@]}" --threads="$THREADS" --time="$TIME" run)
  tx=$(grep -o 'transactions: *[0-9]*' "$work/last.out" | grep -o '[0-9]*$')
  echo "$tx" >>"$work/sb.tx"
  echo "$cpu $tx" | awk '{printf "%.1f\n", $1 * 1e6 / $2}' >>"$work/sb.cpu"
  "${sb[@]}" --threads="$(nproc)" cleanup >/dev/null 2>&1
}
eb_load() {
  read -r wall _ < <(seconds "$eb" run tpcc --dsn "$dsn" --warehouses "$WAREHOUSES" --events 1 --no-db)
  echo "$wall" >>"$work/eb.load"
  seconds "$eb" run tpcc --dsn "$dsn" --warehouses "$WAREHOUSES" --threads "$THREADS" --time "${TIME}s" --no-db --json "$work/eb.json" >/dev/null
  python3 - "$work/eb.json" >>"$work/eb.cpu" <<'PY'
import json, sys
cell = json.load(open(sys.argv[1]))["cells"][0]
print(f'{cell["client_cpu_us"] / max(cell["events"], 1):.1f} {cell["events"]}')
PY
}
for round in $(seq "$ROUNDS"); do
  # Alternate which goes first, so drift on a noisy machine favours neither.
  if [ $((round % 2)) -eq 1 ]; then sb_load; eb_load; else eb_load; sb_load; fi
  read -r eb_cpu eb_tx < <(tail -1 "$work/eb.cpu")
  echo "round $round: load sysbench-tpcc $(tail -1 "$work/sb.load") s, enginebench $(tail -1 "$work/eb.load") s;" \
    "client CPU per transaction sysbench-tpcc $(tail -1 "$work/sb.cpu") µs ($(tail -1 "$work/sb.tx") tx), enginebench $eb_cpu µs ($eb_tx tx)"
done
sb_load_m=$(median <"$work/sb.load"); eb_load_m=$(median <"$work/eb.load")
sb_cpu_m=$(median <"$work/sb.cpu"); eb_cpu_m=$(cut -d' ' -f1 "$work/eb.cpu" | median)
sb_tx_m=$(median <"$work/sb.tx"); eb_tx_m=$(cut -d' ' -f2 "$work/eb.cpu" | median)
printf 'median load: sysbench-tpcc %.1f s, enginebench %.1f s: %.2fx (goal <= 0.33x)\n' "$sb_load_m" "$eb_load_m" "$(echo "$eb_load_m / $sb_load_m" | bc -l)"
printf 'median client CPU per transaction: sysbench-tpcc %.1f µs, enginebench %.1f µs: %.2fx (goal <= 0.7x)\n' "$sb_cpu_m" "$eb_cpu_m" "$(echo "$eb_cpu_m / $sb_cpu_m" | bc -l)"
printf 'median transactions/s at %s threads: sysbench-tpcc %.0f, enginebench %.0f\n' "$THREADS" "$(echo "$sb_tx_m / $TIME" | bc -l)" "$(echo "$eb_tx_m / $TIME" | bc -l)"
