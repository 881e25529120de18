#!/usr/bin/env bash
# sysbench 1.0.20 and enginebench on the same throwaway server, alternated ROUNDS times:
# oltp_point_select and oltp_read_only at THREADS, over the unix socket and over TCP.
# Prints per row both QPS, both client CPU µs per query (user+sys of the client process /
# queries), the ratios, and whether the server counted the same Com_* per transaction.
# Then client memory per connection (max RSS at 1,024 connections vs 1).
# A benchmark, not a test: figures depend on the machine; compare ratios within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${ROWS:-100000}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-5}
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-"1 4 16 64"}
WORKLOADS=${WORKLOADS:-"oltp_point_select oltp_read_only"}
TRANSPORTS=${TRANSPORTS:-"socket tcp"}

for tool in sysbench bc; do
  command -v "$tool" >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$tool" >/dev/null
done
cargo build --release --quiet
eb=$PWD/target/release/enginebench
work=$(mktemp -d)
"$eb" server start >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
cleanup() { kill -INT "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
for _ in $(seq 300); do grep -q "press Ctrl-C" "$work/server.out" 2>/dev/null && break; sleep 0.1; done
port=$(grep -o -- '-P[0-9]*' "$work/server.out" | head -1 | cut -c3-)
socket=$(grep -o -- '--socket=[^ ]*' "$work/server.out" | head -1 | cut -d= -f2)
[ -n "$port" ] || { echo "server did not start:"; cat "$work/server.err"; exit 1; }
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

run_sysbench() { # workload transport threads -> "qps cpu_s queries transactions com"
  local conn=(--mysql-socket="$socket")
  [ "$2" = tcp ] && conn=(--mysql-host=127.0.0.1 --mysql-port="$port")
  local before after
  before=$(coms)
  /usr/bin/time -o "$work/time" -f "%U %S" sysbench "$1" --db-driver=mysql "${conn[@]}" --mysql-user=root \
    --mysql-db=enginebench --tables=1 --table-size="$ROWS" --threads="$3" --time="$SECONDS_PER_RUN" run >"$work/sb.out"
  after=$(coms)
  local queries qps txn
  queries=$(awk '/queries:/ {print $2; exit}' "$work/sb.out")
  qps=$(awk '/queries:/ {gsub(/\(/, "", $3); print $3; exit}' "$work/sb.out")
  txn=$(awk '/transactions:/ {print $2; exit}' "$work/sb.out")
  echo "$qps $(awk '{print $1 + $2}' "$work/time") $queries $txn $(per_txn "$before" "$after" "$txn")"
}

run_enginebench() {
  local dsn="mysql://root@127.0.0.1:$port"
  [ "$2" = socket ] && dsn="mysql://root@localhost?socket=$socket"
  /usr/bin/time -o "$work/time" -f "%U %S" "$eb" run "$1" --dsn "$dsn" --tables=1 --table-size="$ROWS" \
    --threads="$3" --time="$SECONDS_PER_RUN" --json "$work/eb.json" >/dev/null 2>"$work/eb.err" || { cat "$work/eb.err"; exit 1; }
  python3 - "$work/eb.json" "$(awk '{print $1 + $2}' "$work/time")" <<'PY'
import json, sys
cell = json.load(open(sys.argv[1]))["cells"][0]
queries = sum(q["count"] + q["failed"] for q in cell["queries"])
seconds = cell["wall_ms"] / 1000
d = cell["server_status_delta"]
t = max(cell["events"], 1)
print(f'{queries / seconds:.2f} {sys.argv[2]} {queries} {cell["events"]} '
      f'{d.get("Com_select", 0) / t:.2f}/{d.get("Com_begin", 0) / t:.2f}/{d.get("Com_commit", 0) / t:.2f}')
PY
}

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
printf '%-18s %-6s %4s | %10s %10s %6s | %9s %9s %6s | %-14s %-14s\n' workload via thr "sb qps" "eb qps" "eb/sb" \
  "sb µs/q" "eb µs/q" "eb/sb" "sb sel/beg/com" "eb sel/beg/com"
for workload in $WORKLOADS; do
  for transport in $TRANSPORTS; do
    for threads in $THREADS; do
      : >"$work/sb.rows"; : >"$work/eb.rows"
      for round in $(seq "$ROUNDS"); do
        if [ $((round % 2)) -eq 1 ]; then
          run_sysbench "$workload" "$transport" "$threads" >>"$work/sb.rows"
          run_enginebench "$workload" "$transport" "$threads" >>"$work/eb.rows"
        else
          run_enginebench "$workload" "$transport" "$threads" >>"$work/eb.rows"
          run_sysbench "$workload" "$transport" "$threads" >>"$work/sb.rows"
        fi
      done
      sb_qps=$(cut -d' ' -f1 "$work/sb.rows" | median); eb_qps=$(cut -d' ' -f1 "$work/eb.rows" | median)
      sb_cpu=$(awk '{print $2 * 1e6 / $3}' "$work/sb.rows" | median); eb_cpu=$(awk '{print $2 * 1e6 / $3}' "$work/eb.rows" | median)
      printf '%-18s %-6s %4s | %10.0f %10.0f %6.2f | %9.2f %9.2f %6.2f | %-14s %-14s\n' "$workload" "$transport" "$threads" \
        "$sb_qps" "$eb_qps" "$(echo "$eb_qps / $sb_qps" | bc -l)" "$sb_cpu" "$eb_cpu" "$(echo "$eb_cpu / $sb_cpu" | bc -l)" \
        "$(tail -1 "$work/sb.rows" | cut -d' ' -f5)" "$(tail -1 "$work/eb.rows" | cut -d' ' -f5)"
    done
  done
done

# Client memory per connection: max RSS with 1,024 connections against 1.
rss() { /usr/bin/time -o "$work/time" -f "%M" "$eb" run oltp_point_select --dsn "mysql://root@127.0.0.1:$port" \
  --tables=1 --table-size="$ROWS" --threads="$1" --time=2 >/dev/null 2>&1; cat "$work/time"; }
one=$(rss 1); many=$(rss 1024)
printf 'client max RSS: %d KiB at 1 connection, %d KiB at 1024: %.0f KiB per connection\n' "$one" "$many" \
  "$(echo "($many - $one) / 1023" | bc -l)"
