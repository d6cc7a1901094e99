#!/bin/bash
# wrk (Debian) against the RevenueCat-compatible GET /v1/subscribers/{id}, against nginx (Debian)
# serving a static file, 50 connections (keep-alive) on 2 wrk threads for 10 s each, alternating,
# twice each, in one run (issue 19):
#   - revalidation: Gatehouse answering 304 to a matching X-RevenueCat-ETag (decided on the event
#     loop from published cursors), nginx answering 304 to If-None-Match for the file;
#   - no ETag: Gatehouse answering 200 with the full subscriber object (the profile has an App
#     Store-shaped subscription through the test store), nginx answering 200 with a file of the
#     same bytes.
# Run from the repository: it builds release first, unless B points at a built binary's directory.
# Everything listens on 127.0.0.1 and runs under `timeout`; both servers are stopped by pid.
set -u
. "$(dirname "$0")/http-yardstick-lib.sh"
# DURATION (default 10s) sets the length of each wrk run.
start_gatehouse 400

# A project with the test store, a customer with a subscription.
KEYS=$("$B/gatehouse" project create acme --connect "${LINE:-127.0.0.1:7411}" --key "$KEY")
PUBLIC=$(printf '%s' "$KEYS" | python3 -c 'import json,sys; print(json.load(sys.stdin)["keys"]["apple"])')
SECRET=$(printf '%s' "$KEYS" | python3 -c 'import json,sys; print(json.load(sys.stdin)["keys"]["secret"])')
op() { curl -sf "http://$HTTP/v1/op" -H "Authorization: Bearer $SECRET" -d "$1" || { echo "op failed: $1" >&2; exit 1; }; }
op >/dev/null '{"op":"config.put","config":{"entitlements":[{"id":"pro"}],"products":[{"id":"pro_monthly","type":"subscription","entitlements":["pro"]}],"currencies":[{"code":"COINS","name":"Coins"}],"stores":{"test":true}}}'
PROFILE=$(op '{"op":"profile.create","customer_user_id":"customer-1"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["profile"]["profile_id"])')
NOW=$(date +%s%3N)
op >/dev/null '{"op":"purchase.report","profile_id":"'"$PROFILE"'","store":"test","transaction":{"transaction_id":"t1","original_transaction_id":"t1","product_id":"pro_monthly","purchased_ms":'"$NOW"',"expires_ms":'"$((NOW + 2592000000))"',"price":9.99,"currency":"USD"}}'
URL="http://$HTTP/v1/subscribers/customer-1"
curl -sS -D "$T/head" -o "$T/www-body" "$URL" -H "Authorization: Bearer $PUBLIC" -H "X-Platform: iOS"
ETAG=$(tr -d '\r' <"$T/head" | sed -n 's/^[Xx]-[Rr]evenue[Cc]at-[Ee][Tt]ag: //p')
[ -n "$ETAG" ] || { echo "no ETag:"; cat "$T/head"; exit 1; }
STATUS=$(curl -s -o /dev/null -w '%{http_code}' "$URL" -H "Authorization: Bearer $PUBLIC" -H "X-RevenueCat-ETag: $ETAG")
[ "$STATUS" = 304 ] || { echo "revalidation answered $STATUS, not 304"; exit 1; }

mkdir -p "$T/www" && chmod 0755 "$T/www"
cp "$T/www-body" "$T/www/subscriber" && chmod 0644 "$T/www/subscriber"
start_nginx 400 'location = /subscriber { default_type application/json; etag on; }'
NGINX_URL="http://127.0.0.1:$NGINX_PORT/subscriber"
for _ in $(seq 100); do curl -sf -o /dev/null "$NGINX_URL" && break; sleep 0.1; done
NGINX_ETAG=$(curl -sS -D - -o /dev/null "$NGINX_URL" | tr -d '\r' | sed -n 's/^[Ee][Tt]ag: //p')
STATUS=$(curl -s -o /dev/null -w '%{http_code}' "$NGINX_URL" -H "If-None-Match: $NGINX_ETAG")
[ "$STATUS" = 304 ] || { echo "nginx answered $STATUS, not 304"; exit 1; }
echo "subscriber object: $(wc -c <"$T/www-body") bytes; ETag $ETAG"

RESULTS=$T/results
for round in 1 2; do
  run_wrk "gatehouse 304" "$URL" -H "Authorization: Bearer $PUBLIC" -H "X-RevenueCat-ETag: $ETAG" -H "X-Platform: iOS" >>"$RESULTS"
  run_wrk "nginx 304" "$NGINX_URL" -H "If-None-Match: $NGINX_ETAG" >>"$RESULTS"
done
for round in 1 2; do
  run_wrk "gatehouse 200 (no ETag)" "$URL" -H "Authorization: Bearer $PUBLIC" -H "X-Platform: iOS" >>"$RESULTS"
  run_wrk "nginx 200 (same body)" "$NGINX_URL" >>"$RESULTS"
done
printf "%-24s %12s %10s %10s\n" "server" "requests/s" "p50" "p99"
cat "$RESULTS"
