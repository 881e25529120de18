#!/usr/bin/env bash
# Preparing sysbench's sbtest tables (TABLES of ROWS rows, its schema, secondary index on k):
# enginebench's default load method vs `sysbench oltp_read_write prepare`, both over
# loopback TCP to one throwaway server, alternated ROUNDS times; prints medians and ratio.
# Also the floor, in the same rounds: the server's own ingest, the `mariadb` client's
# LOAD DATA LOCAL INFILE of a pre-generated file plus the k index build; and enginebench
# with each load variant of EB_VARIANTS (chunk rows, connections), to choose the default.
# With TABLES > 1 the floor runs one `mariadb` client per table at once, and sysbench
# prepares with --threads=SB_THREADS (default: the CPUs), its way of loading tables side by side.
# A benchmark, not a test: run it on a quiet machine. Goal: enginebench <= 1.15x the floor.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${ROWS:-1000000}
ROUNDS=${ROUNDS:-3}
TABLES=${TABLES:-1}
SB_THREADS=${SB_THREADS:-$(nproc)}
# Extra enginebench variants, ';'-separated flag sets (the default runs always).
EB_VARIANTS=${EB_VARIANTS:-"--chunk-rows 10000;--chunk-rows 1000000 --parallel-load 1"}

source bench/throwaway_server.sh
drop() { for t in $(seq "$TABLES"); do mariadb --socket="$socket" -uroot enginebench -e "DROP TABLE IF EXISTS sbtest$t"; done; }
# Prints "wall_s client_cpu_s" of a command (the client only: the server is not its child).
seconds() { /usr/bin/time -o "$work/time" -f "%e %U %S" "$@" >/dev/null 2>"$work/last.err" || { cat "$work/last.err"; exit 1; }; awk '{printf "%s %.2f\n", $1, $2 + $3}' "$work/time"; }

echo "prepare $TABLES sbtest table(s) of $ROWS rows, $ROUNDS rounds, loopback TCP port $port"
# The floor's input: the table's rows as a tab-separated file, made once.
"$eb" prepare sbtest --tables 1 --table-size "$ROWS" --dsn "mysql://root@127.0.0.1:$port" >/dev/null 2>&1
mariadb --socket="$socket" -uroot -N -B enginebench -e "SELECT id, k, c, pad FROM sbtest1" >"$work/sbtest1.tsv"
floor_sql() { # table number -> the statements that load that table from the file
  echo "CREATE TABLE sbtest$1 (id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL,
  c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB;
  LOAD DATA LOCAL INFILE '$work/sbtest1.tsv' INTO TABLE sbtest$1; CREATE INDEX k_$1 ON sbtest$1(k);"
}
floor_load() { # every table at once, one client each
  local pids=()
  for t in $(seq "$TABLES"); do
    mariadb --local-infile=1 --protocol=tcp -h127.0.0.1 -P"$port" -uroot enginebench -e "$(floor_sql "$t")" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || return 1; done
}
export -f floor_sql floor_load
export TABLES port work
IFS=';' read -r -a variants <<<"$EB_VARIANTS"
variants=("" "${variants[@]}")
for round in $(seq "$ROUNDS"); do
  run_sysbench() {
    drop
    seconds sysbench oltp_read_write --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" \
      --mysql-user=root --mysql-db=enginebench --tables="$TABLES" --threads="$SB_THREADS" --table-size="$ROWS" prepare >>"$work/sysbench.times"
  }
  run_enginebench() {
    local index=0
    for variant in "${variants[@]}"; do
      drop
      # shellcheck disable=SC2086 # a variant is a set of flags
      seconds "$eb" prepare sbtest --tables "$TABLES" --table-size "$ROWS" --dsn "mysql://root@127.0.0.1:$port" $variant >>"$work/enginebench.$index.times"
      index=$((index + 1))
    done
  }
  run_floor() {
    drop
    seconds bash -c floor_load >>"$work/floor.times"
  }
  # Alternate which goes first, so drift on a noisy machine favours neither.
  if [ $((round % 2)) -eq 1 ]; then run_sysbench; run_floor; run_enginebench; else run_enginebench; run_floor; run_sysbench; fi
  read -r sb_wall sb_cpu < <(tail -1 "$work/sysbench.times")
  read -r fl_wall _ < <(tail -1 "$work/floor.times")
  read -r eb_wall eb_cpu < <(tail -1 "$work/enginebench.0.times")
  echo "round $round: sysbench ${sb_wall} s (client CPU ${sb_cpu} s), floor ${fl_wall} s, enginebench ${eb_wall} s (client CPU ${eb_cpu} s)"
done
median() { cut -d' ' -f"$2" "$1" | sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
sb=$(median "$work/sysbench.times" 1); floor=$(median "$work/floor.times" 1)
sbc=$(median "$work/sysbench.times" 2)
printf 'median wall: floor (mariadb LOAD DATA LOCAL INFILE of a file + CREATE INDEX k_1) %.2f s, sysbench prepare %.2f s (%.2fx the floor)\n' \
  "$floor" "$sb" "$(echo "$sb / $floor" | bc -l)"
index=0
for variant in "${variants[@]}"; do
  ebm=$(median "$work/enginebench.$index.times" 1); ebc=$(median "$work/enginebench.$index.times" 2)
  printf 'enginebench prepare %-40s %.2f s: %.2fx the floor (goal <= 1.15x), sysbench/enginebench %.2fx; client CPU %.2f s (sysbench %.2f s)\n' \
    "${variant:-(default)}" "$ebm" "$(echo "$ebm / $floor" | bc -l)" "$(echo "$sb / $ebm" | bc -l)" "$ebc" "$sbc"
  index=$((index + 1))
done
