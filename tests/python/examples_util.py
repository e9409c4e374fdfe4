"""What the example tests share (tests/python/test_examples*.py): running an example as a user
runs it, and reading a figure off its output."""

from __future__ import annotations

import os
import re
import subprocess
import sys

EXAMPLES = os.path.join(os.environ.get("DLRT_SOURCE_DIR",
                                       os.path.join(os.path.dirname(__file__), "..", "..")),
                        "examples")


def run_example(name: str, *args: str, lines: int = 1) -> str:
    """The example's last `lines` lines of output (its figures), after it exited 0."""
    p = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    return "\n".join(p.stdout.strip().splitlines()[-lines:])


def number(line: str, label: str) -> float:
    m = re.search(re.escape(label) + r" ([0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?)", line)
    assert m, f"no '{label}' figure in: {line}"
    return float(m.group(1))
