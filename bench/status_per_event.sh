# Sourced by the benches that compare the engine's counters (after bench/throwaway_server.sh,
# which sets $socket): `status FILE` keeps the server's SHOW GLOBAL STATUS;
# `per_event LABEL BEFORE AFTER EVENTS` prints "LABEL COUNTER VALUE" for each of $COUNTERS,
# the change between the two files divided by EVENTS.
status() { mariadb --socket="$socket" -uroot -N -e "SHOW GLOBAL STATUS" >"$1"; }
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
