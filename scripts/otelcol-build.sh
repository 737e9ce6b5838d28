#!/usr/bin/env bash
# otelcol-build.sh — build the OpenTelemetry Collector that the gateway test
# runs deploy/otelcol/gateway.yaml on, with the Collector Builder (ocb) from
# the Go module proxy, from the manifest deploy/otelcol/builder.yaml, and
# cache it.
#
#   scripts/otelcol-build.sh          build if needed, print the binary's path
#   scripts/otelcol-build.sh --path   print the path it is (or would be) built
#                                     at, building nothing
#
# The binary is cached under ${XDG_CACHE_HOME:-~/.cache}/mcpdrift/otelcol/,
# keyed by the manifest's content: a changed manifest builds again.
# Honours OTELCOL_BIN (an existing binary is used as it is) and GO.
set -euo pipefail
cd "$(dirname "$0")/.."

go="${GO:-go}"
manifest=deploy/otelcol/builder.yaml

if [[ -n "${OTELCOL_BIN:-}" ]]; then
  if [[ -x "$OTELCOL_BIN" ]]; then
    echo "$OTELCOL_BIN"
    exit 0
  fi
  echo "otelcol-build: OTELCOL_BIN=$OTELCOL_BIN is not an executable" >&2
  exit 1
fi

# The builder's version is the manifest's dist.version.
version=$(sed -n 's/^  version: *\([0-9.]*\)$/\1/p' "$manifest" | head -1)
if [[ -z "$version" ]]; then
  echo "otelcol-build: no dist.version in $manifest" >&2
  exit 1
fi
key=$(sha256sum "$manifest" | cut -c1-16)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/mcpdrift/otelcol/${version}-${key}"
bin="$cache/otelcol-mcpdrift"
if [[ "${1:-}" == "--path" ]] || [[ -x "$bin" && -f "$cache/.complete" ]]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$cache"
gobin="$cache/gobin"
echo "otelcol-build: installing the Collector Builder v${version} (go install)" >&2
GOBIN="$gobin" CGO_ENABLED=0 "$go" install "go.opentelemetry.io/collector/cmd/builder@v${version}" >&2
work="$cache/src"
rm -rf "$work"
echo "otelcol-build: building the Collector from $manifest into $cache" >&2
start=$(date +%s)
# ocb generates the sources, then runs go mod tidy and go build in $work.
CGO_ENABLED=0 GOFLAGS= "$gobin/builder" --config="$manifest" --output-path="$work" >&2
mv "$work/otelcol-mcpdrift" "$bin"
rm -rf "$work"
touch "$cache/.complete"
echo "otelcol-build: built in $(( $(date +%s) - start )) s" >&2
echo "$bin"
