#!/usr/bin/env bash
# sysbench 1.0.20 and `enginebench sysbench` running the same Lua script with the same
# command line on the same throwaway server, alternated ROUNDS times (the order rotating):
# oltp_read_write.lua and oltp_point_select.lua at 4 and 16 threads over the unix socket.
# Prints per row both QPS and both client CPU µs per query (user+sys of the client process /
# queries either tool reports), the median paired ratios, how many rounds enginebench was
# ahead, and the goals: client CPU per query ≤ 0.8× sysbench's, QPS ≥ 1.0×.
# Then client memory per Lua connection (max RSS at 1,000 connections vs 1).
# A benchmark, not a test: figures depend on the machine; compare ratios within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${ROWS:-100000}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-5}
ROUNDS=${ROUNDS:-5}
THREADS=${THREADS:-"4 16"}
WORKLOADS=${WORKLOADS:-"oltp_read_write oltp_point_select"}
DRIVER=${DRIVER:-events}
CPU_GOAL=${CPU_GOAL:-0.8}
SERVER_ARGS="--server-opt max_connections=1300 --server-opt back_log=1300"

source bench/throwaway_server.sh
common=(--db-driver=mysql --mysql-socket="$socket" --mysql-user=root --mysql-db=enginebench
  --tables=1 --table-size="$ROWS")
sysbench oltp_read_write "${common[@]}" prepare >/dev/null
export ENGINEBENCH_DB="$work/eb.db" ENGINEBENCH_DRIVER="$DRIVER"

run() { # tool workload threads -> "qps cpu_s queries"
  local cmd=(sysbench)
  [ "$1" = enginebench ] && cmd=("$eb" sysbench)
  /usr/bin/time -o "$work/time" -f "%U %S" "${cmd[@]}" "$2" "${common[@]}" --threads="$3" \
    --time="$SECONDS_PER_RUN" run >"$work/out" 2>"$work/err" || { cat "$work/err"; exit 1; }
  local queries qps
  queries=$(awk '/^ *queries:/ {print $2; exit}' "$work/out")
  qps=$(awk '/^ *queries:/ {gsub(/\(/, "", $3); print $3; exit}' "$work/out")
  echo "$qps $(awk '{print $1 + $2}' "$work/time") $queries"
}

printf '%-18s %4s | %9s %9s %5s %3s %-4s | %8s %8s %5s %3s %-4s\n' workload thr "sb qps" "eb qps" "eb/sb" won goal \
  "sb µs/q" "eb µs/q" "eb/sb" won goal
for workload in $WORKLOADS; do
  for threads in $THREADS; do
    : >"$work/pairs"
    for round in $(seq "$ROUNDS"); do
      if [ $((round % 2)) = 1 ]; then
        sb=$(run sysbench "$workload" "$threads"); eb_=$(run enginebench "$workload" "$threads")
      else
        eb_=$(run enginebench "$workload" "$threads"); sb=$(run sysbench "$workload" "$threads")
      fi
      echo "$sb $eb_" >>"$work/pairs"
    done
    python3 - "$workload" "$threads" "$work/pairs" "$CPU_GOAL" <<'PY'
import statistics, sys
workload, threads, path, cpu_goal = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
rows = [list(map(float, line.split())) for line in open(path) if line.strip()]
qps = [(r[0], r[3]) for r in rows]
cpu = [(r[1] * 1e6 / r[2], r[4] * 1e6 / r[5]) for r in rows]
q_ratio = statistics.median(eb / sb for sb, eb in qps)
c_ratio = statistics.median(eb / sb for sb, eb in cpu)
q_won = sum(eb >= sb for sb, eb in qps)
c_won = sum(eb <= cpu_goal * sb for sb, eb in cpu)
med = lambda xs: statistics.median(xs)
print(f"{workload:<18} {threads:>4} | {med(q[0] for q in qps):9.0f} {med(q[1] for q in qps):9.0f} {q_ratio:5.2f} "
      f"{q_won}/{len(rows)} {'met' if q_ratio >= 1.0 else 'no':<4} | {med(c[0] for c in cpu):8.2f} {med(c[1] for c in cpu):8.2f} "
      f"{c_ratio:5.2f} {c_won}/{len(rows)} {'met' if c_ratio <= cpu_goal else 'no':<4}")
PY
  done
done
echo "ratios are medians of the rounds' paired ratios; won = rounds enginebench met the goal (QPS >= sysbench's; CPU <= ${CPU_GOAL}x)"

# Client memory per Lua connection: max RSS with 1,000 connections against 1.
rss() { # threads
  /usr/bin/time -o "$work/time" -f "%M" "$eb" sysbench oltp_point_select "${common[@]}" --threads="$1" \
    --events="$(($1 * 4))" --time=0 run >/dev/null 2>"$work/rss.err" || { cat "$work/rss.err"; exit 1; }
  cat "$work/time"
}
one=$(rss 1)
many=$(rss 1000)
printf 'client max RSS, %s driver: %d KiB at 1 Lua connection, %d KiB at 1000: %.1f KiB per Lua connection\n' "$DRIVER" \
  "$one" "$many" "$(echo "($many - $one) / 999" | bc -l)"
