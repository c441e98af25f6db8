#!/usr/bin/env bash
# Builds the .NET runtime host (runtime/build.sh) when runtime/bin is missing or older than its
# sources, so `npm start` and `npm test` work from a fresh clone and stay fast afterwards.
# --probe (npm test) also builds the test-only sandbox probe into runtime/bin-probe the same way.
set -euo pipefail
cd "$(dirname "$0")/.."

stale() {
  local dll=runtime/$1/EventSourcing.Runtime.dll
  [ ! -f "$dll" ] || [ -n "$(find runtime/EventSourcing.Runtime sdk/dotnet sdk/analyzers runtime/Directory.Build.props -newer "$dll" \( -name '*.cs' -o -name '*.csproj' -o -name '*.props' \) -not -path '*/obj/*' -not -path '*/bin/*' -print -quit 2>/dev/null)" ]
}

need_dotnet() {
  command -v dotnet >/dev/null 2>&1 || { echo "the .NET 10 SDK (dotnet) is needed to build runtime/: install it, or set RUNTIME_DIR to a built host" >&2; exit 1; }
}

if stale bin; then
  need_dotnet
  echo "building the .NET runtime host (runtime/build.sh)…"
  bash runtime/build.sh
fi
if [ "${1:-}" = "--probe" ] && stale bin-probe; then
  need_dotnet
  echo "building the test-only sandbox probe (runtime/build.sh --probe)…"
  bash runtime/build.sh --probe
fi
