"""Shared helpers of the Python tests.

run_python(code) runs `code` in a fresh Python (the runtime is configured once per process,
so tests of tf.config and of the placement log need a process each) with this build's package
importable, and returns (exit status, stdout, stderr).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest


def run_python(code: str, timeout: float = 300, env: dict | None = None) -> tuple[int, str, str]:
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=timeout, env=full_env)
    return p.returncode, p.stdout, p.stderr


@pytest.fixture
def python():
    return run_python


FASHION = "/usr/share/datasets/fashion-mnist"


def have_fashion_mnist() -> bool:
    return os.path.exists(os.path.join(FASHION, "train-images-idx3-ubyte.gz"))
