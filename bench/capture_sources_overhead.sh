#!/usr/bin/env bash
# What each way of capturing costs the application, against the same throwaway server
# (started with performance_schema=ON and the server_audit plugin loaded, its logging off):
# sysbench's oltp_read_only with text statements (--db-ps-mode=disable: the only kind the
# statement history and the audit log can capture whole) at THREADS over TCP, ROUNDS
# rounds, each running the four ways in a rotating order:
#   direct  no capture (the history's consumers off, the audit log off)
#   history enginebench capture --from-performance-schema, reading the history as it goes
#   audit   server_audit logging CONNECT,QUERY to its file (imported after the run)
#   proxy   enginebench capture through its proxy
# Prints each run's QPS and its ratio to the round's direct run, and the commands each
# capture holds against the queries sysbench counted; then the medians.
# A benchmark, not a test: figures depend on the machine; compare ratios within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${ROWS:-100000}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-10}
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-4}
HISTORY_ROWS=${HISTORY_ROWS:-100000}

SERVER_ARGS="--server-opt performance_schema=ON \
  --server-opt performance_schema_events_statements_history_long_size=$HISTORY_ROWS \
  --server-opt plugin_load_add=server_audit --server-opt server_audit_logging=OFF \
  --server-opt server_audit_events=CONNECT,QUERY --server-opt server_audit_file_rotations=0"
source bench/throwaway_server.sh
proxy_port=$((port + 1))
while (echo >/dev/tcp/127.0.0.1/$proxy_port) 2>/dev/null; do proxy_port=$((proxy_port + 1)); done
sql() { mariadb --protocol=tcp -h127.0.0.1 -P"$port" -uroot -N -e "$1"; }
sql "SET GLOBAL server_audit_file_path = '$work/audit.log'"
sysbench oltp_read_only --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=root \
  --mysql-db=enginebench --tables=1 --table-size="$ROWS" prepare >/dev/null

run_sysbench() { # port -> "qps queries"
  sysbench oltp_read_only --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$1" --mysql-user=root \
    --mysql-db=enginebench --tables=1 --table-size="$ROWS" --threads="$THREADS" --time="$SECONDS_PER_RUN" \
    --db-ps-mode=disable run | awk '/queries:/ {gsub(/\(/, "", $3); print $3, $2; exit}'
}
captured() { # capture's stderr -> commands it says it holds
  grep -o '^\(captured\|imported\) [0-9]*' "$1" | awk '{print $2}'
}

declare -A ratios
run_way() { # way -> prints "qps queries captured"
  case $1 in
    direct) echo "$(run_sysbench "$port") -" ;;
    history)
      "$eb" capture --from-performance-schema --to "mysql://root@127.0.0.1:$port/enginebench" --no-snapshot \
        --out "$work/history.ebcap" 2>"$work/history.err" &
      local pid=$!
      for _ in $(seq 100); do grep -q "Ctrl-C ends" "$work/history.err" 2>/dev/null && break; sleep 0.1; done
      local result; result=$(run_sysbench "$port")
      kill -INT "$pid"; wait "$pid"
      grep "filled up" "$work/history.err" >&2 || true
      echo "$result $(captured "$work/history.err")" ;;
    audit)
      rm -f "$work/audit.log"
      sql "SET GLOBAL server_audit_logging = ON"
      local result; result=$(run_sysbench "$port")
      sql "SET GLOBAL server_audit_logging = OFF"
      "$eb" capture --from-audit "$work/audit.log" --out "$work/audit.ebcap" 2>"$work/audit.err"
      echo "$result $(captured "$work/audit.err")" ;;
    proxy)
      "$eb" capture --to "mysql://root@127.0.0.1:$port/enginebench" --listen "127.0.0.1:$proxy_port" \
        --no-snapshot --out "$work/proxy.ebcap" 2>"$work/proxy.err" &
      local pid=$!
      for _ in $(seq 100); do grep -q "capturing into" "$work/proxy.err" 2>/dev/null && break; sleep 0.1; done
      local result; result=$(run_sysbench "$proxy_port")
      kill -INT "$pid"; wait "$pid"
      echo "$result $(captured "$work/proxy.err")" ;;
  esac
}

ways=(direct history audit proxy)
printf "%-6s %-8s %10s %7s %10s %10s\n" round way qps ratio queries captured
for round in $(seq "$ROUNDS"); do
  # Rotate the order; the ratio is to this round's direct run.
  order=("${ways[@]:$(((round - 1) % 4))}" "${ways[@]:0:$(((round - 1) % 4))}")
  declare -A got=()
  for way in "${order[@]}"; do got[$way]=$(run_way "$way"); done
  read -r direct_qps _ _ <<<"${got[direct]}"
  for way in "${ways[@]}"; do
    read -r qps queries held <<<"${got[$way]}"
    ratio=$(echo "$qps / $direct_qps" | bc -l)
    ratios[$way]+="$ratio "
    printf "%-6s %-8s %10.1f %7.3f %10s %10s\n" "$round" "$way" "$qps" "$ratio" "$queries" "$held"
  done
done
median() { printf "%s\n" "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for way in history audit proxy; do
  # shellcheck disable=SC2086 # the ratios, one per round
  printf "median QPS ratio to direct, %-8s %.3f   (oltp_read_only text statements, %s threads, TCP, %s rounds)\n" \
    "$way" "$(median ${ratios[$way]})" "$THREADS" "$ROUNDS"
done
echo "captured counts commands (connects and quits too); queries are sysbench's; the baseline runs with performance_schema=ON (consumers off)"
