#!/usr/bin/env bash
# fuzz.sh — run every fuzz target in the module, one after another.
#
#   scripts/fuzz.sh [FUZZTIME]      default 20000x; FUZZMINIMIZETIME default 500x
#
# The targets are found with `go test -list`, so a new Fuzz function is
# fuzzed without anyone editing a list. FUZZTIME takes what -fuzztime takes.
# The default is a count of inputs, not a duration: with a duration, Go's
# fuzzing coordinator (up to Go 1.26) can report its own stop deadline as a
# failure, "context deadline exceeded" with no failing input written
# (go.dev/issue/75804). A count never arms that deadline.
#
# Each new interesting input is minimised for at most FUZZMINIMIZETIME
# (Go's default is 60 s per input, which once took FuzzRedact from 3 to 80 s).
#
# A finding leaves its input under the package's testdata/fuzz/<Target>/;
# the script stops at the first failing target and names it.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime="${1:-${FUZZTIME:-20000x}}"
minimize="${FUZZMINIMIZETIME:-500x}"
go="${GO:-go}"

# `go test -list` prints a package's matching names, then its "ok" line.
targets=()
names=()
while read -r first second _; do
  case "$first" in
    Fuzz*) names+=("$first") ;;
    ok)
      for n in "${names[@]}"; do targets+=("$second $n"); done
      names=()
      ;;
  esac
done < <("$go" test -list '^Fuzz' ./... 2>&1)

if [[ ${#targets[@]} -eq 0 ]]; then
  echo "fuzz.sh: no fuzz targets found" >&2
  exit 1
fi

echo "fuzz.sh: ${#targets[@]} targets, -fuzztime ${fuzztime} -fuzzminimizetime ${minimize} each"
for t in "${targets[@]}"; do
  pkg="${t% *}"
  name="${t#* }"
  start=$SECONDS
  echo "== ${name} (${pkg})"
  if ! "$go" test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "$pkg"; then
    echo "fuzz.sh: ${name} in ${pkg} failed; a failing input, if any, is under its testdata/fuzz/${name}/" >&2
    exit 1
  fi
  echo "== ${name}: $((SECONDS - start)) s"
done
