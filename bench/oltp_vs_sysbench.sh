#!/usr/bin/env bash
# sysbench 1.0.20 and enginebench on the same throwaway server, alternated ROUNDS times:
# oltp_point_select and oltp_read_only at THREADS, over the unix socket and over TCP.
# Prints per row both QPS, both client CPU µs per query (user+sys of the client process /
# queries), the ratios, both clients' context switches per query (voluntary + involuntary:
# where a client's kernel time goes besides the send and receive each query needs), and
# whether the server counted the same Com_* per transaction;
# one row per enginebench driver (DRIVERS, each round runs sysbench and every driver; a driver
# written events:N runs the event driver with N loops, ENGINEBENCH_EVENT_LOOPS, to compare loop
# counts in one run).
# Then client memory per connection (max RSS at 1,000 and 10,000 connections vs 1).
# A benchmark, not a test: figures depend on the machine; compare ratios within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${ROWS:-100000}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-5}
ROUNDS=${ROUNDS:-7}
THREADS=${THREADS:-"1 4 16 64"}
WORKLOADS=${WORKLOADS:-"oltp_point_select oltp_read_only"}
TRANSPORTS=${TRANSPORTS:-"socket tcp"}
DRIVERS=${DRIVERS:-"threads events"}
# MEMORY=0 skips the client memory figures at the end.
# The event driver's goal: client CPU per query at most 0.7x sysbench's at 16+ threads.
EVENTS_CPU_GOAL=${EVENTS_CPU_GOAL:-0.7}
# 10,000 connections need the server to accept them.
SERVER_ARGS="--server-opt max_connections=10300 --server-opt back_log=10300"

source bench/throwaway_server.sh
sql() { mariadb --socket="$socket" -uroot -N -B enginebench -e "$1"; }
coms() { sql "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_select','Com_begin','Com_commit')" | awk '{printf "%s=%s ", $1, $2}'; }
per_txn() { # before after transactions -> "select/begin/commit per transaction"
  awk -v b="$1" -v a="$2" -v t="$3" 'BEGIN {
    n = split(b, bb, " "); split(a, aa, " ");
    for (i = 1; i <= n; i++) { split(bb[i], x, "="); split(aa[i], y, "="); d[x[1]] = y[2] - x[2] }
    printf "%.2f/%.2f/%.2f", d["Com_select"] / t, d["Com_begin"] / t, d["Com_commit"] / t }'
}
sysbench oltp_read_only --db-driver=mysql --mysql-socket="$socket" --mysql-user=root --mysql-db=enginebench \
  --tables=1 --table-size="$ROWS" prepare >/dev/null

run_sysbench() { # workload transport threads -> "qps cpu_s queries transactions com switches"
  local conn=(--mysql-socket="$socket")
  [ "$2" = tcp ] && conn=(--mysql-host=127.0.0.1 --mysql-port="$port")
  local before after
  before=$(coms)
  /usr/bin/time -o "$work/time" -f "%U %S %c %w" sysbench "$1" --db-driver=mysql "${conn[@]}" --mysql-user=root \
    --mysql-db=enginebench --tables=1 --table-size="$ROWS" --threads="$3" --time="$SECONDS_PER_RUN" run >"$work/sb.out"
  after=$(coms)
  local queries qps txn
  queries=$(awk '/queries:/ {print $2; exit}' "$work/sb.out")
  qps=$(awk '/queries:/ {gsub(/\(/, "", $3); print $3; exit}' "$work/sb.out")
  txn=$(awk '/transactions:/ {print $2; exit}' "$work/sb.out")
  echo "$qps $(awk '{print $1 + $2}' "$work/time") $queries $txn $(per_txn "$before" "$after" "$txn") $(awk '{print $3 + $4}' "$work/time")"
}

