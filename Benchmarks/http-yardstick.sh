#!/bin/bash
# wrk (Debian) against Gatehouse's GET /healthz (fsync always) and against nginx (Debian) serving
# a static file with the same body and type, 50 connections on 2 wrk threads for 10 s, the two
# alternating, twice each, in one run; then a table of requests/s and p50/p99 latency.
# nginx runs one worker process: Gatehouse answers on one event-loop thread by default
# (--io-threads 1), so each side has one core to answer with and wrk has the other.
# Run from the repository: it builds release first, unless B points at a built binary's directory.
# Needs Debian's wrk and nginx (apt-get install wrk nginx); nginx runs from a temporary config.
# Everything listens on 127.0.0.1 and runs under `timeout`; both servers are stopped by pid.
set -u
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

NGINX_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$T/www" && chmod 0755 "$T/www"
printf '%s' '{"status":"ok"}' >"$T/www/healthz" && chmod 0644 "$T/www/healthz"
cat >"$T/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 1;
pid $T/nginx.pid;
error_log $T/nginx-error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $T/nginx-body;
    proxy_temp_path $T/nginx-proxy;
    fastcgi_temp_path $T/nginx-fastcgi;
    uwsgi_temp_path $T/nginx-uwsgi;
    scgi_temp_path $T/nginx-scgi;
    # nginx closes a keep-alive connection after 1000 requests by default; Gatehouse never does.
    keepalive_requests 100000000;
    keepalive_timeout 60s;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        root $T/www;
        location = /healthz { default_type application/json; }
    }
}
EOF
timeout 300 nginx -c "$T/nginx.conf" -p "$T" -e "$T/nginx-error.log" &
nginx=$!
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$NGINX_PORT/healthz" && break; sleep 0.1; done

echo "gatehouse http://$GATEHOUSE/healthz: $(curl -sS -D - "http://$GATEHOUSE/healthz" | tr -d '\r' | grep -i '^content-type\|^{' | tr '\n' ' ')"
echo "nginx     http://127.0.0.1:$NGINX_PORT/healthz: $(curl -sS -D - "http://127.0.0.1:$NGINX_PORT/healthz" | tr -d '\r' | grep -i '^content-type\|^{' | tr '\n' ' ')"

# One line per run: name, requests/s, p50, p99 (wrk's own units).
run() {
  wrk -t2 -c50 -d10s --latency "$2" | awk -v name="$1" '
    /Requests\/sec:/ { rate = $2 }
    $1 == "50%" { p50 = $2 }
    $1 == "99%" { p99 = $2 }
    /Non-2xx|Socket errors/ { errors = errors " " $0 }
    END { printf "%-10s %12s %10s %10s%s\n", name, rate, p50, p99, errors }'
}
RESULTS=$T/results
for round in 1 2; do
  run gatehouse "http://$GATEHOUSE/healthz" >>"$RESULTS"
  run nginx "http://127.0.0.1:$NGINX_PORT/healthz" >>"$RESULTS"
done
printf "%-10s %12s %10s %10s\n" "server" "requests/s" "p50" "p99"
cat "$RESULTS"
