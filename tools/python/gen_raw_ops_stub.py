"""Writes dlrt/raw_ops.pyi, the type stub of the generated dlrt.raw_ops, from the op schema
the built library reports (the same source raw_ops.py makes its functions from):

    python tools/python/gen_raw_ops_stub.py <build>/python/dlrt/raw_ops.pyi

Run by the build (python/CMakeLists.txt) with <build>/python on the path.
"""

from __future__ import annotations

import sys

_PY = {"int": "int", "float": "float", "string": "str", "bool": "bool", "dtype": "DTypeLike",
       "ints": "Sequence[int]", "floats": "Sequence[float]"}


def main(out_path: str) -> int:
    from dlrt import _dlrt
    lines = [
        '"""Generated from the op schema by tools/python/gen_raw_ops_stub.py; do not edit."""',
        "from typing import Any, Sequence, Union",
        "from dlrt._tensor import Tensor",
        "from dlrt.dtypes import DType",
        "",
        "TensorLike = Any  # a Tensor, a NumPy array, a Python number or nested lists",
        "DTypeLike = Union[DType, str, int, Any]",
        "",
    ]
    for sig in sorted(_dlrt.op_signatures(), key=lambda s: s["name"]):
        params = []
        for i in sig["inputs"]:
            params.append(f"{i['name']}: {'Sequence[TensorLike]' if i['variadic'] else 'TensorLike'}")
        params.append("*")
        for a in sig["attrs"]:
            t = _PY.get(a["type"], "Any")
            params.append(f"{a['name']}: {t}" + ("" if a["required"] else f" = {a['default']!r}"))
        params.append("name: str | None = None")
        n_out = len(sig["outputs"])
        ret = "list[Tensor]" if sig["variadic_outputs"] else (
            "Tensor" if n_out == 1 else f"tuple[{', '.join(['Tensor'] * n_out)}]")
        lines.append(f"def {sig['name']}({', '.join(params)}) -> {ret}:")
        lines.append(f"    {sig['doc']!r}")
        lines.append("")
    lines += ["def signature(op: str) -> dict: ...", "def op_names() -> list[str]: ...", ""]
    with open(out_path, "w") as f:
        f.write("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