run_enginebench() { # workload transport threads driver[:loops]
  local dsn="mysql://root@127.0.0.1:$port"
  [ "$2" = socket ] && dsn="mysql://root@localhost?socket=$socket"
  local loops=()
  [[ "$4" == *:* ]] && loops=("ENGINEBENCH_EVENT_LOOPS=${4#*:}")
  env "${loops[@]}" /usr/bin/time -o "$work/time" -f "%U %S %c %w" "$eb" run "$1" --dsn "$dsn" --tables=1 --table-size="$ROWS" \
    --threads="$3" --time="$SECONDS_PER_RUN" --driver "${4%%:*}" --json "$work/eb.json" >/dev/null 2>"$work/eb.err" || { cat "$work/eb.err"; exit 1; }
  python3 - "$work/eb.json" "$(awk '{print $1 + $2}' "$work/time")" "$(awk '{print $3 + $4}' "$work/time")" <<'PY'
import json, sys
cell = json.load(open(sys.argv[1]))["cells"][0]
queries = sum(q["count"] + q["failed"] for q in cell["queries"])
seconds = cell["wall_ms"] / 1000
d = cell["server_status_delta"]
t = max(cell["events"], 1)
print(f'{queries / seconds:.2f} {sys.argv[2]} {queries} {cell["events"]} '
      f'{d.get("Com_select", 0) / t:.2f}/{d.get("Com_begin", 0) / t:.2f}/{d.get("Com_commit", 0) / t:.2f} {sys.argv[3]}')
PY
}

# Each round runs both tools back to back (order alternating), so a round's two figures
# share the machine's state of the moment: rows compare paired ratios, not loose medians.
# This machine is shared and noisy (one tool alone varies ±15% between runs at 1 and 64
# threads), so each ratio comes with how many rounds enginebench was ahead and a one-sided
# sign test: "short" only where enginebench lost so many rounds that chance is unlikely
# (p < 0.05); otherwise the median's shortfall is named as within the noise.
summarise() { # rows file (sb_qps sb_cpu_s sb_queries eb_qps eb_cpu_s eb_queries sb_switches eb_switches) -> table row
  python3 - "$@" <<'PY'
import math, statistics, sys
label, rows_file, sb_com, eb_com, cpu_goal = sys.argv[1:6]
cpu_goal = float(cpu_goal)
rows = [list(map(float, line.split())) for line in open(rows_file) if line.strip()]
n = len(rows)
qps = [(r[0], r[3]) for r in rows]
cpu = [(r[1] * 1e6 / r[2], r[4] * 1e6 / r[5]) for r in rows]
switches = [(r[6] / r[2], r[7] / r[5]) for r in rows]
def sign_p(wins):  # one-sided: P(at most `wins` wins of n) if both tools were equal
    return sum(math.comb(n, i) for i in range(wins + 1)) / 2 ** n
def judge(pairs, higher_is_better, goal=1.0):
    ratios = [eb / sb for sb, eb in pairs]
    wins = sum(1 for r in ratios if (r >= goal if higher_is_better else r <= goal))
    ratio = statistics.median(ratios)
    met = ratio >= goal if higher_is_better else ratio <= goal
    verdict = "met" if met else ("SHORT" if sign_p(wins) < 0.05 else "noise")
    return ratio, wins, verdict
q_ratio, q_wins, q_verdict = judge(qps, True)
c_ratio, c_wins, c_verdict = judge(cpu, False, cpu_goal)
med = lambda xs: statistics.median(xs)
print(f"{label} | {cpu_goal:4.1f} | {med([p[0] for p in qps]):8.0f} {med([p[1] for p in qps]):8.0f} {q_ratio:5.2f} {q_wins}/{n} {q_verdict:5} "
      f"| {med([c[0] for c in cpu]):7.2f} {med([c[1] for c in cpu]):7.2f} {c_ratio:5.2f} {c_wins}/{n} {c_verdict:5} "
      f"| {med([s[0] for s in switches]):5.2f} {med([s[1] for s in switches]):5.2f} "
      f"| {sb_com:<14} {eb_com:<14}{'' if sb_com == eb_com else '  DIFFER'}")
PY
}
printf '%-18s %-6s %4s %-9s | %4s | %8s %8s %5s %3s %-5s | %7s %7s %5s %3s %-5s | %5s %5s | %-14s %-14s\n' workload via thr driver \
  "cpu≤" "sb qps" "eb qps" "eb/sb" won goal "sb µs/q" "eb µs/q" "eb/sb" won goal "sb cs/q" "eb cs/q" "sb sel/beg/com" "eb sel/beg/com"
