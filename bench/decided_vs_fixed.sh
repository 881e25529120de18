#!/usr/bin/env bash
# Decide, then stop, against a fixed 12-repeat design (issue 48): STUDY (S0 by default) at
# THREADS, run ROUNDS times each way, alternating (decided, fixed, decided, fixed …) in one
# run. S0 runs LOOPS loops per thread on ROWS rows; a sysbench workload (STUDY=oltp_read_write
# THREADS=1,4,16 TIME=2 bench/decided_vs_fixed.sh) runs on ENGINES, TIME seconds per cell,
# sbtest tables of TABLE_SIZE rows, each engine's in a database of its own. Prints each
# run's wall time, the medians and their ratio (goal: decided ≤ 0.5 of fixed), and per
# phase × thread count each design's answer (leads, equivalent, undecided, with the
# leader) and whether they agree. Agreement means the same answer, or the decided run
# undecided where the fixed one called a lead or an equivalence (the decided run's
# intervals are wider: its error rate is spent over ten looks).
# A benchmark, not a test: figures depend on the machine; compare within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
STUDY=${STUDY:-s0}
ROWS=${ROWS:-100000}
THREADS=${THREADS:-1,5,20}
LOOPS=${LOOPS:-200}
ENGINES=${ENGINES:-innodb,myisam}
TABLE_SIZE=${TABLE_SIZE:-10000}
TIME=${TIME:-2}
ROUNDS=${ROUNDS:-1}
case "$STUDY" in
s0) study_args=(--rows "$ROWS" --loops "$LOOPS") ;;
*) study_args=(--engines "$ENGINES" --table-size "$TABLE_SIZE" --time "$TIME") ;;
esac
BIN=${BIN:-target/release/enginebench}
[ -x "$BIN" ] || cargo build --release --quiet
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

run() { # label, extra args… -> wall seconds; the record in $out/label.json
  local label=$1
  shift
  local start end
  start=$(date +%s.%N)
  "$BIN" run "$STUDY" "${study_args[@]}" --threads "$THREADS" --no-db \
    --json "$out/$label.json" "$@" >/dev/null 2>&1
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}

decided=() fixed=()
echo "$STUDY ${study_args[*]} --threads $THREADS: decided vs --repeat 12"
printf "%-6s %12s %12s\n" round decided_s fixed_s
for round in $(seq "$ROUNDS"); do
  d=$(run "decided-$round")
  f=$(run "fixed-$round" --repeat 12)
  decided+=("$d") fixed+=("$f")
  printf "%-6s %12.1f %12.1f\n" "$round" "$d" "$f"
done

python3 - "$out" "$ROUNDS" "${decided[@]}" "${fixed[@]}" <<'EOF'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
times = [float(t) for t in sys.argv[3:]]
decided_s, fixed_s = times[:rounds], times[rounds:]
md, mf = statistics.median(decided_s), statistics.median(fixed_s)
print(f"median wall: decided {md:.1f} s, fixed 12 {mf:.1f} s, ratio {md / mf:.2f}")

def answers(path):
    record = json.load(open(path))
    found = {}
    for phase in record["verdict"]["phases"]:
        for row in phase["rows"]:
            standings = [a["standing"]["answer"] for a in row["against"]]
            if all(s == "leads" for s in standings):
                answer = f"{row['leader']} leads"
            elif all(s in ("leads", "equivalent") for s in standings):
                answer = "equivalent"
            else:
                answer = "undecided"
            repeats = sum(
                1 for c in record["cells"]
                if c["variant"] == phase["phase"] and c["threads"] == row["threads"]
                and not c.get("warmup_repeat")
            ) // max(1, len(row["against"]) + 1)
            found[(phase["phase"], row["threads"])] = (answer, repeats)
    return found

for r in range(1, rounds + 1):
    d, f = answers(f"{out}/decided-{r}.json"), answers(f"{out}/fixed-{r}.json")
    agree = 0
    print(f"\nround {r}: {'phase at threads':<32} {'decided (repeats)':<28} {'fixed 12':<20} agree")
    for key in sorted(f):
        (da, dn), (fa, _) = d.get(key, ("missing", 0)), f[key]
        ok = da == fa or da == "undecided"
        agree += ok
        print(f"         {key[0] + ' at ' + str(key[1]):<32} {da + f' ({dn})':<28} {fa:<20} {'yes' if ok else 'NO'}")
    print(f"round {r}: {agree} of {len(f)} agree")
EOF
