#!/usr/bin/env bash
# The GitHub Action's steps (action.yml), kept here so that they can be run and tested outside
# GitHub: `action.sh install` builds or installs capguard and puts it on GITHUB_PATH; `action.sh run`
# writes the SARIF report, prints workflow annotations and sets the step's outputs.
#
# Environment: CAPGUARD_ACTION_PATH (the action's checkout), CAPGUARD_VERSION ("action" or a
# version for go install), CAPGUARD_ARGS, CAPGUARD_SARIF_FILE, CAPGUARD_ANNOTATIONS, and the
# runner's RUNNER_TEMP, GITHUB_PATH, GITHUB_OUTPUT.
set -euo pipefail

bin="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/capguard-bin"

case "${1:-}" in
install)
  mkdir -p "$bin"
  if [ "${CAPGUARD_VERSION:-action}" = action ]; then
    echo "capguard: building the action's checkout ($CAPGUARD_ACTION_PATH)"
    (cd "$CAPGUARD_ACTION_PATH" && CGO_ENABLED=1 go build -o "$bin/capguard" ./cli/capguard)
  else
    echo "capguard: go install github.com/cudagraph-capguard/capguard/cli/capguard@$CAPGUARD_VERSION"
    CGO_ENABLED=1 GOBIN="$bin" go install "github.com/cudagraph-capguard/capguard/cli/capguard@$CAPGUARD_VERSION"
  fi
  "$bin/capguard" --version
  if [ -n "${GITHUB_PATH:-}" ]; then echo "$bin" >>"$GITHUB_PATH"; fi
  ;;
run)
  cg="$bin/capguard"
  [ -x "$cg" ] || cg=capguard
  sarif="${CAPGUARD_SARIF_FILE:-capguard.sarif}"
  # The arguments are split at spaces and tabs (no quoting, nothing in them is run).
  read -r -a args <<<"${CAPGUARD_ARGS:-.}"
  code=0
  "$cg" check --no-progress --output-format sarif "${args[@]}" >"$sarif" || code=$?
  if [ "${CAPGUARD_ANNOTATIONS:-true}" = true ] && [ "$code" != 2 ]; then
    # The same run again from the results cache: annotations for the pull request.
    "$cg" check --no-progress --output-format github "${args[@]}" || true
  fi
  if [ "$code" = 2 ]; then
    # Say why on the log: the full output names the problem.
    "$cg" check --no-progress --output-format concise "${args[@]}" || true
  fi
  echo "capguard check exited $code; SARIF report in $sarif"
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    { echo "exit-code=$code"; echo "sarif-file=$sarif"; } >>"$GITHUB_OUTPUT"
  fi
  ;;
*)
  echo "usage: action.sh install|run" >&2
  exit 2
  ;;
esac
