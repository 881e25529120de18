#!/usr/bin/env bash
# What the acknowledged-commit ledger of crash trials costs the client: the stores it makes
# per commit (timed over 50 million commits), beside what a commit takes on this machine
# (the durability study's ledger load on MEMORY, the cheapest engine, and on InnoDB, median
# of 3 repeats of 5 s at 4 connections). Prints both and their ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
eb=${CARGO_TARGET_DIR:-$PWD/target}/release/enginebench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ns=$(cargo test --release --quiet --lib ledger_store_cost -- --ignored --nocapture 2>/dev/null |
  awk '/ledger_ns_per_commit/ {print $2}')
"$eb" run durability --engines memory,innodb --threads 4 --time 5s --repeat 3 --no-crash \
  --no-db --json "$work/run.json" >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
echo "ledger stores per commit: ${ns} ns (client, one connection)"
python3 - "$work/run.json" "$ns" <<'PY'
import json, statistics, sys
record = json.load(open(sys.argv[1]))
ns = float(sys.argv[2])
for engine in ("memory", "innodb"):
    rates = [c["events_per_s"] for c in record["cells"] if c["engine"] == engine and c["outcome"] == "completed"]
    per_s = statistics.median(rates)
    us = 4 / per_s * 1e6  # 4 connections: each commit takes this long on its connection
    print(f"{engine}: {per_s:,.0f} commits/s at 4 connections, {us:.1f} us per commit per connection; "
          f"the ledger adds {ns / (us * 1000) * 100:.4f}%")
PY
