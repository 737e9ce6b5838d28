#!/usr/bin/env bash
# install-promtool.sh — install promtool, Prometheus's rule and metrics
# checker, which the tests of deploy/prometheus run, from the Go module
# proxy, and cache it.
#
#   scripts/install-promtool.sh        install if needed, print promtool's path
#   scripts/install-promtool.sh --path print the path it is (or would be)
#                                      installed at, installing nothing
#
# Honours PROMTOOL (an existing promtool is used as it is), XDG_CACHE_HOME
# and GO. The version is the Go module version of Prometheus (v0.316.0 is
# Prometheus 3.16.0), the one deploy/compose's prom/prometheus image pins.
set -euo pipefail

version="v0.316.0"
go="${GO:-go}"

if [[ -n "${PROMTOOL:-}" ]]; then
  if [[ -x "$PROMTOOL" ]]; then
    echo "$PROMTOOL"
    exit 0
  fi
  echo "install-promtool: PROMTOOL=$PROMTOOL is not an executable" >&2
  exit 1
fi

gobin="${XDG_CACHE_HOME:-$HOME/.cache}/mcpdrift/promtool/${version}"
bin="$gobin/promtool"
if [[ "${1:-}" == "--path" || -x "$bin" ]]; then
  echo "$bin"
  exit 0
fi
echo "install-promtool: go install github.com/prometheus/prometheus/cmd/promtool@${version}" >&2
start=$(date +%s)
GOBIN="$gobin" CGO_ENABLED=0 "$go" install "github.com/prometheus/prometheus/cmd/promtool@${version}" >&2
echo "install-promtool: installed in $(( $(date +%s) - start )) s" >&2
echo "$bin"
