#!/usr/bin/env bash
# Run by `npm test` before the suites: the tests start their own PostgreSQL and Redis servers and
# run the .NET host in its sandbox, so their binaries must be on the machine. As root with apt-get (a
# fresh CI or dev machine) they are installed; otherwise this says what to install and fails, rather
# than letting suites skip.
set -euo pipefail
bash "$(dirname "$0")/start-prerequisites.sh" --required
need=()
if ! command -v pg_ctl >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then need+=(postgresql); fi
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
((${#need[@]})) || exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test prerequisites: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
else
  echo "test prerequisites missing: ${need[*]} (e.g. sudo apt-get install ${need[*]})" >&2
  exit 1
fi
