#!/usr/bin/env bash
# Installs what building and testing vinci needs (Debian packages), if missing.
# Idempotent; used by run.sh and test.sh so a fresh machine needs nothing else.
set -euo pipefail
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v cc >/dev/null || need+=(gcc)
command -v make >/dev/null || need+=(make)
if ((${#need[@]})); then
    echo "setup: installing ${need[*]}"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi
