#!/usr/bin/env bash
# The Python examples' full runs, one after the other, with the README's venv (make deps or
# make build first: the venv holds the examples' data packages). Each prints its quality
# figure last; docs/examples.md records them.
#   bash examples/run_all.sh [python]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${1:-$here/../.venv/bin/python}"
for example in face_recognition sentiment heat_equation segmentation detection tagging \
    super_resolution style_transfer translation tuner; do
  echo "== $example"
  "$python" "$here/$example.py"
done
