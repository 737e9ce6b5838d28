#!/usr/bin/env bash
# install-chromium.sh — install Debian's chromium, the browser the console's
# tests (internal/console/browsertest) drive with chromedp, and print its
# path.
#
#   scripts/install-chromium.sh   install if needed, print chromium's path
#
# Honours CHROMIUM (an existing browser is used as it is). Installs with
# apt-get, as root or through sudo; the package is Debian's `chromium`.
set -euo pipefail

if [[ -n "${CHROMIUM:-}" ]]; then
  if [[ -x "$CHROMIUM" ]]; then
    echo "$CHROMIUM"
    exit 0
  fi
  echo "install-chromium: CHROMIUM=$CHROMIUM is not an executable" >&2
  exit 1
fi

if bin=$(command -v chromium); then
  echo "$bin"
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then
  sudo="sudo"
fi
echo "install-chromium: apt-get install -y chromium" >&2
start=$(date +%s)
$sudo apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >&2
echo "install-chromium: installed in $(( $(date +%s) - start )) s" >&2
command -v chromium
