#!/usr/bin/env bash
# What the capture proxy costs the application: sysbench's oltp_read_only at THREADS over
# TCP, straight to a throwaway server and through `enginebench capture`, alternated ROUNDS
# times in one run. Prints each round's QPS both ways, the medians, their ratio (goal:
# ≥ 0.90, at most 10% fewer QPS at 4 threads), the proxy's captured commands/s and its
# CPU per command as it reports them.
# A benchmark, not a test: figures depend on the machine; compare ratios within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${ROWS:-100000}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-10}
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-4}

source bench/throwaway_server.sh
proxy_port=$((port + 1))
while (echo >/dev/tcp/127.0.0.1/$proxy_port) 2>/dev/null; do proxy_port=$((proxy_port + 1)); done
sysbench oltp_read_only --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=root \
  --mysql-db=enginebench --tables=1 --table-size="$ROWS" prepare >/dev/null

qps() { # port -> QPS of one sysbench run
  sysbench oltp_read_only --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$1" --mysql-user=root \
    --mysql-db=enginebench --tables=1 --table-size="$ROWS" --threads="$THREADS" --time="$SECONDS_PER_RUN" run |
    awk '/queries:/ {gsub(/\(/, "", $3); print $3; exit}'
}

direct=() proxied=()
printf "%-6s %12s %12s %8s\n" round direct_qps proxy_qps ratio
for round in $(seq "$ROUNDS"); do
  d=$(qps "$port")
  "$eb" capture --to "mysql://root@127.0.0.1:$port/enginebench" --listen "127.0.0.1:$proxy_port" \
    --no-snapshot --out "$work/round.ebcap" 2>"$work/capture.err" &
  capture_pid=$!
  for _ in $(seq 100); do grep -q "capturing into" "$work/capture.err" 2>/dev/null && break; sleep 0.1; done
  p=$(qps "$proxy_port")
  kill -INT "$capture_pid"; wait "$capture_pid"
  direct+=("$d") proxied+=("$p")
  printf "%-6s %12.1f %12.1f %8.3f\n" "$round" "$d" "$p" "$(echo "$p / $d" | bc -l)"
  grep "^captured" "$work/capture.err" | sed 's/^/       /'
done
median() { printf "%s\n" "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
md=$(median "${direct[@]}") mp=$(median "${proxied[@]}")
printf "median %12.1f %12.1f %8.3f   (oltp_read_only, %s threads, TCP; goal: ratio >= 0.90)\n" \
  "$md" "$mp" "$(echo "$mp / $md" | bc -l)" "$THREADS"
