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

"$BIN/mcpdrift" report adapter-retirement -api "http://$API" -format table
echo
echo "demo: stopping the server and removing its data"
