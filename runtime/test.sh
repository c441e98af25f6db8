#!/usr/bin/env bash
# Runs the runtime host's xunit tests (Release) and prints a summary line "runtime: N passed, N failed, N skipped".
# Extra arguments go to `dotnet test` (e.g. --filter ApplyTests).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

log=$(mktemp)
trap 'rm -f "$log"' EXIT
dotnet test EventSourcing.Runtime.Tests/EventSourcing.Runtime.Tests.csproj -c Release -nologo -v q \
  --logger "console;verbosity=normal" "$@" >"$log" 2>&1
status=$?

# Show failures and build errors, not the list of passing tests.
grep -E '^\s+Failed |^\s+Error Message|^\s{3}\S|: error ' "$log" | grep -vE '^\s+at ' | head -200
total=$(sed -nE 's/^Total tests: *([0-9]+).*/\1/p' "$log" | tail -1)
passed=$(sed -nE 's/^ +Passed: *([0-9]+).*/\1/p' "$log" | tail -1)
failed=$(sed -nE 's/^ +Failed: *([0-9]+).*/\1/p' "$log" | tail -1)
skipped=$(sed -nE 's/^ +Skipped: *([0-9]+).*/\1/p' "$log" | tail -1)
if [ -z "$total" ]; then
  tail -40 "$log"
  echo "runtime: test run did not complete (exit $status)" >&2
  exit $(( status == 0 ? 1 : status ))
fi
echo "runtime: ${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped"
exit "$status"
