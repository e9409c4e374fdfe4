#!/usr/bin/env bash
# Makes (or reuses) the venv the ONNX conformance cases are generated with:
#   tools/onnx-suite/setup-venv.sh build/venv-onnx
# pip installs tools/onnx-suite/requirements.txt from PyPI (Debian's python is externally
# managed, so a venv). Reused when its pinned onnx is already there. `make test` runs it.
set -euo pipefail
venv="${1:?usage: setup-venv.sh DIR}"
req="$(cd "$(dirname "$0")" && pwd)/requirements.txt"
want="$(grep -E '^onnx==' "$req")"
if [ -x "$venv/bin/python" ] && "$venv/bin/pip" freeze 2>/dev/null | grep -qx "$want"; then
  echo "setup-venv: $venv has $want"
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r "$req"
echo "setup-venv: $venv ready ($want)"
