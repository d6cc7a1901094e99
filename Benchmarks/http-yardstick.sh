#!/bin/bash
# wrk (Debian) against Gatehouse's GET /healthz (fsync always) and against nginx (Debian) serving
# a static file with the same body and type, 50 connections on 2 wrk threads for 10 s, the two
# alternating, twice each, in one run; then a table of requests/s and p50/p99 latency.
# Run from the repository: it builds release first, unless B points at a built binary's directory.
# Needs Debian's wrk and nginx (apt-get install wrk nginx); nginx runs from a temporary config.
# Everything listens on 127.0.0.1 and runs under `timeout`; both servers are stopped by pid.
set -u
. "$(dirname "$0")/http-yardstick-lib.sh"
start_gatehouse 400

mkdir -p "$T/www" && chmod 0755 "$T/www"
printf '%s' '{"status":"ok"}' >"$T/www/healthz" && chmod 0644 "$T/www/healthz"
start_nginx 300 'location = /healthz { default_type application/json; }'
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$NGINX_PORT/healthz" && break; sleep 0.1; done

echo "gatehouse http://$HTTP/healthz: $(curl -sS -D - "http://$HTTP/healthz" | tr -d '\r' | grep -i '^content-type\|^{' | tr '\n' ' ')"
echo "nginx     http://127.0.0.1:$NGINX_PORT/healthz: $(curl -sS -D - "http://127.0.0.1:$NGINX_PORT/healthz" | tr -d '\r' | grep -i '^content-type\|^{' | tr '\n' ' ')"

RESULTS=$T/results
for round in 1 2; do
  run_wrk gatehouse "http://$HTTP/healthz" >>"$RESULTS"
  run_wrk nginx "http://127.0.0.1:$NGINX_PORT/healthz" >>"$RESULTS"
done
printf "%-24s %12s %10s %10s\n" "server" "requests/s" "p50" "p99"
cat "$RESULTS"
