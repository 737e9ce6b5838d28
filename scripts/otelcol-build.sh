#!/usr/bin/env bash
# otelcol-build.sh — build an OpenTelemetry Collector with the Collector
# Builder (ocb) from the Go module proxy, from a manifest, and cache it. The
# default manifest, deploy/otelcol/builder.yaml, is the Collector that the
# gateway test runs deploy/otelcol/gateway.yaml on; the bench's collector
# suite passes deploy/otelcol/bench-builder.yaml.
#
#   scripts/otelcol-build.sh [MANIFEST]         build if needed, print the
#                                               binary's path
#   scripts/otelcol-build.sh --path [MANIFEST]  print the path it is (or
#                                               would be) built at, building
#                                               nothing
#
# MANIFEST may also be given as OTELCOL_MANIFEST; a path is relative to the
# repository's root. The binary, named by the manifest's dist.name, is cached
# under ${XDG_CACHE_HOME:-~/.cache}/mcpdrift/otelcol/, keyed by the
# manifest's content: a changed manifest builds again. Honours GO, and
# OTELCOL_BIN for the default manifest only (an existing binary is used as it
# is): a binary built from one manifest cannot stand in for another's.
set -euo pipefail
cd "$(dirname "$0")/.."

go="${GO:-go}"
pathonly=
if [[ "${1:-}" == "--path" ]]; then
  pathonly=1
  shift
fi
default=deploy/otelcol/builder.yaml
manifest="${1:-${OTELCOL_MANIFEST:-$default}}"
if [[ ! -f "$manifest" ]]; then
  echo "otelcol-build: no manifest at $manifest" >&2
  exit 1
fi

if [[ "$manifest" == "$default" && -n "${OTELCOL_BIN:-}" ]]; then
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
name=$(sed -n 's/^  name: *\([A-Za-z0-9._-]*\)$/\1/p' "$manifest" | head -1)
if [[ -z "$name" ]]; then
  echo "otelcol-build: no dist.name in $manifest" >&2
  exit 1
fi
key=$(sha256sum "$manifest" | cut -c1-16)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/mcpdrift/otelcol/${version}-${key}"
bin="$cache/$name"
if [[ -n "$pathonly" ]] || [[ -x "$bin" && -f "$cache/.complete" ]]; then
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
mv "$work/$name" "$bin"
rm -rf "$work"
touch "$cache/.complete"
echo "otelcol-build: built in $(( $(date +%s) - start )) s" >&2
echo "$bin"
