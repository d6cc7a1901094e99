#!/bin/bash
# Issue 17, "the fast paths take every legal shape": sync that finds nothing changed and
# currency.transact (fsync always), 50 connections, pipeline 16, with lineload, each shape one
# run of $SECONDS_EACH seconds (default 10): with an id and without one, then one other legal
# shape of each (members in another order, spaces, an unknown member, an escaped string, as a
# Python client escapes non-ASCII; transact also by customer user id, with an amount of 1.0).
# Prints requests/s and the server's CPU a request for each, and every shape's ratio to the one
# with an id.
#
# Run from the repository. Builds the release server unless B names a build directory that has
# one; builds lineload (LINELOAD, default /tmp/lineload) from LINELOAD_SRC (default
# ../shared/bench/lineload.c) when it is missing. The server listens on 127.0.0.1:$PORT
# (default 7433) with a fresh data directory, and is stopped by its pid at the end.
set -u
SECONDS_EACH=${SECONDS_EACH:-10}
PORT=${PORT:-7433}
LINELOAD=${LINELOAD:-/tmp/lineload}
if [ -z "${B:-}" ]; then
  swift build -c release --product gatehouse >&2 || exit 1
  B=.build/release
fi
[ -x "$LINELOAD" ] || cc -O2 -o "$LINELOAD" "${LINELOAD_SRC:-../shared/bench/lineload.c}" || exit 1

DATA=$(mktemp -d "${TMPDIR:-/tmp}/gh-shapes.XXXXXX")
KEY=ak_shapes_$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
timeout $((SECONDS_EACH * 6 + 120)) "$B/gatehouse" serve --data-dir "$DATA/data" --listen 127.0.0.1:$PORT --http off \
  --admin-key "$KEY" --fsync always --log-level warning >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$DATA"' EXIT

call() { "$B/gatehouse" call --connect 127.0.0.1:$PORT --key "$1" "$2"; }
field() { python3 -c 'import sys,json; v=json.loads(sys.stdin.readline())
for k in sys.argv[1:]: v=v[k]
print(v)' "$@"; }
for _ in $(seq 50); do call "$KEY" '{"op":"ping"}' >/dev/null 2>&1 && break; sleep 0.1; done

OUT=$(call "$KEY" '{"op":"project.create","project":"shapes"}') || { echo "project.create: $OUT" >&2; exit 1; }
PUBLIC=$(echo "$OUT" | field keys public)
SECRET=$(echo "$OUT" | field keys secret)
call "$SECRET" '{"op":"config.put","config":{"currencies":[{"code":"COINS"}]}}' >/dev/null || exit 1
PROFILE=$(call "$SECRET" '{"op":"profile.create","customer_user_id":"shapes-user"}' | field profile profile_id)
# A first sync (through the actor) gives the cursor that the runs' syncs find nothing changed after.
CURSOR=$(call "$PUBLIC" "{\"op\":\"sync\",\"profile_id\":\"$PROFILE\"}" | field cursor)

# The server's CPU time so far (user + system, clock ticks): a cost a request that holds up
# better than the rate when other work shares the machine. $pid is timeout's; the server is its child.
server=$(pgrep -P $pid -f "gatehouse serve" || echo $pid)
cpu() { awk '{print $14 + $15}' /proc/$server/stat; }

# Runs lineload with one request line; prints "<label> rps=… p50_us=… p99_us=… errors=… cpu_us=…"
# (cpu_us: the server's CPU a request).
run() {
  local label=$1 key=$2 line=$3
  local result before after requests
  before=$(cpu)
  result=$("$LINELOAD" -h 127.0.0.1 -p $PORT -c 50 -P 16 -d "$SECONDS_EACH" -s "{\"op\":\"hello\",\"key\":\"$key\"}" -r "$line" 2>&1 | tail -1)
  after=$(cpu)
  requests=$(echo "$result" | tr ' ' '\n' | sed -n 's/^requests=//p')
  echo "$label $(echo "$result" | tr ' ' '\n' | grep -E '^(rps|p50_us|p99_us|errors)=' | tr '\n' ' ')cpu_us=$(python3 -c \
    "import sys; print(f'{(int(sys.argv[2]) - int(sys.argv[1])) / int(sys.argv[3]) * 1e6 / max(int(sys.argv[4] or 0), 1):.2f}')" \
    "$before" "$after" "$(getconf CLK_TCK)" "${requests:-0}")"
}

# lineload fills only the first {n}: the syncs' ids count up, the transacts' keys do (their
# ids, where they have one, stay the same).
{
  run "sync-with-id" "$PUBLIC" "{\"id\":{n},\"op\":\"sync\",\"profile_id\":\"$PROFILE\",\"cursor\":$CURSOR}"
  run "sync-without-id" "$PUBLIC" "{\"op\":\"sync\",\"profile_id\":\"$PROFILE\",\"cursor\":$CURSOR}"
  run "sync-other-shape" "$PUBLIC" "{ \"cursor\" : $CURSOR, \"app_version\": \"2.1.0\", \"profile_id\": \"$PROFILE\", \"op\": \"sync\", \"id\": \"\\u00e9-{n}\" }"
  run "transact-with-id" "$SECRET" "{\"id\":7,\"op\":\"currency.transact\",\"profile_id\":\"$PROFILE\",\"currency\":\"COINS\",\"amount\":1,\"idempotency_key\":\"a{n}\"}"
  run "transact-without-id" "$SECRET" "{\"op\":\"currency.transact\",\"profile_id\":\"$PROFILE\",\"currency\":\"COINS\",\"amount\":1,\"idempotency_key\":\"b{n}\"}"
  run "transact-other-shape" "$SECRET" "{\"idempotency_key\":\"c{n}\",\"reason\":\"bonus \\u2728\",\"trace\":{\"span\":[1,2]},\"amount\":1.0,\"currency\":\"COINS\",\"customer_user_id\":\"shapes-user\",\"op\":\"currency.transact\"}"
} | tee "$DATA/runs"

python3 - "$DATA/runs" <<'PY'
import sys
rates, costs = {}, {}
for line in open(sys.argv[1]):
    label, *fields = line.split()
    values = dict(f.split("=") for f in fields)
    rates[label], costs[label] = float(values["rps"]), float(values["cpu_us"])
for op in ("sync", "transact"):
    for shape in ("without-id", "other-shape"):
        key, base = f"{op}-{shape}", f"{op}-with-id"
        print(f"{op} {shape} / with id: rate {rates[key] / rates[base]:.2f}, server CPU a request {costs[key] / costs[base]:.2f}")
PY
BALANCE=$(call "$SECRET" "{\"op\":\"profile.get\",\"profile_id\":\"$PROFILE\"}" | field currencies COINS)
echo "COINS balance after the transact runs: $BALANCE"
