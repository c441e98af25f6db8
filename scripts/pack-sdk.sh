#!/usr/bin/env bash
# Packs EventSourcing.Sdk (with the allowlist analyzer of sdk/analyzers inside) and EventSourcing.Sdk.Testing into a local NuGet feed folder (docs/csharp.md, "Local development").
#   scripts/pack-sdk.sh [feed-dir]     default feed: .tmp/nuget-feed; SDK_VERSION overrides the version (default: the
#                                      <Version> in sdk/dotnet/EventSourcing.Sdk.csproj). Prints the feed path and version.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
feed="${1:-$root/.tmp/nuget-feed}"
mkdir -p "$feed"
feed="$(cd "$feed" && pwd)"
version="${SDK_VERSION:-$(sed -nE 's|.*<Version>([^<]+)</Version>.*|\1|p' "$root/sdk/dotnet/EventSourcing.Sdk.csproj" | head -1)}"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
# A fresh obj/ and bin/ per run (EsBuildRoot, read by sdk/*/Directory.Build.props): packs running at once, and a
# runtime build (which builds sdk/dotnet in place), never write the same intermediate files.
build_root="$(mktemp -d "${TMPDIR:-/tmp}/es-pack-XXXXXX")"
trap 'rm -rf "$build_root"' EXIT
for project in sdk/dotnet/EventSourcing.Sdk.csproj sdk/testing/EventSourcing.Sdk.Testing.csproj; do
  dotnet pack "$root/$project" -c Release -nologo -v q -p:Version="$version" -p:EsBuildRoot="$build_root" -o "$feed" >&2
done
echo "feed: $feed"
echo "version: $version"
