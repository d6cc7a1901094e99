#!/bin/bash
# wrk (Debian) against Gatehouse's GET /healthz (fsync always) and against nginx (Debian) serving
# a static file with the same body and type, 50 connections on 2 wrk threads for 10 s, the two
# alternating, twice each, in one run; then a table of requests/s and p50/p99 latency.
# Run from the repository: it builds release first, unless B points at a built binary's directory.
# Needs Debian's wrk and nginx (apt-get install wrk nginx); nginx runs from a temporary config.
# Everything listens on 127.0.0.1 and runs under `timeout`; both servers are stopped by pid.
set -u
. "$(dirname "$0")/nginx-yardstick.sh"
if [ -z "${B:-}" ]; then swift build -c release >/dev/null || exit 1; B=.build/release; fi
KEY=ak_yardstick_$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
T=$(mktemp -d /tmp/gh-http-yard.XXXXXX)
# nginx's worker runs as nobody when started as root: it must be able to read the file.
chmod 0755 "$T"
gatehouse=; nginx=
stop() {
  for pid in $gatehouse $nginx; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
  rm -rf "$T"
}
trap stop EXIT

timeout 300 "$B/gatehouse" serve --data-dir "$T/data" --listen 127.0.0.1:0 --http=127.0.0.1:0 --admin-key "$KEY" \
  --fsync always --log-level warning >"$T/serve.out" 2>"$T/serve.err" &
gatehouse=$!
for _ in $(seq 100); do grep -q '^http on ' "$T/serve.out" 2>/dev/null && break; sleep 0.1; done
GATEHOUSE=$(sed -n 's/^http on \([^ ]*\).*/\1/p' "$T/serve.out")
[ -n "$GATEHOUSE" ] || { echo "gatehouse did not say where it serves HTTP:"; cat "$T/serve.out" "$T/serve.err"; exit 1; }

mkdir -p "$T/www" && chmod 0755 "$T/www"
printf '%s' '{"status":"ok"}' >"$T/www/healthz" && chmod 0644 "$T/www/healthz"
start_nginx 300 'location = /healthz { default_type application/json; }'
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$NGINX_PORT/healthz" && break; sleep 0.1; done

echo "gatehouse http://$GATEHOUSE/healthz: $(curl -sS -D - "http://$GATEHOUSE/healthz" | tr -d '\r' | grep -i '^content-type\|^{' | tr '\n' ' ')"
echo "nginx     http://127.0.0.1:$NGINX_PORT/healthz: $(curl -sS -D - "http://127.0.0.1:$NGINX_PORT/healthz" | tr -d '\r' | grep -i '^content-type\|^{' | tr '\n' ' ')"

RESULTS=$T/results
for round in 1 2; do
  run_wrk gatehouse "http://$GATEHOUSE/healthz" >>"$RESULTS"
  run_wrk nginx "http://127.0.0.1:$NGINX_PORT/healthz" >>"$RESULTS"
done
printf "%-24s %12s %10s %10s\n" "server" "requests/s" "p50" "p99"
cat "$RESULTS"
