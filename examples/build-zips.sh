#!/usr/bin/env bash
# Builds examples/dist/<name>.zip for each example folder (its .cs files, paths relative to the folder).
# Reproducible: sorted entries, fixed timestamps (1980-01-01 00:00 UTC), fixed permissions (0644), no extra fields.
# Uses `zip` when installed, else python3's zipfile (FORCE_PYTHON_ZIP=1 forces the latter).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
export TZ=UTC LC_ALL=C

examples=(bank-account orders customer-totals)
mkdir -p dist

build_with_zip() { # name
  local name=$1 stage out
  stage=$(mktemp -d)
  out="$(pwd)/dist/$name.zip"
  (cd "$name" && find . -type f -name '*.cs' -print0 | sort -z | xargs -0 -I{} cp --parents {} "$stage/")
  find "$stage" -type d -exec chmod 0755 {} +
  find "$stage" -type f -exec chmod 0644 {} + -exec touch -h -d '1980-01-01 00:00:00' {} +
  rm -f "$out"
  (cd "$stage" && find . -type f -name '*.cs' | sed 's#^\./##' | sort | zip -X -D -9 -q "$out" -@)
  rm -rf "$stage"
}

build_with_python() { # name
  python3 - "$1" <<'PY'
import os, sys, zipfile
name = sys.argv[1]
files = sorted(
    os.path.relpath(os.path.join(root, f), name).replace(os.sep, "/")
    for root, _, names in os.walk(name) for f in names if f.endswith(".cs"))
out = os.path.join("dist", name + ".zip")
with zipfile.ZipFile(out, "w") as z:
    for rel in files:
        info = zipfile.ZipInfo(rel, date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o100644 << 16
        info.create_system = 3
        with open(os.path.join(name, rel), "rb") as f:
            z.writestr(info, f.read(), compresslevel=9)
PY
}

for name in "${examples[@]}"; do
  [ -d "$name" ] || { echo "build-zips.sh: no folder $name" >&2; exit 1; }
  if [ -z "${FORCE_PYTHON_ZIP:-}" ] && command -v zip >/dev/null 2>&1; then build_with_zip "$name"; else build_with_python "$name"; fi
  echo "dist/$name.zip ($(wc -c <"dist/$name.zip") bytes)"
done
