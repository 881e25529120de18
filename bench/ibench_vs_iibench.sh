#!/usr/bin/env bash
# The insert benchmark's qr100 as Mark Callaghan's iibench.py runs it (mdcallag/mytools,
# bench/ibench/iibench.py, with mysqlclient from PyPI in a venv of its own) and as
# enginebench's ibench runs it, on one throwaway MariaDB server, on InnoDB and on MyRocks, at
# the same scale: ROWS rows loaded in PK order (l.i0), the 3 secondary indexes added (l.x),
# then qr100 for TIME seconds (range queries as fast as one connection goes, beside a writer
# inserting and deleting 100 rows/s), ROUNDS times, the two tools' order alternating round by
# round (each round loads its tables afresh). Prints per engine, per query of qr100, the
# engine's own counters and the server's CPU for both tools (medians over the rounds), the
# ratio of medians, the range of the rounds' ratios, and whether the medians are within 5%.
# PROTOCOL (text by default, iibench.py's) is what enginebench sends (--protocol).
#   iibench.py: counters from SHOW GLOBAL STATUS and the server's CPU from /proc/PID/stat
#     around its qr100 process; queries from its "Query thread: N queries" line.
#   enginebench: counters from the qr100 cell of its record (the measured phase), the
#     server's CPU from /proc/PID/stat sampled every 0.1 s over the cell's measured window.
# A benchmark, not a test: figures depend on the machine. MYTOOLS_DIR names a checkout of
# mdcallag/mytools, else it is cloned from GitHub into the scratch directory.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${ROWS:-200000}
TIME=${TIME:-30}
ROUNDS=${ROUNDS:-3}
ENGINES=${ENGINES:-"innodb rocksdb"}
PROTOCOL=${PROTOCOL:-text}
TOLERANCE_PCT=${TOLERANCE_PCT:-5}
COUNTERS=(Rocksdb_covered_secondary_key_lookups Rocksdb_queries_point Rocksdb_queries_range
  Handler_read_key Handler_read_next Handler_read_first Handler_read_rnd_next
  Innodb_buffer_pool_read_requests)

