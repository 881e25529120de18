#!/usr/bin/env bash
# What performance_schema would cost the measured server, and why enginebench's
# per-statement evidence does without it: oltp_point_select and oltp_read_only on InnoDB,
# 4 threads, each run on a fresh throwaway server with performance_schema OFF and ON,
# alternating, 3 rounds; prints median events/s, the server's RSS and the ratios.
# Also checks what performance_schema would tell: whether binary-protocol executions
# (what every workload sends) reach the digest summary.
# Usage: bench/performance_schema.sh [seconds per cell, default 5]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-5}
cargo build --release --quiet
eb=$PWD/target/release/enginebench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for round in 1 2 3; do
  for ps in OFF ON; do
    for workload in oltp_point_select oltp_read_only; do
      "$eb" run "$workload" --engines innodb --threads 4 --time "${seconds}s" --warmup 1s \
        --table-size 10000 --no-db --server-opt "performance_schema=$ps" \
        --json "$work/$workload-$ps-$round.json" >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
    done
  done
done
python3 - "$work" <<'PY'
import json, statistics, sys, glob, os
work = sys.argv[1]
for workload in ["oltp_point_select", "oltp_read_only"]:
    figures = {}
    for ps in ["OFF", "ON"]:
        rates, rss = [], []
        for path in sorted(glob.glob(os.path.join(work, f"{workload}-{ps}-*.json"))):
            record = json.load(open(path))
            cell = record["cells"][0]
            rates.append(cell["events_per_s"])
            rss.append(cell["server_process"]["rss_bytes"] / 2**20)
        figures[ps] = (statistics.median(rates), statistics.median(rss), rates)
        print(f"{workload} performance_schema={ps}: median {figures[ps][0]:.0f} events/s "
              f"(rounds: {', '.join(f'{r:.0f}' for r in rates)}), server RSS {figures[ps][1]:.0f} MiB")
    off, on = figures["OFF"], figures["ON"]
    print(f"{workload}: ON/OFF throughput {on[0] / off[0]:.3f}, RSS +{on[1] - off[1]:.0f} MiB")
PY
# What the digest summary holds after a run of prepared (binary-protocol) statements.
"$eb" server start --server-opt performance_schema=ON >"$work/server.out" 2>&1 &
server=$!
for _ in $(seq 300); do grep -q "press Ctrl-C" "$work/server.out" 2>/dev/null && break; sleep 0.1; done
socket=$(grep -o -- '--socket=[^ ]*' "$work/server.out" | head -1 | cut -d= -f2)
"$eb" run oltp_point_select --engines innodb --threads 2 --time 1s --table-size 1000 --no-db \
  --dsn "mysql://root@localhost?socket=$socket" >/dev/null 2>&1 || true
mariadb --socket="$socket" -uroot -N -e "SELECT CONCAT('digests of SELECT c FROM sbtest1: ', COUNT(*)) FROM performance_schema.events_statements_summary_by_digest WHERE DIGEST_TEXT LIKE 'SELECT \`c\` FROM \`sbtest1\`%'; SELECT CONCAT('statement/com/Execute events: ', COUNT_STAR) FROM performance_schema.events_statements_summary_global_by_event_name WHERE EVENT_NAME = 'statement/com/Execute'"
kill -INT "$server"; wait "$server" 2>/dev/null || true
