"""dlrt.raw_ops: every op of dlrt's op schema as a Python function, made from the schema.

    dlrt.raw_ops.conv2d(x, w, strides=[2, 2], padding="SAME")
    dlrt.raw_ops.concat([a, b], axis=0)

One function per op of docs/ops.md, generated when the package is imported from the schema
the library reports (its inputs in order, a variadic input as one list, then its attributes
as keyword arguments with the schema's defaults); nothing here lists an op by name. An op
with one output returns a Tensor, with several a tuple (a list for split's variadic
outputs). Inputs may be Tensors, NumPy arrays or Python numbers. `name=` is accepted and
ignored, as TensorFlow's raw ops accept it. The type stub raw_ops.pyi is generated from the
same schema (tools/python/gen_stubs.py).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from . import _dlrt
from . import dtypes as _dtypes
from ._tensor import _run

_SIGNATURES: dict[str, dict] = {s["name"]: s for s in _dlrt.op_signatures()}


def _attr_value(spec: dict, value: Any) -> Any:
    if spec["type"] == "dtype" and value is not None:
        return _dtypes.as_dtype(value).enum
    return value


def _make(sig: dict) -> Callable[..., Any]:
    op = sig["name"]
    inputs = sig["inputs"]
    attrs = {a["name"]: a for a in sig["attrs"]}
    variadic_outputs = sig["variadic_outputs"]
    n_inputs = len(inputs)

    def fn(*args: Any, name: str | None = None, **kwargs: Any) -> Any:
        del name  # accepted as TensorFlow's raw ops accept it
        values = list(args[:n_inputs])
        for spec in inputs[len(values):]:
            if spec["name"] not in kwargs:
                raise TypeError(f"{op}() missing input '{spec['name']}'")
            values.append(kwargs.pop(spec["name"]))
        if len(args) > n_inputs:
            raise TypeError(f"{op}() takes {n_inputs} inputs ({', '.join(i['name'] for i in inputs)}) "
                            f"and its attributes as keywords; got {len(args)} positional arguments")
        flat = []
        for spec, v in zip(inputs, values):
            if spec["variadic"]:
                flat.extend(v if isinstance(v, (list, tuple)) else [v])
            else:
                flat.append(v)
        given = {}
        for k, v in kwargs.items():
            given[k] = _attr_value(attrs[k], v) if k in attrs else v
        outs = _run(op, flat, given)
        if variadic_outputs:
            return outs
        return outs[0] if len(outs) == 1 else tuple(outs)

    params = []
    for spec in inputs:
        params.append(inspect.Parameter(spec["name"], inspect.Parameter.POSITIONAL_OR_KEYWORD))
    for a in sig["attrs"]:
        default = inspect.Parameter.empty if a["required"] else a["default"]
        params.append(inspect.Parameter(a["name"], inspect.Parameter.KEYWORD_ONLY, default=default))
    params.append(inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default=None))
    fn.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    fn.__name__ = op
    fn.__qualname__ = op
    fn.__module__ = __name__
    lines = [sig["doc"], ""]
    for spec in inputs:
        lines.append(f"  {spec['name']}{'...' if spec['variadic'] else ''} {spec['shape']}".rstrip())
    for a in sig["attrs"]:
        d = "required" if a["required"] else f"default {a['default']!r}"
        extra = f" (one of {', '.join(a['allowed'])})" if a["allowed"] else ""
        lines.append(f"  {a['name']}: {a['type']}, {d}{extra}. {a['doc']}".rstrip())
    if not sig["differentiable"]:
        lines.append(f"  no gradient: {sig['no_gradient_reason']}")
    fn.__doc__ = "\n".join(lines)
    return fn


for _name, _sig in _SIGNATURES.items():
    globals()[_name] = _make(_sig)


def signature(op: str) -> dict:
    """What the schema says about `op` (inputs, outputs, attributes with types and defaults)."""
    return _SIGNATURES[op] if op in _SIGNATURES else _dlrt.op_signature(op)


def op_names() -> list[str]:
    """Every op of the schema, sorted."""
    return sorted(_SIGNATURES)
