#!/usr/bin/env bash
# Builds the runtime host in Release (framework-dependent, needs the .NET 10 runtime) into runtime/bin/.
# Run it from anywhere; restore is included. RUNTIME_READY_TO_RUN=1 precompiles (ReadyToRun) for this machine's
# RID: a bigger, RID-specific output whose first compile is ~40% faster. Start the host with:
#   runtime/bin/EventSourcing.Runtime --mode compile|exec     (or: dotnet runtime/bin/EventSourcing.Runtime.dll ...)
# --probe builds the TEST-ONLY sandbox probe instead (SANDBOX_PROBE defined) into runtime/bin-probe/, with its own
# intermediate and output folders so that it never mixes with runtime/bin or the xunit tests' build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

out=bin
extra=()
if [ "${1:-}" = "--probe" ]; then
  out=bin-probe
  extra=(-p:SandboxProbe=true -p:IntermediateOutputPath=obj/probe/ -p:OutputPath=bin/probe/)
elif [ "${RUNTIME_READY_TO_RUN:-0}" = "1" ]; then
  rid=$(dotnet --info | awk '/^ *RID:/ { print $2; exit }')
  extra=(-r "$rid" --self-contained false -p:PublishReadyToRun=true)
fi

rm -rf "$out"
dotnet publish EventSourcing.Runtime/EventSourcing.Runtime.csproj -c Release -o "$out" -nologo -v q -p:UseAppHost=true "${extra[@]}"
# Tenant code is compiled against these reference assemblies (ReferenceSet.FrameworkAssemblies; a test checks the
# two lists agree), shipped beside the host so that a machine or image with only the .NET runtime compiles against
# the same surface as one with the SDK (System.Private.CoreLib exposes far more than the reference pack).
pack=$(ls -d "$(dirname "$(readlink -f "$(command -v dotnet)")")"/packs/Microsoft.NETCore.App.Ref/10.*/ref/net10.0 2>/dev/null | sort -V | tail -1)
[ -n "$pack" ] || { echo "build.sh: no Microsoft.NETCore.App.Ref 10.x pack under the dotnet root (the .NET 10 SDK has it)" >&2; exit 1; }
mkdir -p "$out/ref"
for n in System.Runtime System.Collections System.Collections.Immutable System.Linq System.Memory System.Runtime.Numerics \
         System.Text.Json System.Text.RegularExpressions System.Text.Encodings.Web System.Security.Cryptography \
         System.Xml.ReaderWriter; do
  cp "$pack/$n.dll" "$out/ref/"
done
# The two source generators tenant code may use (SourceGenerators.Allowed), from the same pack: Microsoft's, run by the compile
# host over the tenant's syntax; no other generator or analyzer is shipped or run.
mkdir -p "$out/generators"
for n in System.Text.RegularExpressions.Generator System.Text.Json.SourceGeneration; do
  cp "$pack/../../analyzers/dotnet/cs/$n.dll" "$out/generators/"
done
# NodaTime (tenants' time-zone API, its tzdb embedded) is referenced from the host's own copy, published beside it.
for f in "$out"/EventSourcing.Runtime.dll "$out"/EventSourcing.Sdk.dll "$out"/NodaTime.dll "$out"/Microsoft.CodeAnalysis.CSharp.dll "$out"/ref/System.Runtime.dll "$out"/generators/System.Text.Json.SourceGeneration.dll \
         "$out"/System.IO.Hashing.dll; do
  [ -f "$f" ] || { echo "build.sh: missing $f after publish" >&2; exit 1; }
done
echo "runtime host built: $(pwd)/$out/EventSourcing.Runtime.dll"
