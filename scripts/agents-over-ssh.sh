#!/usr/bin/env bash
# Runs one enginebench study from several client hosts at once, over ssh, and merges the
# parts into one run. Each host needs enginebench on its PATH and must reach the server.
#
#   scripts/agents-over-ssh.sh HOST1,HOST2,... DSN [run options...]
#   e.g. scripts/agents-over-ssh.sh bench@c1,bench@c2 mysql://bench@db1:3306 oltp_point_select --threads 64 --time 60s
#
# Agent K runs on the K-th host with --agent K/N and one --start-at for all (LEAD_S seconds
# from now, default 30: time for ssh and for agent 1 to prepare the tables). The parts are
# copied back with scp into OUT (default ./enginebench-parts) and merged there; the merged
# run is stored in the local result store like any run.
#
# Environment: SSH and SCP (default ssh and scp), REMOTE_DIR (where parts are written on
# the hosts, default /tmp), ENGINEBENCH (the local binary for merge, default enginebench),
# REMOTE_ENGINEBENCH (the hosts' binary, default enginebench).
set -euo pipefail

if [ $# -lt 3 ]; then
    sed -n '2,16p' "$0" >&2
    exit 2
fi
hosts=$1
dsn=$2
shift 2
SSH=${SSH:-ssh}
SCP=${SCP:-scp}
OUT=${OUT:-./enginebench-parts}
REMOTE_DIR=${REMOTE_DIR:-/tmp}
ENGINEBENCH=${ENGINEBENCH:-enginebench}
REMOTE_ENGINEBENCH=${REMOTE_ENGINEBENCH:-enginebench}

IFS=',' read -r -a host_list <<<"$hosts"
count=${#host_list[@]}
start_at=$(date -u -d "+${LEAD_S:-30} sec" +%Y-%m-%dT%H:%M:%SZ)
mkdir -p "$OUT"
# ssh hands the remote shell one string: quote every argument for it.
run_args=$(printf ' %q' "$@")
echo "starting $count agents at $start_at; logs in $OUT/agent-K.log" >&2

pids=()
for index in "${!host_list[@]}"; do
    k=$((index + 1))
    part="$REMOTE_DIR/enginebench-part-$k-of-$count.json"
    $SSH "${host_list[$index]}" \
        "$REMOTE_ENGINEBENCH run$run_args --dsn $(printf %q "$dsn") --agent $k/$count --start-at $start_at --json $part --no-db" \
        >"$OUT/agent-$k.log" 2>&1 &
    pids+=($!)
done

failed=0
for index in "${!pids[@]}"; do
    k=$((index + 1))
    if ! wait "${pids[$index]}"; then
        echo "agent $k on ${host_list[$index]} failed: see $OUT/agent-$k.log" >&2
        failed=1
    fi
done

parts=()
for index in "${!host_list[@]}"; do
    k=$((index + 1))
    part="$REMOTE_DIR/enginebench-part-$k-of-$count.json"
    if $SCP "${host_list[$index]}:$part" "$OUT/part-$k.json" >&2; then
        parts+=("$OUT/part-$k.json")
    fi
done
# A failed agent's part still holds what it measured; merge names it.
"$ENGINEBENCH" merge "${parts[@]}" --json "$OUT/merged.json"
exit $failed
