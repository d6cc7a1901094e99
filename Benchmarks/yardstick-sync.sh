#!/bin/bash
# Redis EXISTS (no persistence) against Gatehouse sync that finds nothing changed, with lineload
# (cc -O2 -o /tmp/lineload ../shared/bench/lineload.c), 50 connections, pipeline 1 and 16.
# Run from the repository after `swift build -c release`; B may point elsewhere.
set -u
B=${B:-.build/release}
KEY=ak_yardstick_$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
rm -rf /tmp/gh-yard
timeout 120 redis-server --port 6399 --bind 127.0.0.1 --appendonly no --save '' >/dev/null 2>&1 &
pid=$!; sleep 1
for P in 1 16; do echo "redis EXISTS P=$P"; /tmp/lineload -h 127.0.0.1 -p 6399 -c 50 -P $P -d 5 -r 'EXISTS k' 2>&1 | tail -1; done
kill $pid; wait $pid 2>/dev/null
timeout 120 $B/gatehouse serve --data-dir /tmp/gh-yard --listen 127.0.0.1:7431 --http off --admin-key $KEY --fsync always --log-level warning >/dev/null 2>&1 &
pid=$!; sleep 1
OUT=$($B/gatehouse call --connect 127.0.0.1:7431 --key $KEY '{"op":"project.create","project":"yard"}')
PUBLIC=$(echo "$OUT" | python3 -c 'import sys,json; print(json.loads(sys.stdin.readline())["keys"]["public"])')
PID=$($B/gatehouse call --connect 127.0.0.1:7431 --key $PUBLIC '{"op":"profile.create"}' | python3 -c 'import sys,json; print(json.loads(sys.stdin.readline())["profile"]["profile_id"])')
CURSOR=$($B/gatehouse call --connect 127.0.0.1:7431 --key $PUBLIC "{\"op\":\"sync\",\"profile_id\":\"$PID\"}" | python3 -c 'import sys,json; print(json.loads(sys.stdin.readline())["cursor"])')
for P in 1 16; do echo "gatehouse sync (nothing changed) P=$P"; /tmp/lineload -h 127.0.0.1 -p 7431 -c 50 -P $P -d 5 -s "{\"op\":\"hello\",\"key\":\"$PUBLIC\"}" -r "{\"id\":{n},\"op\":\"sync\",\"profile_id\":\"$PID\",\"cursor\":$CURSOR}" 2>&1 | tail -1; done
$B/gatehouse call --connect 127.0.0.1:7431 --key $PUBLIC "{\"op\":\"sync\",\"profile_id\":\"$PID\",\"cursor\":$CURSOR}"
kill $pid; wait $pid 2>/dev/null; rm -rf /tmp/gh-yard
