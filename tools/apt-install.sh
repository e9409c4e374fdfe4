#!/usr/bin/env bash
# tools/apt-install.sh LABEL PACKAGE...: installs the Debian packages named that are missing
# (one apt-get run for all of them), with root or sudo; prints "LABEL: all N packages present"
# when there is nothing to do. Shared by tools/install-deps.sh and
# tools/windows/install-deps.sh, which hold the package lists and say why each is needed.
set -euo pipefail
label=${1:?usage: apt-install.sh LABEL PACKAGE...}
shift

missing=()
for p in "$@"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "$label: all $# packages present"
  exit 0
fi

echo "$label: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
