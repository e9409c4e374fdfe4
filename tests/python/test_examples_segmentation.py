"""The segmentation examples (examples/segmentation.py: canvases and nuclei), each run as a user runs it in its quick form
and held to its stated quality. One CTest test per file, so the example files run in parallel.
Their data comes from the install step (tools/install-deps.sh, tools/python/setup-venv.sh); a
missing data package fails with its name."""

from __future__ import annotations

import re

from examples_util import number, run_example


def test_segmentation_labels_the_items_pixels(tmp_path):
    png = tmp_path / "masks.png"
    line = run_example("segmentation.py", "--quick", "--data", "canvases", "--png", str(png))
    # Background alone scores a mean IoU near 0.08 (its IoU over 11 classes) at a pixel
    # accuracy near 0.8: both above that show the items' classes being learned.
    assert number(line, "pixel accuracy") >= 0.85, line
    assert number(line, "mean IoU") >= 0.2, line
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_segmentation_finds_the_nuclei_of_the_held_out_strip(tmp_path):
    png = tmp_path / "nuclei.png"
    line = run_example("segmentation.py", "--quick", "--data", "nuclei", "--nuclei-png", str(png))
    # Nuclei cover about a sixth of the strip: calling everything background scores a nucleus
    # IoU of 0; the quick run reached 0.85.
    assert number(line, "nucleus IoU") >= 0.7, line
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
