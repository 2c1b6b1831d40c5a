#!/usr/bin/env bash
# What CI needs beyond Go and a C compiler, from Debian: pre-commit (a real pre-commit run of the
# hooks in .pre-commit-hooks.yaml) and a CPU build of torch (capguard verify --dry-run on the
# shipped cases). Installs only what is missing; as root (CI) only.
set -euo pipefail
need=()
command -v pre-commit >/dev/null || need+=(pre-commit)
/usr/bin/python3 -c 'import torch' 2>/dev/null || need+=(python3-torch)
# python3 -m venv (the wheel's install test): Debian splits ensurepip into python3-venv.
/usr/bin/python3 -m venv --without-pip "$(mktemp -d)/v" >/dev/null 2>&1 && /usr/bin/python3 -c 'import ensurepip' 2>/dev/null || need+=(python3-venv)
if [ ${#need[@]} -eq 0 ]; then
  echo "ci-deps: pre-commit and python3-torch already installed"
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "ci-deps: missing ${need[*]}; install them (apt-get install ${need[*]}) or the tests that need them skip" >&2
  exit 0
fi
echo "ci-deps: apt-get install ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get -qq update
apt-get -qq install -y --no-install-recommends "${need[@]}" >/dev/null