for workload in $WORKLOADS; do
  for transport in $TRANSPORTS; do
    for threads in $THREADS; do
      for driver in $DRIVERS; do : >"$work/pairs.$driver"; done
      for round in $(seq "$ROUNDS"); do
        # sysbench and each driver once per round, the order rotating from round to round.
        tools=(sysbench $DRIVERS)
        shift_by=$((round % ${#tools[@]}))
        order=("${tools[@]:$shift_by}" "${tools[@]:0:$shift_by}")
        declare -A got=()
        for tool in "${order[@]}"; do
          if [ "$tool" = sysbench ]; then got[$tool]=$(run_sysbench "$workload" "$transport" "$threads")
          else got[$tool]=$(run_enginebench "$workload" "$transport" "$threads" "$tool"); fi
        done
        for driver in $DRIVERS; do
          echo "$(echo "${got[sysbench]}" | cut -d' ' -f1-3) $(echo "${got[$driver]}" | cut -d' ' -f1-3)" \
            "$(echo "${got[sysbench]}" | cut -d' ' -f6) $(echo "${got[$driver]}" | cut -d' ' -f6)" >>"$work/pairs.$driver"
        done
      done
      for driver in $DRIVERS; do
        goal=1.0
        [ "${driver%%:*}" = events ] && [ "$threads" -ge 16 ] && goal=$EVENTS_CPU_GOAL
        summarise "$(printf '%-18s %-6s %4s %-9s' "$workload" "$transport" "$threads" "$driver")" "$work/pairs.$driver" \
          "$(echo "${got[sysbench]}" | cut -d' ' -f5)" "$(echo "${got[$driver]}" | cut -d' ' -f5)" "$goal" | tee -a "$work/table"
      done
      unset got
    done
  done
done
echo "ratios are medians of the rounds' paired ratios; won = rounds enginebench was ahead;"
echo "goal: met, noise (median short but not significantly: sign test p >= 0.05) or SHORT (p < 0.05)"
awk -F'|' '{ split($3, q, " "); split($4, c, " "); rows++; qm += (q[5] == "met"); cm += (c[5] == "met");
  qs += (q[5] == "SHORT"); cs += (c[5] == "SHORT") }
  END { printf "QPS >= 1.0x: met in %d of %d rows, significantly short in %d; CPU/query <= goal (cpu≤ column): met in %d, significantly short in %d\n", qm, rows, qs, cm, cs }' "$work/table"

# Client memory per connection: max RSS with 1,000 and 10,000 connections against 1 (the
# thread driver at 1,000 only: 10,000 threads are what the event driver is for).
[ "${MEMORY:-1}" = 0 ] && exit 0
rss() { # threads driver
  /usr/bin/time -o "$work/time" -f "%M" "$eb" run oltp_point_select --dsn "mysql://root@127.0.0.1:$port" \
    --tables=1 --table-size="$ROWS" --threads="$1" --events="$(($1 * 2))" --driver "$2" >/dev/null 2>"$work/rss.err" \
    || { cat "$work/rss.err"; exit 1; }
  cat "$work/time"
}
for driver in $DRIVERS; do
  [[ "$driver" == *:* ]] && continue # a loop-count variant: memory is the driver's
  one=$(rss 1 "$driver")
  counts="1000 10000"
  [ "$driver" = threads ] && counts=1000
  for many_threads in $counts; do
    many=$(rss "$many_threads" "$driver")
    printf 'client max RSS, %-7s driver: %d KiB at 1 connection, %d KiB at %d: %.1f KiB per connection\n' "$driver" "$one" "$many" \
      "$many_threads" "$(echo "($many - $one) / ($many_threads - 1)" | bc -l)"
  done
done
