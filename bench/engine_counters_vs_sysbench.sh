#!/usr/bin/env bash
# Does the engine do the same work under enginebench as under sysbench 1.0.20? Not only the
# same statements (the Com_* checks of the test suite) but the same reads and writes inside
# the engine: on one throwaway server and one table (sysbench's prepare), each WORKLOAD runs
# EVENTS events on THREADS threads under
#   sysbench   sysbench 1.0.20 (the reference)
#   sb-cmd     `enginebench sysbench`, the same command line
#   run        `enginebench run WORKLOAD --dsn ... --no-probes` (the built-in workload)
# alternated ROUNDS times (the order rotating), and the server's SHOW GLOBAL STATUS is read
# before and after each. Prints per workload and counter the median per event of each tool
# and enginebench's ratio to sysbench's; a ratio outside 0.95-1.05 is flagged. Counts, not
# times: the figures do not depend on the machine's load (the keys are random, so each
# round's counts differ a little). PURGE=hold (the default, bench/status_per_event.sh) keeps
# InnoDB's purge out of each window; PURGE=run lets it run.
# Issue 66: "a bench that runs both on one server and compares the engine's own counters per
# operation (Handler_read_*, Innodb_buffer_pool_read_requests), within 5%".
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${ROWS:-100000}
EVENTS=${EVENTS:-2000}
THREADS=${THREADS:-1}
ROUNDS=${ROUNDS:-3}
WORKLOADS=${WORKLOADS:-"oltp_read_write oltp_point_select oltp_read_only oltp_write_only oltp_update_index oltp_delete oltp_insert select_random_ranges"}
TOOLS=${TOOLS:-"sysbench sb-cmd run"}
COUNTERS=${COUNTERS:-"Handler_read_key Handler_read_next Handler_read_prev Handler_read_rnd_next Handler_update Handler_write Handler_delete Innodb_rows_read Innodb_buffer_pool_read_requests Com_stmt_execute Com_select Com_commit"}

source bench/throwaway_server.sh
common=(--db-driver=mysql --mysql-socket="$socket" --mysql-user=root --mysql-db=enginebench
  --tables=1 --table-size="$ROWS")
sysbench oltp_read_write "${common[@]}" prepare >/dev/null
export ENGINEBENCH_DB="$work/eb.db"
dsn="mysql://root@localhost?socket=$socket"

source bench/status_per_event.sh
run() { # tool workload
  case $1 in
    sysbench) sysbench "$2" "${common[@]}" --threads="$THREADS" --events="$EVENTS" --time=0 run ;;
    sb-cmd) "$eb" sysbench "$2" "${common[@]}" --threads="$THREADS" --events="$EVENTS" --time=0 run ;;
    run) "$eb" run "$2" --dsn "$dsn" --tables=1 --table-size="$ROWS" --threads="$THREADS" \
      --events "$EVENTS" --repeat 1 --no-probes --no-db ;;
  esac >"$work/out" 2>"$work/err" || { echo "$1 $2 failed:"; cat "$work/err"; exit 1; }
}

echo "engine counters per event, $EVENTS events on $THREADS thread(s), $ROWS rows, $ROUNDS rounds, purge: $PURGE, socket $socket (load $(cut -d' ' -f1-3 /proc/loadavg))"
: >"$work/per_event"
for workload in $WORKLOADS; do
  for round in $(seq "$ROUNDS"); do
    read -r -a order <<<"$TOOLS"
    shift_by=$(( (round - 1) % ${#order[@]} ))
    order=("${order[@]:$shift_by}" "${order[@]:0:$shift_by}")
    for tool in "${order[@]}"; do
      # oltp_delete and oltp_insert change the table: each tool starts from sysbench's
      # prepared table (else the first one's deletes leave the next ones little to delete).
      case $workload in oltp_delete|oltp_insert)
        sysbench oltp_read_write "${common[@]}" cleanup >/dev/null
        sysbench oltp_read_write "${common[@]}" prepare >/dev/null ;;
      esac
      hold_purge
      status "$work/before"
      run "$tool" "$workload"
      status "$work/after"
      release_purge
      per_event "$workload $tool" "$work/before" "$work/after" "$EVENTS" >>"$work/per_event"
    done
  done
  # Put the table back for the next workload.
  case $workload in oltp_delete|oltp_insert)
    sysbench oltp_read_write "${common[@]}" cleanup >/dev/null
    sysbench oltp_read_write "${common[@]}" prepare >/dev/null ;;
  esac
done
python3 - "$work/per_event" "$TOOLS" <<'PY'
import sys, statistics
sys.path.insert(0, "bench")
from within5 import judged
rows = [line.split() for line in open(sys.argv[1])]
tools = sys.argv[2].split()
per = {}
for workload, tool, counter, value in rows:
    per.setdefault((workload, counter), {}).setdefault(tool, []).append(float(value))
flagged = 0
compared = 0
workload_seen = None
for (workload, counter), by_tool in per.items():
    if workload != workload_seen:
        print(f"\n{workload}")
        print(f"  {'counter':34}" + "".join(f"{t:>12}" for t in tools) + "".join(f"{t + '/sb':>12}" for t in tools if t != "sysbench"))
        workload_seen = workload
    medians = {t: statistics.median(v) for t, v in by_tool.items()}
    reference = medians.get("sysbench", 0.0)
    line = f"  {counter:34}" + "".join(f"{medians.get(t, float('nan')):12.3f}" for t in tools)
    notes = []
    for t in tools:
        if t == "sysbench":
            continue
        if reference == 0.0 and medians.get(t, 0.0) == 0.0:
            line += f"{'-':>12}"
            continue
        if reference == 0.0:
            line += f"{'inf':>12}"
            ratio = float("inf")
        else:
            ratio = medians.get(t, 0.0) / reference
            line += f"{ratio:12.3f}"
        # Below 0.05 per event on both sides the ratio is noise, not a difference of work.
        counted, flag = judged(reference, medians.get(t, 0.0))
        compared += counted
        if flag:
            flagged += 1
            notes.append(f"{t} outside 5%")
    print(line + ("   <- " + ", ".join(notes) if notes else ""))
print(f"\n{compared} comparisons of counters >= 0.05 per event; {flagged} outside 0.95-1.05")
PY
