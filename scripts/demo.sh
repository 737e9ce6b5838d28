#!/bin/sh
# The mcpdrift demo (make demo): start `mcpdrift serve` on a temporary data
# directory, drive it with the drift simulator, print the adapter retirement
# report, and stop the server, whatever happens.
#
# Environment: BIN (where the binary is, default bin), DEMO_EVENTS (default
# 50000), DEMO_API, DEMO_GRPC, DEMO_HTTP (listen addresses, on ports apart
# from the defaults so that a `make run` in another terminal does not clash).
set -eu

BIN=${BIN:-bin}
EVENTS=${DEMO_EVENTS:-50000}
API=${DEMO_API:-127.0.0.1:18080}
GRPC=${DEMO_GRPC:-127.0.0.1:14317}
HTTP=${DEMO_HTTP:-127.0.0.1:14318}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcpdrift-demo.XXXXXX")
pid=
stop() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap stop EXIT
trap 'exit 130' INT TERM

"$BIN/mcpdrift" serve -data.dir "$tmp/data" -api.listen "$API" \
	-otlp.grpc.listen "$GRPC" -otlp.http.listen "$HTTP" -log.level warn \
	>"$tmp/serve.out" 2>"$tmp/serve.log" &
pid=$!

# serve prints "is running" once its listeners are up.
tries=0
until grep -q "is running" "$tmp/serve.out" 2>/dev/null; do
	if ! kill -0 "$pid" 2>/dev/null; then
		cat "$tmp/serve.log" >&2
		echo "demo: mcpdrift serve exited before it was ready" >&2
		exit 1
	fi
	tries=$((tries + 1))
	if [ "$tries" -gt 300 ]; then
		echo "demo: mcpdrift serve was not ready within 60s" >&2
		exit 1
	fi
	sleep 0.2
done
echo "demo: mcpdrift serve is running on $tmp/data (API http://$API)"

echo "demo: simulating $EVENTS drift events over OTLP/gRPC to $GRPC"
"$BIN/mcpdrift" simulate -otlp.endpoint "$GRPC" -sim.events "$EVENTS" -ledger.out "$tmp/ledger.json" -log.level warn
echo

# Exports are acknowledged once spooled; the store is written in grouped
# inserts up to -ingest.insert.max-delay (1 s) later. Wait until the
# ingester's own metrics say every accepted event is stored.
metric() {
	curl -sf "http://$API/metrics" | awk -v m="$1" '$1 == m { print $2 }'
}
if command -v curl >/dev/null 2>&1; then
	tries=0
	while :; do
		accepted=$(metric 'mcpdrift_ingest_records_total{result="accepted",signal="logs"}')
		stored=$(metric mcpdrift_ingest_events_stored_total)
		if [ -n "$accepted" ] && [ -n "$stored" ] && [ "$stored" = "$accepted" ]; then
			break
		fi
		tries=$((tries + 1))
		if [ "$tries" -gt 150 ]; then
			echo "demo: $stored of $accepted accepted events stored after 30s" >&2
			exit 1
		fi
		sleep 0.2
	done
else
	sleep 2
fi

"$BIN/mcpdrift" report adapter-retirement -api "http://$API" -format table
echo
echo "demo: stopping the server and removing its data"
