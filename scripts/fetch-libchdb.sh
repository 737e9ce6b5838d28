#!/usr/bin/env bash
# fetch-libchdb.sh — obtain libchdb.so (ClickHouse as a library) for the
# embedded store, from the npm package that chDB publishes, and cache it.
#
#   scripts/fetch-libchdb.sh          fetch if needed, print the library path
#
# Honours CHDB_LIB_PATH (an existing libchdb.so is used as it is) and
# XDG_CACHE_HOME. The package's integrity (sha512, from the registry) is
# checked before anything is unpacked.
set -euo pipefail

pkg="@chdb/lib-linux-x64-gnu"
pkg_version="26.7.3-stable.1"
lib_version="26.7.3"
# Integrity of ${pkg}@${pkg_version} as published in the npm registry.
integrity="sha512-XP97mMqnc5tZpKQywR8N7cLTsHNiTmHr30pC5mzo3jWmukjKn2IBa60c2B/gWUNcuFjOMjWoorQICCqBVj5wpw=="

if [[ -n "${CHDB_LIB_PATH:-}" ]]; then
  if [[ -f "$CHDB_LIB_PATH" ]]; then
    echo "$CHDB_LIB_PATH"
    exit 0
  fi
  echo "fetch-libchdb: CHDB_LIB_PATH=$CHDB_LIB_PATH does not exist" >&2
  exit 1
fi

if [[ "$(uname -s)/$(uname -m)" != "Linux/x86_64" ]]; then
  echo "fetch-libchdb: the embedded store is packaged for Linux x86_64 only, not $(uname -s)/$(uname -m);" >&2
  echo "  run mcpdrift against a ClickHouse server instead (-store.dsn)." >&2
  exit 1
fi

cache="${XDG_CACHE_HOME:-$HOME/.cache}/mcpdrift/libchdb/${lib_version}"
lib="$cache/libchdb.so"
if [[ -f "$lib" && -f "$cache/.complete" ]]; then
  echo "$lib"
  exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
  cat >&2 <<MSG
fetch-libchdb: npm is not installed. Either install Node.js and npm, or fetch
the chDB ${lib_version} release archive (linux-x86_64-libchdb.tar.gz) from
the chDB project's releases, unpack it, and set CHDB_LIB_PATH to its
libchdb.so.
MSG
  exit 1
fi

mkdir -p "$cache"
tmp="$(mktemp -d "$cache/.fetch.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

echo "fetch-libchdb: downloading ${pkg}@${pkg_version} (about 180 MB)..." >&2
(cd "$tmp" && npm pack --silent "${pkg}@${pkg_version}" >/dev/null)
tgz="$(ls "$tmp"/*.tgz)"

want="${integrity#sha512-}"
got="$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
if [[ "$got" != "$want" ]]; then
  echo "fetch-libchdb: integrity mismatch for ${pkg}@${pkg_version}: got sha512-$got, want $integrity" >&2
  exit 1
fi

tar -xzf "$tgz" -C "$tmp" package/libchdb.so
mv "$tmp/package/libchdb.so" "$lib.partial"
mv "$lib.partial" "$lib"
touch "$cache/.complete"
echo "fetch-libchdb: cached $lib" >&2
echo "$lib"
