#!/bin/bash
# Redis INCR (appendfsync always) against Gatehouse currency.transact (fsync always), with
# lineload (cc -O2 -o /tmp/lineload ../shared/bench/lineload.c), 50 connections, pipeline 1 and 16.
set -u
# Run from the repository after `swift build -c release`; B may point elsewhere.
B=${B:-.build/release}
KEY=ak_yardstick_$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
rm -rf /tmp/redis-yard /tmp/gh-yard; mkdir -p /tmp/redis-yard
timeout 120 redis-server --port 6399 --bind 127.0.0.1 --appendonly yes --appendfsync always --save '' --dir /tmp/redis-yard >/dev/null 2>&1 &
pid=$!; sleep 1
for P in 1 16; do echo "redis INCR always P=$P"; /tmp/lineload -h 127.0.0.1 -p 6399 -c 50 -P $P -d 5 -r 'INCR k' 2>&1 | tail -2; done
kill $pid; wait $pid 2>/dev/null; rm -rf /tmp/redis-yard
timeout 120 $B/gatehouse serve --data-dir /tmp/gh-yard --listen 127.0.0.1:7431 --http off --admin-key $KEY --fsync always --log-level warning >/dev/null 2>&1 &
pid=$!; sleep 1
OUT=$($B/gatehouse call --connect 127.0.0.1:7431 --key $KEY '{"op":"project.create","project":"yard"}')
SECRET=$(echo "$OUT" | python3 -c 'import sys,json; print(json.loads(sys.stdin.readline())["keys"]["secret"])')
$B/gatehouse call --connect 127.0.0.1:7431 --key $SECRET '{"op":"config.put","config":{"currencies":[{"code":"COINS"}]}}' >/dev/null
PID=$($B/gatehouse call --connect 127.0.0.1:7431 --key $SECRET '{"op":"profile.create"}' | python3 -c 'import sys,json; print(json.loads(sys.stdin.readline())["profile"]["profile_id"])')
# Requests per sync and per visit of the project's actor, from server.stats around each run.
stats() { $B/gatehouse call --connect 127.0.0.1:7431 --key $KEY '{"op":"server.stats"}'; }
# CPU time of each server thread (name, user+system clock ticks), from /proc, around each run:
# a cost per request that holds up better than the rate when the machine is not quiet.
server=$(pgrep -P $pid -f "gatehouse serve" || echo $pid)  # $pid is timeout's
threads() { for t in /proc/$server/task/*; do echo "$(tr ' ' _ < $t/comm) $(awk '{print $14+$15}' $t/stat)"; done; }
for P in 1 16; do
  echo "gatehouse currency.transact always P=$P"
  BEFORE=$(stats)
  THREADS_BEFORE=$(threads)
  /tmp/lineload -h 127.0.0.1 -p 7431 -c 50 -P $P -d 5 -s "{\"op\":\"hello\",\"key\":\"$SECRET\"}" -r "{\"op\":\"currency.transact\",\"profile_id\":\"$PID\",\"currency\":\"COINS\",\"amount\":1,\"idempotency_key\":\"p$P-{n}\"}" 2>&1 | tail -2
  python3 -c 'import sys,json; a,b=(json.loads(x) for x in sys.argv[1:3]); s=b["wal"]["syncs"]-a["wal"]["syncs"]; r=b["lanes"]["rounds"]-a["lanes"]["rounds"]; n=b["lanes"]["steps"]-a["lanes"]["steps"]; print(f"  syncs={s} lane rounds={r} steps={n}: {n/max(s,1):.1f} requests a sync, {n/max(r,1):.1f} a visit of the actor")' "$BEFORE" "$(stats)"
  THREADS_AFTER=$(threads)
  python3 - "$THREADS_BEFORE" "$THREADS_AFTER" "$(stats)" "$BEFORE" "$(getconf CLK_TCK)" <<'PY'
import sys, json, collections
before, after, stats_after, stats_before, ticks = sys.argv[1:6]
requests = json.loads(stats_after)["lanes"]["steps"] - json.loads(stats_before)["lanes"]["steps"]
def by_name(text):
    totals = collections.Counter()
    for line in text.splitlines():
        name, value = line.rsplit(" ", 1)
        totals[name] += int(value)
    return totals
spent = by_name(after)
spent.subtract(by_name(before))
per_request = {name: value / int(ticks) * 1e6 / max(requests, 1) for name, value in spent.items() if value > 0}
print("  CPU µs a request: " + ", ".join(f"{name} {value:.2f}" for name, value in sorted(per_request.items(), key=lambda kv: -kv[1])) + f" (total {sum(per_request.values()):.2f})")
PY
done
$B/gatehouse call --connect 127.0.0.1:7431 --key $SECRET "{\"op\":\"profile.get\",\"profile_id\":\"$PID\"}" | cut -c1-80
$B/gatehouse call --connect 127.0.0.1:7431 --key $SECRET "{\"op\":\"currency.history\",\"profile_id\":\"$PID\",\"currency\":\"COINS\",\"limit\":1}" | cut -c1-200
kill $pid; wait $pid 2>/dev/null; rm -rf /tmp/gh-yard
