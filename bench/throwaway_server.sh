# Sourced by the bench scripts: installs sysbench and bc when missing, builds enginebench,
# starts one throwaway server for the whole script and stops it on exit.
# Sets: eb (the binary), work (a scratch directory), port, socket.
for tool in sysbench bc; do
  command -v "$tool" >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$tool" >/dev/null
done
# EB=path uses that binary instead of building the release one (e.g. target/suite/enginebench
# for a bench that counts rather than times).
if [ -n "${EB:-}" ]; then
  eb=$EB
else
  cargo build --release --quiet
  eb=${CARGO_TARGET_DIR:-$PWD/target}/release/enginebench
fi
work=$(mktemp -d)
# shellcheck disable=SC2086 # SERVER_ARGS: extra flags, split on purpose
"$eb" server start ${SERVER_ARGS:-} >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
cleanup() { kill -INT "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
for _ in $(seq 300); do grep -q "press Ctrl-C" "$work/server.out" 2>/dev/null && break; sleep 0.1; done
port=$(grep -o -- '-P[0-9]*' "$work/server.out" | head -1 | cut -c3-)
socket=$(grep -o -- '--socket=[^ ]*' "$work/server.out" | head -1 | cut -d= -f2)
[ -n "$port" ] || { echo "server did not start:"; cat "$work/server.err"; exit 1; }
