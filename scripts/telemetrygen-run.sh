#!/bin/sh
# Drive a running mcpdrift with telemetrygen, the load generator of
# opentelemetry-collector-contrib, using the command line README.md
# documents ("Send drift events"), then check that every call it sent
# arrived: the script reads the tool's call count back through
# `bin/mcpdrift report tools -format json` (or, without the binary, the API's
# /api/v1/tools) and exits non-zero unless it equals the calls sent.
#
# Usage: scripts/telemetrygen-run.sh [OTLP/gRPC endpoint, default 127.0.0.1:4317]
#
# Environment: API (mcpdrift's API, default http://127.0.0.1:8080), LOGS
# (calls to send, default 1000), BIN (where mcpdrift is, default bin), WAIT
# (seconds to wait for the calls to show, default 30).
#
# Each run sends its calls under a tool name of its own
# (telemetrygen_<time>_<pid>), so that the count it reads back is its own.
# Without telemetrygen on PATH or in ~/go/bin (or $GOPATH/bin) it prints how
# to install it and exits 0, saying "skipped".
set -eu

ENDPOINT=${1:-127.0.0.1:4317}
API=${API:-http://127.0.0.1:8080}
LOGS=${LOGS:-1000}
BIN=${BIN:-bin}
WAIT=${WAIT:-30}

tg=$(command -v telemetrygen 2>/dev/null || true)
if [ -z "$tg" ]; then
	for d in "${GOBIN:-}" "${GOPATH:-$HOME/go}/bin" "$HOME/go/bin"; do
		if [ -n "$d" ] && [ -x "$d/telemetrygen" ]; then
			tg=$d/telemetrygen
			break
		fi
	done
fi
if [ -z "$tg" ]; then
	echo "telemetrygen-run: skipped: telemetrygen is not installed (neither on PATH nor in ~/go/bin)."
	echo "install it with:"
	echo "  go install github.com/open-telemetry/opentelemetry-collector-contrib/cmd/telemetrygen@latest"
	exit 0
fi

case $LOGS in
'' | *[!0-9]*)
	echo "telemetrygen-run: LOGS must be a positive integer, got '$LOGS'" >&2
	exit 2
	;;
esac

tool=telemetrygen_$(date +%s)_$$

# calls prints the calls of $tool in the tools report, 0 when it is absent,
# and fails when the report cannot be read.
calls() {
	if [ -x "$BIN/mcpdrift" ]; then
		out=$("$BIN/mcpdrift" report tools -api "$API" -tool "$tool" -format json) || return 1
	else
		out=$(curl -fsS "$API/api/v1/tools?tool=$tool") || return 1
	fi
	# One line, then the object of $tool: its "calls" field.
	printf '%s' "$out" | tr -d '\n\r\t ' |
		sed -n "s/.*{\"tool\":\"$tool\"[^}]*\"calls\":\([0-9][0-9]*\).*/\1/p" |
		grep . || echo 0
}

log=$(mktemp "${TMPDIR:-/tmp}/telemetrygen-run.XXXXXX")
trap 'rm -f "$log"' EXIT
echo "telemetrygen-run: sending $LOGS calls of tool $tool to $ENDPOINT with $tg"
if ! "$tg" logs --otlp-insecure --otlp-endpoint "$ENDPOINT" --logs "$LOGS" --rate 0 \
	--telemetry-attributes 'event.name="dev.mcpdrift.call"' \
	--telemetry-attributes "gen_ai.tool.name=\"$tool\"" \
	--telemetry-attributes 'dev.mcpdrift.outcome="normalized"' \
	--telemetry-attributes 'dev.mcpdrift.revision.client="1"' \
	--telemetry-attributes 'dev.mcpdrift.revision.server="2"' \
	--telemetry-attributes "dev.mcpdrift.adapter.id=\"$tool-r1-r2\"" >"$log" 2>&1; then
	cat "$log" >&2
	echo "telemetrygen-run: telemetrygen failed against $ENDPOINT" >&2
	exit 1
fi

# The ingester batches for a moment before writing: poll.
got=0
i=0
while :; do
	if ! got=$(calls); then
		echo "telemetrygen-run: cannot read the tools report from $API" >&2
		exit 1
	fi
	if [ "$got" -ge "$LOGS" ] || [ "$i" -ge "$WAIT" ]; then
		break
	fi
	i=$((i + 1))
	sleep 1
done

if [ "$got" -ne "$LOGS" ]; then
	echo "telemetrygen-run: FAILED: sent $LOGS calls of $tool, mcpdrift reports $got" >&2
	exit 1
fi
echo "telemetrygen-run: ok: sent $LOGS calls of $tool, mcpdrift reports $got"
