#!/usr/bin/env bash
# Builds the .NET runtime host (runtime/build.sh) when runtime/bin is missing or older than its
# sources, so `npm start` and `npm test` work from a fresh clone and stay fast afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
dll=runtime/bin/EventSourcing.Runtime.dll
if [ -f "$dll" ] && [ -z "$(find runtime/EventSourcing.Runtime sdk/dotnet runtime/Directory.Build.props -newer "$dll" \( -name '*.cs' -o -name '*.csproj' -o -name '*.props' \) -not -path '*/obj/*' -not -path '*/bin/*' -print -quit 2>/dev/null)" ]; then
  exit 0
fi
command -v dotnet >/dev/null 2>&1 || { echo "the .NET 10 SDK (dotnet) is needed to build runtime/: install it, or set RUNTIME_DIR to a built host" >&2; exit 1; }
echo "building the .NET runtime host (runtime/build.sh)…"
bash runtime/build.sh
