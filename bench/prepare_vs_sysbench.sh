#!/usr/bin/env bash
# Preparing sysbench's sbtest table (ROWS rows, its schema, secondary index on k):
# enginebench's default load method vs `sysbench oltp_read_write prepare`, both over
# loopback TCP to one throwaway server, alternated ROUNDS times; prints medians and ratio.
# A benchmark, not a test: run it on a quiet machine. Goal: ratio >= 3.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${ROWS:-1000000}
ROUNDS=${ROUNDS:-3}

source bench/throwaway_server.sh
drop() { mariadb --socket="$socket" -uroot enginebench -e "DROP TABLE IF EXISTS sbtest1"; }
# Prints "wall_s client_cpu_s" of a command (the client only: the server is not its child).
seconds() { /usr/bin/time -o "$work/time" -f "%e %U %S" "$@" >/dev/null 2>"$work/last.err" || { cat "$work/last.err"; exit 1; }; awk '{printf "%s %.2f\n", $1, $2 + $3}' "$work/time"; }

echo "prepare sbtest1 with $ROWS rows, $ROUNDS rounds, loopback TCP port $port"
for round in $(seq "$ROUNDS"); do
  run_sysbench() {
    drop
    seconds sysbench oltp_read_write --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" \
      --mysql-user=root --mysql-db=enginebench --tables=1 --table-size="$ROWS" prepare >>"$work/sysbench.times"
  }
  run_enginebench() {
    drop
    seconds "$eb" prepare sbtest --tables 1 --table-size "$ROWS" --dsn "mysql://root@127.0.0.1:$port" >>"$work/enginebench.times"
  }
  # Alternate which goes first, so drift on a noisy machine favours neither.
  if [ $((round % 2)) -eq 1 ]; then run_sysbench; run_enginebench; else run_enginebench; run_sysbench; fi
  read -r sb_wall sb_cpu < <(tail -1 "$work/sysbench.times")
  read -r eb_wall eb_cpu < <(tail -1 "$work/enginebench.times")
  echo "round $round: sysbench ${sb_wall} s (client CPU ${sb_cpu} s), enginebench ${eb_wall} s (client CPU ${eb_cpu} s)"
done
median() { cut -d' ' -f"$2" "$1" | sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
sb=$(median "$work/sysbench.times" 1); ebm=$(median "$work/enginebench.times" 1)
sbc=$(median "$work/sysbench.times" 2); ebc=$(median "$work/enginebench.times" 2)
printf 'median wall: sysbench prepare %.2f s, enginebench prepare %.2f s, ratio %.2fx (goal >= 3x)\n' "$sb" "$ebm" "$(echo "$sb / $ebm" | bc -l)"
printf 'median client CPU: sysbench %.2f s, enginebench %.2f s, ratio %.2fx\n' "$sbc" "$ebc" "$(echo "$sbc / $ebc" | bc -l)"
