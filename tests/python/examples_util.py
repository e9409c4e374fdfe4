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


def run_example(name: str, *args: str, lines: int = 1, timeout: float = 1700) -> str:
    """The example's last `lines` lines of output (its figures), after it exited 0. The
    timeout stays under the example files' CTest limit (1800 s, tests/python/CMakeLists.txt)
    so that a slow run fails here, with the example's name, rather than being killed."""
    p = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args],
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stderr
    return "\n".join(p.stdout.strip().splitlines()[-lines:])


def number(line: str, label: str) -> float:
    m = re.search(re.escape(label) + r" ([0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?)", line)
    assert m, f"no '{label}' figure in: {line}"
    return float(m.group(1))
