#!/usr/bin/env bash
# Run by `npm start` (and by scripts/test-prerequisites.sh): the runtime sandbox needs bubblewrap,
# util-linux (setpriv, prlimit) and libseccomp2 on the machine. As root with apt-get (Debian/Ubuntu)
# the missing ones are installed; otherwise this says what to install. For `npm start` a miss is only a
# warning (the service itself refuses to start without a fence unless RUNTIME_SANDBOX=weak);
# with --required (the tests) it fails.
set -euo pipefail
required=0
[ "${1:-}" = "--required" ] && required=1

need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
{ command -v setpriv >/dev/null 2>&1 && command -v prlimit >/dev/null 2>&1; } || need+=(util-linux)
seccomp=0
for f in /usr/lib/*/libseccomp.so.2 /lib/*/libseccomp.so.2 /usr/lib64/libseccomp.so.2 /usr/lib/libseccomp.so.2; do [ -e "$f" ] && seccomp=1; done
((seccomp)) || need+=(libseccomp2)
((${#need[@]})) || exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "runtime sandbox: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  exit 0
fi
msg="runtime sandbox: missing ${need[*]} (Debian/Ubuntu: sudo apt-get install ${need[*]}; Fedora: dnf install bubblewrap util-linux libseccomp; Alpine: apk add bubblewrap util-linux libseccomp)"
if ((required)); then
  echo "$msg" >&2
  exit 1
fi
echo "$msg; without them the service refuses to start unless RUNTIME_SANDBOX=weak" >&2