eb=${EB:-${CARGO_TARGET_DIR:-$PWD/target}/suite/enginebench}
[ -x "$eb" ] || cargo build --profile suite --quiet
work=$(mktemp -d)
"$eb" server start >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
sampler_pid=
cleanup() {
  [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null || true
  kill -INT "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 300); do grep -q "press Ctrl-C" "$work/server.out" 2>/dev/null && break; sleep 0.1; done
socket=$(grep -o -- '--socket=[^ ]*' "$work/server.out" | head -1 | cut -d= -f2)
[ -n "$socket" ] || { echo "server did not start:"; cat "$work/server.err"; exit 1; }
mariadbd_pid=$(pgrep -f -- "--socket=$socket" | while read -r p; do
  [ "$(cat /proc/"$p"/comm)" = mariadbd ] && echo "$p"; done | head -1)
[ -n "$mariadbd_pid" ] || { echo "no mariadbd serving $socket"; exit 1; }
sql() { mariadb --socket="$socket" -uroot -N -B -e "$1"; }

# iibench.py and its client library, in a venv of the script's own.
mytools=${MYTOOLS_DIR:-$work/mytools}
if [ ! -f "$mytools/bench/ibench/iibench.py" ]; then
  git clone -q --depth 1 https://github.com/mdcallag/mytools "$mytools" || {
    echo "cannot fetch mdcallag/mytools: set MYTOOLS_DIR to a checkout of it"; exit 1; }
fi
venv=${IIBENCH_VENV:-$HOME/.cache/enginebench/iibench-venv}
if ! "$venv/bin/python" -c 'import MySQLdb' 2>/dev/null; then
  command -v mariadb_config >/dev/null || command -v mysql_config >/dev/null ||
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libmariadb-dev pkg-config >/dev/null
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet mysqlclient
fi
iibench() { (cd "$mytools/bench/ibench" && "$venv/bin/python" iibench.py --dbms=mysql \
  --db_socket="$socket" --db_user=root --secs_per_report=1 --table_name=pi1 \
  --data_length_min=10 --data_length_max=20 "$@"); }

cpu_ticks() { awk '{print $14 + $15}' "/proc/$mariadbd_pid/stat"; }
ticks_per_s=$(getconf CLK_TCK)
status() { sql "SHOW GLOBAL STATUS" >"$1"; }

# The server's CPU ticks every 0.1 s, "unix_time ticks" a line, for enginebench's window.
( while :; do echo "$(date +%s.%N) $(cpu_ticks)"; sleep 0.1; done ) >"$work/cpu.samples" &
sampler_pid=$!

echo "qr100 of the insert benchmark: $ROWS rows, $TIME s, $ROUNDS rounds, one MariaDB server ($(sql 'SELECT VERSION()')), enginebench --protocol $PROTOCOL"

run_iibench() { # engine round: l.i0, l.x, the write debt reduced as enginebench does it, then qr100
  local engine=$1 db=ib_py_$1
  sql "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db"
  iibench --db_name="$db" --engine="$engine" --setup --max_rows="$ROWS" --rows_per_commit=100 \
    --num_secondary_indexes=0 --query_threads=0 >"$work/py.li0" 2>&1 || { cat "$work/py.li0"; exit 1; }
  iibench --db_name="$db" --engine="$engine" --max_rows=100 --rows_per_commit=100 \
    --num_secondary_indexes=3 --secondary_at_end --query_threads=0 >"$work/py.lx" 2>&1 || { cat "$work/py.lx"; exit 1; }
  sql "ANALYZE TABLE $db.pi1" >/dev/null
  [ "$engine" = rocksdb ] && sql "SET GLOBAL rocksdb_force_flush_memtable_now = 1"
  sleep 1
  status "$work/py.before"; local cpu_before; cpu_before=$(cpu_ticks)
  iibench --db_name="$db" --engine="$engine" --max_rows=$((TIME * 100)) --max_seconds="$TIME" \
    --rows_per_commit=50 --inserts_per_second=100 --query_threads=1 --delete_per_insert \
    --num_secondary_indexes=3 >"$work/py.qr100" 2>&1 || { cat "$work/py.qr100"; exit 1; }
  echo $(( $(cpu_ticks) - cpu_before )) >"$work/py.ticks"; status "$work/py.after"
  grep -o 'Query thread: [0-9]*' "$work/py.qr100" | awk '{print $3}' >"$work/py.queries"
  sql "DROP DATABASE $db"
}

run_enginebench() { # engine: the same steps on its own database, over the same server's socket
  "$eb" run ibench --dsn "mysql://root@localhost?socket=$socket" --engines "$1" --rows "$ROWS" \
    --steps qr100 --time "${TIME}s" --protocol "$PROTOCOL" --json "$work/eb.json" \
    >"$work/eb.out" 2>"$work/eb.err" || { cat "$work/eb.err"; exit 1; }
  sleep 0.3
}

for round in $(seq "$ROUNDS"); do
  for engine in $ENGINES; do
    if [ $((round % 2)) = 1 ]; then run_iibench "$engine"; run_enginebench "$engine"
    else run_enginebench "$engine"; run_iibench "$engine"; fi
    python3 - "$engine" "$round" "$work" "$ticks_per_s" "${COUNTERS[@]}" >>"$work/rounds.jsonl" <<'PY'
import json, sys
engine, round_, work, hz = sys.argv[1:5]
counters, hz = sys.argv[5:], int(hz)
py_queries = int(open(f"{work}/py.queries").read())
py_ticks = int(open(f"{work}/py.ticks").read())
read = lambda path: {k: int(v) for k, v in (l.rstrip("\n").split("\t") for l in open(path))
                     if v.strip().lstrip("-").isdigit()}
before, after = read(f"{work}/py.before"), read(f"{work}/py.after")
py = {name: (after.get(name, 0) - before.get(name, 0)) / py_queries for name in counters}
py["server CPU µs"] = py_ticks / hz * 1e6 / py_queries
cell = next(c for c in json.load(open(f"{work}/eb.json"))["cells"] if c["variant"] == "qr100")
eb_queries = sum(q["count"] for q in cell["queries"]
                 if q["name"].split("/")[-1] in ("market", "register", "pdc"))
delta = cell["server_status_delta"]
eb = {name: delta.get(name, 0) / eb_queries for name in counters}
# The server's CPU over the cell's measured window, from the samples around it.
start = cell["measure_started_unix_s"]; end = start + cell["wall_ms"] / 1000
samples = [tuple(map(float, l.split())) for l in open(f"{work}/cpu.samples") if len(l.split()) == 2]
def ticks_at(t):
    for (t0, v0), (t1, v1) in zip(samples, samples[1:]):
        if t0 <= t <= t1:
            return v0 + (v1 - v0) * (t - t0) / max(t1 - t0, 1e-9)
    raise SystemExit(f"no CPU sample around {t}")
eb["server CPU µs"] = (ticks_at(end) - ticks_at(start)) / hz * 1e6 / eb_queries
print(json.dumps({"engine": engine, "round": int(round_), "py_queries": py_queries,
                  "eb_queries": eb_queries, "eb_s": cell["wall_ms"] / 1000,
                  "sent": cell.get("protocol", {}).get("sent"), "py": py, "eb": eb}))
PY
    tail -1 "$work/rounds.jsonl" | python3 -c '
import json, sys
r = json.load(sys.stdin)
py, eb = r["py"]["server CPU µs"], r["eb"]["server CPU µs"]
print("round %d %s: iibench.py %d queries, enginebench %d; server CPU us/query %.1f vs %.1f"
      % (r["round"], r["engine"], r["py_queries"], r["eb_queries"], py, eb))'
  done
done

QR_TIME="$TIME" python3 - "$work/rounds.jsonl" "$TOLERANCE_PCT" <<'PY'
import json, os, statistics, sys
rounds = [json.loads(l) for l in open(sys.argv[1])]
tolerance = float(sys.argv[2])
for engine in dict.fromkeys(r["engine"] for r in rounds):
    mine = [r for r in rounds if r["engine"] == engine]
    med = lambda values: statistics.median(values)
    print(f"\n{engine}, {len(mine)} round(s): iibench.py {med([r['py_queries'] for r in mine]) / float(os.environ['QR_TIME']):.0f} queries/s, "
          f"enginebench {med([r['eb_queries'] / r['eb_s'] for r in mine]):.0f} queries/s, sent {mine[0]['sent']} (medians)")
    print(f"  {'per query of qr100 (median)':40} {'iibench.py':>12} {'enginebench':>12} {'ratio':>7} {'rounds':>13}  within {tolerance:g}%")
    for name in mine[0]["py"]:
        a, b = med([r["py"][name] for r in mine]), med([r["eb"][name] for r in mine])
        ratios = [r["eb"][name] / r["py"][name] for r in mine if r["py"][name]]
        spread = f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else "-"
        near = abs(b - a) <= tolerance / 100 * max(abs(a), abs(b)) or max(abs(a), abs(b)) < 0.01
        ratio = f"{b / a:7.3f}" if a else "      -"
        print(f"  {name:40} {a:12.3f} {b:12.3f} {ratio} {spread:>13}  {'yes' if near else 'NO'}")
PY
