#!/usr/bin/env bash
# The project's test command (the README's second set-up command).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v python3 >/dev/null || { echo "python3 is needed (fixtures are py_compiled)"; exit 2; }
go test -count=1 ./...
