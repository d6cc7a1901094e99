# Sourced by the HTTP yardstick scripts. Sourcing it builds release unless B points at a built
# binary's directory, makes $T (a temporary directory, removed on exit with both servers, which
# are stopped by pid) and an admin key $KEY.
if [ -z "${B:-}" ]; then swift build -c release >/dev/null || exit 1; B=.build/release; fi
KEY=ak_yardstick_$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
T=$(mktemp -d /tmp/gh-http-yard.XXXXXX)
# nginx's worker runs as nobody when started as root: it must be able to read the files.
chmod 0755 "$T"
gatehouse=; nginx=
stop() {
  for pid in $gatehouse $nginx; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
  rm -rf "$T"
}
trap stop EXIT

# start_gatehouse SECONDS [FLAGS…]: `gatehouse serve` (fsync always, and any further flags) on free
# ports, under `timeout`; sets gatehouse (its pid), HTTP and LINE (where it serves each).
start_gatehouse() {
  local seconds=$1; shift
  timeout "$seconds" "$B/gatehouse" serve --data-dir "$T/data" --listen 127.0.0.1:0 --http=127.0.0.1:0 --admin-key "$KEY" \
    --fsync always --log-level warning "$@" >"$T/serve.out" 2>"$T/serve.err" &
  gatehouse=$!
  for _ in $(seq 100); do grep -q '^http on ' "$T/serve.out" 2>/dev/null && break; sleep 0.1; done
  HTTP=$(sed -n 's/^http on \([^ ]*\).*/\1/p' "$T/serve.out")
  LINE=$(sed -n 's/.* listening on \([^ ]*\).*/\1/p' "$T/serve.out")
  [ -n "$HTTP" ] || { echo "gatehouse did not say where it serves HTTP:"; cat "$T/serve.out" "$T/serve.err"; exit 1; }
}

# start_nginx SECONDS 'LOCATION BLOCKS': nginx (Debian) with one worker serving the files of
# $T/www at 127.0.0.1:$NGINX_PORT, from a temporary config under $T, under `timeout`; sets
# NGINX_PORT and nginx (its pid).
# nginx runs one worker process: Gatehouse answers on one event-loop thread by default
# (--io-threads 1), so each side has one core to answer with and wrk has the other.
start_nginx() {
  local seconds=$1 locations=$2
  NGINX_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
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
        $locations
    }
}
EOF
  timeout "$seconds" nginx -c "$T/nginx.conf" -p "$T" -e "$T/nginx-error.log" &
  nginx=$!
}

# One line per wrk run: name, requests/s, p50, p99 (wrk's own units), and any errors it counted.
# run_wrk NAME URL [wrk options…]; DURATION (default 10s) is each run's length.
run_wrk() {
  local name=$1 url=$2; shift 2
  wrk -t2 -c50 -d"${DURATION:-10s}" --latency "$@" "$url" | awk -v name="$name" '
    /Requests\/sec:/ { rate = $2 }
    $1 == "50%" { p50 = $2 }
    $1 == "99%" { p99 = $2 }
    /Non-2xx|Socket errors/ { errors = errors " " $0 }
    END { printf "%-24s %12s %10s %10s%s\n", name, rate, p50, p99, errors }'
}
