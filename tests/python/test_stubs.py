"""The generated type stubs cover what the modules hold at run time, so an editor completes
every name: the extension and its submodule keras (nanobind's stubgen, recursive: a stub
package _dlrt/__init__.pyi + _dlrt/keras.pyi) and raw_ops (tools/python/gen_raw_ops_stub.py,
one function per op of the schema)."""

from __future__ import annotations

import ast
import os

import pytest

import dlrt
import dlrt._dlrt as ext
import dlrt.raw_ops as raw_ops

PACKAGE = os.path.dirname(dlrt.__file__)


def stub_names(relative: str) -> set[str]:
    """Top-level names a stub file defines (classes, functions, assignments, imports)."""
    path = os.path.join(PACKAGE, relative)
    assert os.path.isfile(path), f"{relative} was not generated into {PACKAGE}"
    tree = ast.parse(open(path, encoding="utf-8").read(), filename=path)
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def public(module) -> set[str]:
    return {n for n in vars(module) if not n.startswith("_")}


@pytest.mark.parametrize("module, stub", [
    (ext, "_dlrt/__init__.pyi"),
    (ext.keras, "_dlrt/keras.pyi"),
])
def test_the_extension_stubs_name_everything_it_binds(module, stub):
    missing = public(module) - stub_names(stub)
    assert not missing, f"{stub} lacks {sorted(missing)}"


def test_the_keras_stub_has_the_classes_with_their_methods():
    path = os.path.join(PACKAGE, "_dlrt", "keras.pyi")
    tree = ast.parse(open(path, encoding="utf-8").read())
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    assert {"Model", "Dense", "Conv2D", "LSTM", "MultiHeadAttention"} <= set(classes)
    methods = {f.name for f in classes["Model"].body if isinstance(f, ast.FunctionDef)}
    assert {"fit", "evaluate", "predict"} <= methods


def test_no_single_file_stub_shadows_the_stub_package():
    assert not os.path.exists(os.path.join(PACKAGE, "_dlrt.pyi"))


def test_raw_ops_stub_has_every_op_of_the_schema():
    ops = {n for n, f in vars(raw_ops).items()
           if not n.startswith("_") and getattr(f, "__module__", None) == raw_ops.__name__
           and callable(f)}
    assert len(ops) > 100
    missing = ops - stub_names("raw_ops.pyi")
    assert not missing, f"raw_ops.pyi lacks {sorted(missing)}"
