#!/usr/bin/env bash
# `enginebench tune` against a full grid and against random search (issue 61), in one run.
# A space of three InnoDB variables with a few values each (the buffer pool, the redo log's
# size, the adaptive hash index: 3 × 2 × 2 = 12 configurations, the server's defaults one of
# them), on sysbench's oltp_read_only, uniform over TABLE_SIZE rows, every read from storage
# taking READ_LATENCY. The grid: `enginebench run` of each configuration, REPEATS repeats on
# its server; its best is the configuration with the highest median events/s. Then tune
# (iterated racing) and tune --search random, each with a budget of a third of the grid's
# wall time. Each search's answer is scored by the grid's own figure for it (the same
# measurement for all three), as a share of the grid's best. Prints every configuration's
# figure, the times, and the ratios (goal: tune ≥ 0.95 of the grid's best in ≤ 1/3 of its
# time, and ≥ random's share at the same budget). SEARCHES pairs of racing and random
# searches alternate (racing, random, racing, random…, each pair on a seed of its own), so
# that what else the machine does at the time falls on both.
# The table (1,000,000 rows, about 240 MB) is several times the default 128 MiB pool, as in
# the issue's pool case: at 400,000 rows the default pool held nearly all of it, every
# 128 MiB and 512 MiB configuration measured within the grid's own noise (1,244–1,610
# events/s), and the grid's best was a draw of that noise.
# A benchmark, not a test: figures depend on the machine; compare within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
TABLE_SIZE=${TABLE_SIZE:-1000000}
TIME=${TIME:-2}
THREADS=${THREADS:-2}
REPEATS=${REPEATS:-3}
READ_LATENCY=${READ_LATENCY:-200us}
MEMORY=${MEMORY:-1G}
SEED=${SEED:-7}
SEARCHES=${SEARCHES:-2}
BIN=${BIN:-target/release/enginebench}
[ -x "$BIN" ] || cargo build --release --quiet
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

pools=(16777216 134217728 536870912)
logs=(100663296 536870912)
hashes=(OFF ON)
cat >"$out/space.toml" <<EOF
engine = "innodb"

[[variable]]
name = "innodb_buffer_pool_size"
values = ["${pools[0]}", "${pools[1]}", "${pools[2]}"]

[[variable]]
name = "innodb_log_file_size"
values = ["${logs[0]}", "${logs[1]}"]

[[variable]]
name = "innodb_adaptive_hash_index"
values = ["${hashes[0]}", "${hashes[1]}"]
EOF
study=(oltp_read_only --table-size "$TABLE_SIZE" --rand-type uniform --engines innodb
  --threads "$THREADS" --time "$TIME" --storage-read-latency "$READ_LATENCY")

now() { date +%s.%N; }
fail() { # what failed, its stderr file: said on stderr before the exit trap deletes the file
  echo "tune_vs_grid: $1 failed; its stderr:" >&2
  cat "$2" >&2
  exit 1
}
median_events() { # record.json -> median events/s of its measured cells
  python3 - "$1" <<'EOF'
import json, statistics, sys
cells = [c for c in json.load(open(sys.argv[1]))["cells"] if not c.get("warmup_repeat") and not c.get("error")]
print(statistics.median(c["events_per_s"] for c in cells))
EOF
}

printf "%-44s %12s\n" "grid configuration (pool, redo log, AHI)" "events/s"
grid_start=$(now)
for pool in "${pools[@]}"; do
  for log in "${logs[@]}"; do
    for hash in "${hashes[@]}"; do
      key="$pool,$log,$hash"
      "$BIN" run "${study[@]}" --seed "$SEED" --memory-limit "$MEMORY" --repeat "$REPEATS" --no-db \
        --server-opt "innodb_buffer_pool_size=$pool" --server-opt "innodb_log_file_size=$log" \
        --server-opt "innodb_adaptive_hash_index=$hash" --json "$out/grid-$key.json" >/dev/null 2>"$out/grid.err" ||
        fail "the grid's run of $key" "$out/grid.err"
      figure=$(median_events "$out/grid-$key.json")
      echo "$key $figure" >>"$out/grid.txt"
      printf "%-44s %12.1f\n" "$key" "$figure"
    done
  done
done
grid_s=$(echo "$(now) - $grid_start" | bc)
best_line=$(sort -k2 -g -r "$out/grid.txt" | head -1)
best_figure=${best_line#* }
budget_s=$(printf "%.0f" "$(echo "$grid_s / 3" | bc -l)")

tune() { # label, extra args… -> "seconds key rounds best decided" of its answer
  local label=$1
  shift
  local start end
  start=$(now)
  "$BIN" tune "${study[@]}" --memory "$MEMORY" --space "$out/space.toml" --budget "${budget_s}s" \
    --no-ablation --no-crash --durability none --db "$out/$label.db" "$@" >"$out/$label.txt" 2>"$out/$label.err" ||
    fail "tune $label" "$out/$label.err"
  end=$(now)
  "$BIN" export latest --json --db "$out/$label.db" >"$out/$label.json"
  python3 - "$out/$label.json" "$(echo "$end - $start" | bc)" <<'EOF'
import json, sys
tune = json.load(open(sys.argv[1]))["parameters"]["tune"]
chosen = dict(s.split("=", 1) for s in tune["best_settings"])
defaults = {"innodb_buffer_pool_size": "134217728", "innodb_log_file_size": "100663296",
            "innodb_adaptive_hash_index": "OFF"}
key = ",".join(chosen.get(name, value) for name, value in defaults.items())
print(sys.argv[2], key, tune["rounds"], tune["best"], "decided" if (tune.get("lead_over_default") or {}).get("answer") == "leads" else "undecided")
EOF
}
figure_of() { awk -v key="$1" '$1 == key {print $2}' "$out/grid.txt"; }
share_of() { echo "$(figure_of "$1") / $best_figure" | bc -l; }

echo
printf "grid:   %3d configurations × %s repeats in %6.1f s; best %s at %.1f events/s\n" \
  "$(wc -l <"$out/grid.txt")" "$REPEATS" "$grid_s" "${best_line% *}" "$best_figure"
for i in $(seq 1 "$SEARCHES"); do
  seed=$((SEED + i))
  for search in racing random; do
    # Not `< <(tune …)`: a process substitution's failure would not stop the script.
    tune "$search-$i" --search "$search" --seed "$seed" >"$out/answer.txt"
    read -r s key rounds best lead <"$out/answer.txt"
    share=$(share_of "$key")
    echo "$search $s $share" >>"$out/searches.txt"
    printf "%-6s (seed %s): %6.1f s (budget %s s, %.2f of the grid's time), %s rounds: %s (%s) = %s → %.3f of the grid's best\n" \
      "$search" "$seed" "$s" "$budget_s" "$(echo "$s / $grid_s" | bc -l)" "$rounds" "$best" "$lead" "$key" "$share"
  done
done
python3 - "$out/searches.txt" "$grid_s" <<'EOF'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
grid_s = float(sys.argv[2])
for search in ("racing", "random"):
    mine = [(float(s), float(share)) for name, s, share in rows if name == search]
    print(f"{search}: median {statistics.median(share for _, share in mine):.3f} of the grid's best "
          f"(each: {', '.join(f'{share:.3f}' for _, share in mine)}), "
          f"median {statistics.median(s for s, _ in mine) / grid_s:.2f} of the grid's time")
EOF
echo "(goal: racing ≥ 0.95 of the grid's best in ≤ 0.33 of its time, and ≥ random's share)"
