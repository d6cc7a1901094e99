#!/bin/bash
# The outbox's cost and speed (docs/performance.md, "Outbound delivery"), on this machine, in one run:
#  1. currency.transact (fsync always, 50 connections, pipeline 16, lineload) with no webhook and
#     with three webhooks to a fast local receiver (nginx answering 200), alternating, each run
#     followed by the drain of what it left owed;
#  2. deliveries per second to one webhook: during the load, and draining what it left owed alone.
# Figures come from /metrics (gatehouse_outbox_attempts_total) and webhook.status around each step.
# Usage: Benchmarks/outbox-yardstick.sh (builds release; B=dir uses a built binary; DURATION=seconds).
set -eu
cd "$(dirname "$0")/.."
. Benchmarks/http-yardstick-lib.sh
D=${DURATION:-10}
[ -x /tmp/lineload ] || cc -O2 -o /tmp/lineload ../shared/bench/lineload.c
mkdir -p "$T/www"
start_nginx 900 'location /hook { return 200 "ok\n"; }'
start_gatehouse 900 --outbound-allow-private --metrics-public
LINE_PORT=${LINE##*:}
call() { "$B/gatehouse" call --connect "$LINE" --key "$1" "$2"; }
SECRET=$(call "$KEY" '{"op":"project.create","project":"yard"}' | python3 -c 'import sys,json; print(json.loads(sys.stdin.readline())["keys"]["secret"])')
PID=$(call "$SECRET" '{"op":"profile.create","customer_user_id":"bench"}' | python3 -c 'import sys,json; print(json.loads(sys.stdin.readline())["profile"]["profile_id"])')
hook() { echo "{\"id\":\"$1\",\"url\":\"http://127.0.0.1:$NGINX_PORT/hook\"}"; }
webhooks() {
  local list="" n
  for n in $(seq 1 "$1"); do list="$list${list:+,}$(hook "w$n")"; done
  call "$SECRET" "{\"op\":\"config.put\",\"config\":{\"currencies\":[{\"code\":\"COINS\"}],\"webhooks\":[$list]}}" >/dev/null
}
delivered() { curl -s "http://$HTTP/metrics" | awk -F' ' '/^gatehouse_outbox_attempts_total\{kind="webhook",result="delivered"\}/ { print $2 }'; }
pending() { call "$SECRET" '{"op":"webhook.status"}' | python3 -c 'import sys,json; print(sum(w["pending"] for w in json.loads(sys.stdin.readline())["webhooks"]))'; }
transact() {
  # A fresh key prefix each run (the command substitution that calls this is a subshell).
  /tmp/lineload -h 127.0.0.1 -p "$LINE_PORT" -c 50 -P 16 -d "$D" -s "{\"op\":\"hello\",\"key\":\"$SECRET\"}" \
    -r "{\"op\":\"currency.transact\",\"profile_id\":\"$PID\",\"currency\":\"COINS\",\"amount\":1,\"idempotency_key\":\"r$RANDOM$RANDOM-{n}\"}" 2>&1 | tail -1
}
rate() { python3 -c "import sys; print(f'{(float(sys.argv[2]) - float(sys.argv[1])) / float(sys.argv[3]):.0f}')" "$@"; }
echo "== currency.transact, fsync always, 50 connections, pipeline 16, ${D}s a run; each run with webhooks is"
echo "   followed by ${D}s of delivering what it left owed, alone, and then the webhooks are dropped (with what they are owed)"
for webhooks_count in 0 3 0 3; do
  webhooks "$webhooks_count"
  before=$(delivered)
  echo "-- $webhooks_count webhooks: $(transact)"
  if [ "$webhooks_count" -gt 0 ]; then
    during=$(delivered); owed=$(pending)
    sleep "$D"
    after=$(delivered)
    echo "   delivered during the load: $(rate "$before" "$during" "$D")/s; owed at its end: $owed; then alone: $(rate "$during" "$after" "$D")/s"
    webhooks 0
  fi
done
