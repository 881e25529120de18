# Sourced by the benches that compare the engine's counters (after bench/throwaway_server.sh,
# which sets $socket): `status FILE` keeps the server's SHOW GLOBAL STATUS;
# `per_event LABEL BEFORE AFTER EVENTS` prints "LABEL COUNTER VALUE" for each of $COUNTERS,
# the change between the two files divided by EVENTS.
# `hold_purge` and `release_purge` go around a tool's window when PURGE=hold (the default):
# purge is let finish what came before, then a connection holds a consistent snapshot open,
# so InnoDB's purge, which runs in the background when it will, does none of the window's
# work inside it (its reads of undo and index pages would land in one tool's counters or the
# next's by timing). PURGE=run lets it.
status() { mariadb --socket="$socket" -uroot -N -e "SHOW GLOBAL STATUS" >"$1"; }
PURGE=${PURGE:-hold}
case "$PURGE" in hold|run) ;; *) echo "PURGE=$PURGE: give hold or run"; exit 2 ;; esac
hold_purge() {
  [ "$PURGE" = hold ] || return 0
  # First the purge of what came before (the last window's held work) to its end: MariaDB
  # waits in this SET until the history list is empty.
  mariadb --socket="$socket" -uroot -e "SET GLOBAL innodb_max_purge_lag_wait = 0"
  : >"$work/purge_holder"
  mariadb --socket="$socket" -uroot -N -B --unbuffered -e \
    "SELECT CONNECTION_ID(); START TRANSACTION WITH CONSISTENT SNAPSHOT; SELECT 'held'; SELECT SLEEP(86400)" \
    >"$work/purge_holder" 2>/dev/null &
  purge_holder_pid=$!
  for _ in $(seq 200); do grep -q held "$work/purge_holder" && return 0; sleep 0.05; done
  echo "could not hold a snapshot open"; exit 1
}
release_purge() {
  [ "$PURGE" = hold ] || return 0
  mariadb --socket="$socket" -uroot -e "KILL $(head -1 "$work/purge_holder")" 2>/dev/null || true
  wait "$purge_holder_pid" 2>/dev/null || true
}
per_event() {
  python3 - "$1" "$2" "$3" "$4" "$COUNTERS" <<'PY'
import sys
def read(path):
    out = {}
    for line in open(path):
        name, _, value = line.rstrip("\n").partition("\t")
        try:
            out[name] = float(value)
        except ValueError:
            pass
    return out
before, after, events = read(sys.argv[2]), read(sys.argv[3]), float(sys.argv[4])
for counter in sys.argv[5].split():
    print(sys.argv[1], counter, (after.get(counter, 0.0) - before.get(counter, 0.0)) / events)
PY
}
