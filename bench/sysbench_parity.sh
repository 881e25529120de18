#!/usr/bin/env bash
# Does enginebench put the same pressure on a server as sysbench 1.0.20? On one throwaway
# server, the same tables (sysbench's prepare), the same threads and time, over the unix
# socket, alternated ROUNDS times (the order rotating from round to round):
#   sysbench       sysbench 1.0.20 (the reference)
#   sb-cmd         `enginebench sysbench`, the same command line, its driver as it is
#   sb-cmd:events  the same with ENGINEBENCH_DRIVER=events
#   run            `enginebench run WORKLOAD --dsn ...` (the built-in workload, its default
#                  driver)
# (TOOLS picks among them, e.g. TOOLS="sb-cmd run run:threads"; run:DRIVER and
# sb-cmd:DRIVER name a driver.) For WORKLOADS × THREADS, prints per row the median QPS of
# each tool and the median of its paired ratios to sysbench's (each round's enginebench QPS ÷
# that round's sysbench QPS), with how many rounds enginebench was behind.
# The rule: a tool's ratio is flagged "short" when its median ratio is below 0.95 AND it was
# behind sysbench in every round; a median below 0.95 with a round ahead is noise on this
# machine, not a verdict.
# A benchmark, not a test: figures depend on the machine (and on what else runs on it: the
# load average is printed before and after); compare ratios within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${ROWS:-100000}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-5}
ROUNDS=${ROUNDS:-5}
THREADS=${THREADS:-"1 4 16 64"}
WORKLOADS=${WORKLOADS:-"oltp_point_select oltp_read_write"}
TOOLS=${TOOLS:-"sb-cmd sb-cmd:events run"}
SERVER_ARGS="--server-opt max_connections=1300 --server-opt back_log=1300"

source bench/throwaway_server.sh
# EB=path measures another enginebench binary (e.g. a build from before a change).
eb=${EB:-$eb}
common=(--db-driver=mysql --mysql-socket="$socket" --mysql-user=root --mysql-db=enginebench
  --tables=1 --table-size="$ROWS")
sysbench oltp_read_write "${common[@]}" prepare >/dev/null
export ENGINEBENCH_DB="$work/eb.db"
dsn="mysql://root@localhost?socket=$socket"

qps_of_sysbench_output() { awk '/^ *queries:/ {gsub(/\(/, "", $3); print $3; exit}' "$1"; }

run() { # tool workload threads -> qps
  local tool=${1%%:*} driver=${1#*:}
  [ "$driver" = "$1" ] && driver=
  case $tool in
    sysbench)
      sysbench "$2" "${common[@]}" --threads="$3" --time="$SECONDS_PER_RUN" run >"$work/out" 2>"$work/err" \
        || { cat "$work/err" >&2; exit 1; }
      qps_of_sysbench_output "$work/out" ;;
    sb-cmd)
      env ${driver:+ENGINEBENCH_DRIVER=$driver} "$eb" sysbench "$2" "${common[@]}" --threads="$3" \
        --time="$SECONDS_PER_RUN" run >"$work/out" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
      qps_of_sysbench_output "$work/out" ;;
    run)
      "$eb" run "$2" --dsn "$dsn" --tables=1 --table-size="$ROWS" --threads="$3" --time="$SECONDS_PER_RUN" \
        ${driver:+--driver "$driver"} --no-db --json "$work/eb.json" >/dev/null 2>"$work/err" \
        || { cat "$work/err" >&2; exit 1; }
      # Statements of the measured phase over its wall time, as sysbench counts its queries.
      python3 - "$work/eb.json" <<'PY'
import json, sys
cell = json.load(open(sys.argv[1]))["cells"][0]
queries = sum(q["count"] + q["failed"] for q in cell["queries"])
print(f"{queries / (cell['wall_ms'] / 1000):.2f}")
PY
      ;;
    *) echo "unknown tool $1" >&2; exit 1 ;;
  esac
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $ROUNDS rounds of ${SECONDS_PER_RUN} s per tool, $ROWS rows"
header=$(printf '%-18s %4s | %9s' workload thr sysbench)
for tool in $TOOLS; do header+=$(printf ' | %18s %5s %6s %-5s' "$tool qps" ratio behind ''); done
echo "$header"
for workload in $WORKLOADS; do
  for threads in $THREADS; do
    : >"$work/rounds"
    for round in $(seq "$ROUNDS"); do
      # Every tool once per round, the order rotating, so a round's figures share the
      # machine's state of the moment and no tool always runs first.
      tools=(sysbench $TOOLS)
      shift_by=$(((round - 1) % ${#tools[@]}))
      order=("${tools[@]:$shift_by}" "${tools[@]:0:$shift_by}")
      declare -A got=()
      for tool in "${order[@]}"; do got[$tool]=$(run "$tool" "$workload" "$threads"); done
      line=${got[sysbench]}
      for tool in $TOOLS; do line+=" ${got[$tool]}"; done
      echo "$line" >>"$work/rounds"
      unset got
    done
    python3 - "$workload" "$threads" "$work/rounds" $TOOLS <<'PY'
import statistics, sys
workload, threads, path, tools = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rows = [list(map(float, line.split())) for line in open(path) if line.strip()]
line = f"{workload:<18} {threads:>4} | {statistics.median(r[0] for r in rows):9.0f}"
for i, tool in enumerate(tools, start=1):
    ratios = [r[i] / r[0] for r in rows]
    ratio = statistics.median(ratios)
    behind = sum(x < 1.0 for x in ratios)
    flag = "short" if ratio < 0.95 and behind == len(rows) else ""
    line += f" | {statistics.median(r[i] for r in rows):18.0f} {ratio:5.2f} {f'{behind}/{len(rows)}':>6} {flag:<5}"
print(line, flush=True)
PY
  done
done
echo "ratio: median of the rounds' paired ratios to sysbench's QPS; behind: rounds below sysbench;"
echo "short: median ratio < 0.95 and behind in every round. Load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
