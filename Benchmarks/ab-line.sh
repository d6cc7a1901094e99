#!/bin/bash
# Two builds side by side on the line's quick `sync` (nothing changed), alternating, with
# lineload (cc -O2 -o /tmp/lineload ../shared/bench/lineload.c): 50 connections, pipeline 16,
# ROUNDS rounds of SECONDS each; prints each build's rates sorted, so their medians compare.
# TRANSACT=1 adds currency.transact (fsync always) to each round.
#   A=/path/to/old/.build/release B=.build/release Benchmarks/ab-line.sh
# A build without the HTTP listener (before issue 18) is started without --http; 127.0.0.1
# only, each server under `timeout` and stopped by its pid.
set -u
A=${A:?the first build directory}; B=${B:?the second build directory}
ROUNDS=${ROUNDS:-7}; SECONDS_EACH=${SECONDS_EACH:-3}; PORT=${PORT:-7441}
run() { # $1 build directory, $2 label
  local dir=$1 data key http="" pid out public secret profile cursor
  data=$(mktemp -d /tmp/gh-ab.XXXXXX)
  key=ak_ab_$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
  "$dir/gatehouse" serve --help 2>&1 | grep -q -- '--http=' && http="--http=off"
  timeout 120 "$dir/gatehouse" serve --data-dir "$data/data" --listen 127.0.0.1:$PORT $http --admin-key "$key" \
    --fsync always --log-level warning >/dev/null 2>&1 &
  pid=$!; sleep 1
  call() { "$dir/gatehouse" call --connect 127.0.0.1:$PORT --key "$1" "$2"; }
  field() { python3 -c "import sys,json; print(json.loads(sys.stdin.readline())$1)"; }
  out=$(call "$key" '{"op":"project.create","project":"ab"}')
  public=$(echo "$out" | field '["keys"]["public"]'); secret=$(echo "$out" | field '["keys"]["secret"]')
  call "$secret" '{"op":"config.put","config":{"currencies":[{"code":"COINS","name":"Coins"}]}}' >/dev/null
  profile=$(call "$public" '{"op":"profile.create"}' | field '["profile"]["profile_id"]')
  cursor=$(call "$public" "{\"op\":\"sync\",\"profile_id\":\"$profile\"}" | field '["cursor"]')
  echo "$2 sync $(/tmp/lineload -h 127.0.0.1 -p $PORT -c 50 -P 16 -d "$SECONDS_EACH" -s "{\"op\":\"hello\",\"key\":\"$public\"}" \
    -r "{\"id\":{n},\"op\":\"sync\",\"profile_id\":\"$profile\",\"cursor\":$cursor}" 2>&1 | tail -1)"
  [ -n "${TRANSACT:-}" ] && echo "$2 transact $(/tmp/lineload -h 127.0.0.1 -p $PORT -c 50 -P 16 -d "$SECONDS_EACH" \
    -s "{\"op\":\"hello\",\"key\":\"$secret\"}" \
    -r "{\"op\":\"currency.transact\",\"profile_id\":\"$profile\",\"currency\":\"COINS\",\"amount\":1,\"idempotency_key\":\"k{n}\"}" 2>&1 | tail -1)"
  kill $pid; wait $pid 2>/dev/null; rm -rf "$data"
}
for _ in $(seq "$ROUNDS"); do run "$A" A; run "$B" B; done | sed 's/ rps=\([0-9]*\).*/ \1/' | sort -k1,2 -k3n \
  | awk '{k=$1" "$2; a[k]=a[k]" "$3} END {for (k in a) print k":" a[k]}'
