#!/usr/bin/env bash
# Builds the runtime host in Release (framework-dependent, needs the .NET 10 runtime) into runtime/bin/.
# Run it from anywhere; restore is included. RUNTIME_READY_TO_RUN=1 precompiles (ReadyToRun) for this machine's
# RID: a bigger, RID-specific output whose first compile is ~40% faster. Start the host with:
#   runtime/bin/EventSourcing.Runtime --mode compile|exec     (or: dotnet runtime/bin/EventSourcing.Runtime.dll ...)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

extra=()
if [ "${RUNTIME_READY_TO_RUN:-0}" = "1" ]; then
  rid=$(dotnet --info | awk '/^ *RID:/ { print $2; exit }')
  extra=(-r "$rid" --self-contained false -p:PublishReadyToRun=true)
fi

rm -rf bin
dotnet publish EventSourcing.Runtime/EventSourcing.Runtime.csproj -c Release -o bin -nologo -v q -p:UseAppHost=true "${extra[@]}"
for f in bin/EventSourcing.Runtime.dll bin/EventSourcing.Sdk.dll bin/Microsoft.CodeAnalysis.CSharp.dll; do
  [ -f "$f" ] || { echo "build.sh: missing $f after publish" >&2; exit 1; }
done
echo "runtime host built: $(pwd)/bin/EventSourcing.Runtime.dll"
