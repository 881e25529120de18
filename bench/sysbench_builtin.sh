#!/usr/bin/env bash
# sysbench 1.0.20's built-in tests under sysbench and `enginebench sysbench`, the same
# command line alternated ROUNDS times (the order rotating), and per figure both medians
# and the median of the rounds' paired ratios (enginebench / sysbench): cpu events/s,
# memory MiB/s, threads and mutex events/s (mutex: total time, lower is better), fileio
# IOPS and MiB/s per mode (rndrw at least) on files in $DIR (default: a directory under
# the working directory, so the disk measured is the one it is on).
# A benchmark, not a test: figures depend on the machine; compare ratios within one run.
# EB picks the enginebench binary (default target/release/enginebench). SELF=1 puts sysbench
# in both columns: the spread of one program against itself, the noise the ratios sit in.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
TIME=${TIME:-5}
THREADS=${THREADS:-1}
FILE_SIZE=${FILE_SIZE:-1G}
FILE_MODES=${FILE_MODES:-"rndrw rndrd seqwr"}
eb=${EB:-${CARGO_TARGET_DIR:-$PWD/target}/release/enginebench}
[ -x "$eb" ] || { echo "no enginebench at $eb: build it (cargo build --release) or set EB" >&2; exit 1; }
command -v sysbench >/dev/null || { echo "sysbench is missing: apt-get install sysbench" >&2; exit 1; }
DIR=${DIR:-$PWD/sysbench-builtin.$$}
mkdir -p "$DIR"
export ENGINEBENCH_DB="$DIR/eb.db"
trap 'cd "$DIR" && sysbench fileio --file-total-size="$FILE_SIZE" cleanup >/dev/null; rm -rf "$DIR"' EXIT

# tool args... -> stdout of the run (in $DIR, where fileio's files are)
# Each fileio run starts with the page cache written back (`sync`): a seqwr run unlinks and
# rewrites the files the previous run left dirty, and without it whichever tool ran second
# paid for the first's writeback (one pair measured 46.9 vs 88.7 MiB/s by order alone).
run() {
  local tool=$1; shift
  case " $* " in *" fileio "*) sync ;; esac
  if [ "$tool" = sysbench ] || [ "${SELF:-0}" = 1 ]; then (cd "$DIR" && sysbench "$@"); else (cd "$DIR" && "$eb" sysbench "$@"); fi
}
# name awk-program args...: ROUNDS alternated runs; prints "name sb eb ratio"
measure() {
  local name=$1 prog=$2; shift 2
  local sbs=() ebs=() ratios=()
  for round in $(seq 1 "$ROUNDS"); do
    local order="sysbench enginebench"
    [ $((round % 2)) = 0 ] && order="enginebench sysbench"
    local sb eb_
    for tool in $order; do
      local figure
      figure=$(run "$tool" --threads="$THREADS" --time="$TIME" "$@" | awk "$prog")
      [ -n "$figure" ] || { echo "$name: $tool printed no figure" >&2; exit 1; }
      if [ "$tool" = sysbench ]; then sb=$figure; else eb_=$figure; fi
    done
    sbs+=("$sb"); ebs+=("$eb_"); ratios+=("$(awk -v a="$eb_" -v b="$sb" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')")
  done
  printf '%-28s %12s %12s %8s\n' "$name" "$(median "${sbs[@]}")" "$(median "${ebs[@]}")" "$(median "${ratios[@]}")"
}
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-28s %12s %12s %8s\n' figure sysbench enginebench eb/sb
measure "cpu events/s" '/events per second:/ { print $4 }' cpu run
measure "memory MiB/s" '/MiB transferred/ { gsub(/\(/, "", $4); print $4 }' memory run
# The same bytes in 1 MiB blocks: with sysbench's default 1 KiB block an event takes tens of
# nanoseconds, so the line above weighs each tool's per-event bookkeeping (sysbench: three
# clock reads and a log() per event; enginebench does the same, builtin/bookkeeping.rs) as
# much as the memory; here the write loop alone (sysbench's, instruction for instruction).
measure "memory 1M-block MiB/s" '/MiB transferred/ { gsub(/\(/, "", $4); print $4 }' --memory-block-size=1M memory run
measure "threads events/s" '/total number of events:/ { e = $5 } /total time:/ { t = $3 + 0 } END { if (t > 0) printf "%.2f", e / t }' threads run
measure "mutex total time s" '/total time:/ { print $3 + 0 }' --threads=2 mutex run
(cd "$DIR" && sysbench fileio --file-total-size="$FILE_SIZE" prepare >/dev/null)
for mode in $FILE_MODES; do
  measure "fileio $mode IOPS" '/reads\/s:/ { r = $2 } /writes\/s:/ { w = $2 } END { printf "%.2f", r + w }' \
    --file-total-size="$FILE_SIZE" --file-test-mode="$mode" fileio run
  measure "fileio $mode MiB/s" '/read, MiB\/s:/ { r = $3 } /written, MiB\/s:/ { w = $3 } END { printf "%.2f", r + w }' \
    --file-total-size="$FILE_SIZE" --file-test-mode="$mode" fileio run
done
echo "medians of $ROUNDS alternated rounds of ${TIME}s at $THREADS thread(s); eb/sb is the median of the rounds' paired ratios"
