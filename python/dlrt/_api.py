"""TensorFlow's top-level functions over dlrt's ops (dlrt.constant, dlrt.matmul, ...).

Each function here adapts TensorFlow's name and argument order to one op of the schema
(dlrt.raw_ops has them all under the schema's names); where TensorFlow's function is a
composition (reduce_min, stack, squeeze, zeros), it is written from ops the same way. The
functions run eagerly and, inside a GradientTape, are recorded like any op.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from . import _device_scope
from . import _dlrt
from . import dtypes as _dtypes
from ._tensor import Tensor, TensorShape, _matmul, _run, _run1


def _dtype_enum(dtype: Any) -> int | None:
    return None if dtype is None else _dtypes.as_dtype(dtype).enum


def _device_index() -> int | None:
    spec = _device_scope.current()
    if not spec:
        return None
    try:
        return _dlrt.find_device(spec)
    except Exception:  # soft placement: a missing device means the default one
        return None


def constant(value: Any, dtype: Any = None, shape: Sequence[int] | None = None,
             name: str | None = None) -> Tensor:
    """A tensor holding a copy of `value` (array, scalar, nested lists), as tf.constant."""
    del name
    if isinstance(value, Tensor):
        value = value.numpy()
    if shape is not None:
        arr = np.asarray(value, dtype=_dtypes.as_dtype(dtype).as_numpy_dtype if dtype else None)
        if arr.size == 1:
            arr = np.full(tuple(shape), arr.reshape(()))
        value = arr.reshape(tuple(shape))
    return Tensor(_dlrt.to_tensor(value, _dtype_enum(dtype), _device_index(), True))


def convert_to_tensor(value: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """`value` as a Tensor (a Tensor of another dtype is an error, as in TensorFlow). A
    Variable gives its value; while a GradientTape records, as a recorded read (a copy op whose
    input is the Variable), so that functions which convert their arguments first still pass
    the gradient to the Variable (TensorFlow's ReadVariableOp)."""
    if getattr(value, "_dlrt_variable", False):
        from . import _tensor
        value = _run1("copy", [value]) if _tensor._recorder is not None else value.value()
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype != _dtypes.as_dtype(dtype):
            raise ValueError(f"Tensor conversion requested dtype {_dtypes.as_dtype(dtype).name} "
                             f"for a tensor of dtype {value.dtype.name}")
        return value
    return constant(value, dtype=dtype, name=name)


def is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)


def identity(x: Any, name: str | None = None) -> Tensor:
    return _run1("copy", [x])


def cast(x: Any, dtype: Any, name: str | None = None) -> Tensor:
    x = convert_to_tensor(x)
    d = _dtypes.as_dtype(dtype)
    return x if x.dtype == d else _run1("cast", [x], {"dtype": d.enum})


def fill(dims: Sequence[int], value: Any, name: str | None = None) -> Tensor:
    dtype = _dtypes.float32 if isinstance(value, float) else _dtypes.int32 if isinstance(
        value, int) and not isinstance(value, bool) else _dtypes.as_dtype(np.asarray(value).dtype)
    return _run1("fill", [], {"shape": list(dims), "value": float(value), "dtype": dtype.enum})


def zeros(shape: Sequence[int], dtype: Any = _dtypes.float32, name: str | None = None) -> Tensor:
    return _run1("fill", [], {"shape": list(_shape_list(shape)), "value": 0.0,
                              "dtype": _dtypes.as_dtype(dtype).enum})


def ones(shape: Sequence[int], dtype: Any = _dtypes.float32, name: str | None = None) -> Tensor:
    return _run1("fill", [], {"shape": list(_shape_list(shape)), "value": 1.0,
                              "dtype": _dtypes.as_dtype(dtype).enum})


def zeros_like(x: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    x = convert_to_tensor(x)
    return zeros(x.shape, dtype or x.dtype)


def ones_like(x: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    x = convert_to_tensor(x)
    return ones(x.shape, dtype or x.dtype)


def _shape_list(shape: Any) -> list[int]:
    if isinstance(shape, Tensor):
        return [int(v) for v in shape.numpy().reshape(-1)]
    if isinstance(shape, int):
        return [shape]
    return [int(v) for v in shape]


def shape(x: Any, out_type: Any = _dtypes.int32, name: str | None = None) -> Tensor:
    return constant(np.asarray(convert_to_tensor(x).shape, dtype=np.int64), dtype=out_type)


def rank(x: Any, name: str | None = None) -> Tensor:
    return constant(convert_to_tensor(x).ndim, dtype=_dtypes.int32)


def size(x: Any, out_type: Any = _dtypes.int32, name: str | None = None) -> Tensor:
    return constant(convert_to_tensor(x).shape.num_elements(), dtype=out_type)


def range(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None,  # noqa: A001
          name: str | None = None) -> Tensor:
    if limit is None:
        start, limit = 0, start
    values = np.arange(start, limit, delta)
    if dtype is None:
        dtype = _dtypes.float32 if values.dtype.kind == "f" else _dtypes.int32
    return constant(values, dtype=dtype)


# ---- shape ops ----
def reshape(tensor: Any, shape: Any, name: str | None = None) -> Tensor:
    return _run1("reshape", [tensor], {"shape": _shape_list(shape)})


def transpose(a: Any, perm: Sequence[int] | None = None, conjugate: bool = False,
              name: str | None = None) -> Tensor:
    a = convert_to_tensor(a)
    if perm is None:
        perm = list(reversed(builtins_range(a.ndim)))
    return _run1("transpose", [a], {"perm": list(perm)})


def builtins_range(n: int) -> Any:
    import builtins
    return builtins.range(n)


def concat(values: Sequence[Any], axis: int, name: str | None = None) -> Tensor:
    return _run1("concat", list(values), {"axis": axis})


def stack(values: Sequence[Any], axis: int = 0, name: str | None = None) -> Tensor:
    ts = [convert_to_tensor(v) for v in values]
    rank_out = ts[0].ndim + 1
    ax = axis % rank_out
    expanded = [reshape(t, list(t.shape[:ax]) + [1] + list(t.shape[ax:])) for t in ts]
    return concat(expanded, ax)


def unstack(value: Any, num: int | None = None, axis: int = 0, name: str | None = None) -> list[Tensor]:
    value = convert_to_tensor(value)
    ax = axis % value.ndim
    parts = split(value, value.shape[ax], axis=ax)
    rest = list(value.shape[:ax]) + list(value.shape[ax + 1:])
    return [reshape(p, rest) for p in parts]


def split(value: Any, num_or_size_splits: Any, axis: int = 0, num: int | None = None,
          name: str | None = None) -> list[Tensor]:
    if isinstance(num_or_size_splits, int):
        return _run("split", [value], {"axis": axis, "num": num_or_size_splits})
    return _run("split", [value], {"axis": axis, "sizes": [int(s) for s in num_or_size_splits]})


def expand_dims(input: Any, axis: int, name: str | None = None) -> Tensor:  # noqa: A002
    x = convert_to_tensor(input)
    ax = axis % (x.ndim + 1)
    return reshape(x, list(x.shape[:ax]) + [1] + list(x.shape[ax:]))


def squeeze(input: Any, axis: Any = None, name: str | None = None) -> Tensor:  # noqa: A002
    x = convert_to_tensor(input)
    dims = list(x.shape)
    if axis is None:
        keep = [d for d in dims if d != 1]
    else:
        axes = {a % len(dims) for a in ([axis] if isinstance(axis, int) else axis)}
        for a in axes:
            if dims[a] != 1:
                raise ValueError(f"cannot squeeze axis {a} of size {dims[a]}")
        keep = [d for i, d in enumerate(dims) if i not in axes]
    return reshape(x, keep)


def broadcast_to(input: Any, shape: Any, name: str | None = None) -> Tensor:  # noqa: A002
    return _run1("broadcast_to", [input], {"shape": _shape_list(shape)})


def pad(tensor: Any, paddings: Any, mode: str = "CONSTANT", constant_values: float = 0,
        name: str | None = None) -> Tensor:
    p = np.asarray(paddings, dtype=np.int64)
    # TensorFlow's [[before, after], ...] per axis -> ONNX's begins then ends.
    pads = list(p[:, 0]) + list(p[:, 1])
    return _run1("pad", [tensor], {"pads": [int(v) for v in pads], "mode": mode.lower(),
                                   "value": float(constant_values)})


def gather(params: Any, indices: Any, axis: int = 0, batch_dims: int = 0,
           name: str | None = None) -> Tensor:
    if axis != 0 or batch_dims != 0:
        raise NotImplementedError("dlrt.gather gathers along axis 0 (the schema's gather); "
                                  "transpose the axis first")
    return _run1("gather", [params, indices])


def one_hot(indices: Any, depth: int, on_value: Any = None, off_value: Any = None,
            axis: int | None = None, dtype: Any = None, name: str | None = None) -> Tensor:
    if axis not in (None, -1):
        raise NotImplementedError("dlrt.one_hot puts the depth last (axis=-1)")
    attrs: dict[str, Any] = {"depth": depth}
    if on_value is not None:
        attrs["on_value"] = float(on_value)
    if off_value is not None:
        attrs["off_value"] = float(off_value)
    if dtype is not None:
        attrs["dtype"] = _dtypes.as_dtype(dtype).enum
    return _run1("one_hot", [indices], attrs)


def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Any:
    if x is None and y is None:
        # tf.where(cond) alone: the coordinates of the true elements (host-computed).
        return constant(np.argwhere(np.asarray(convert_to_tensor(condition).numpy())), dtype="int64")
    return _run1("where", [condition, x, y])


def stop_gradient(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    return _run1("stop_gradient", [input])


# ---- arithmetic and reductions (also under dlrt.math) ----
def add(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _run1("add", [x, y])


def add_n(inputs: Sequence[Any], name: str | None = None) -> Tensor:
    """The elementwise sum of a list of tensors of one shape (TensorFlow's tf.add_n), as a
    chain of adds (a GradientTape records each)."""
    items = list(inputs)
    if not items:
        raise ValueError("add_n: inputs must be a non-empty list of tensors")
    total = items[0] if len(items) > 1 else _run1("copy", [items[0]])
    for x in items[1:]:
        total = _run1("add", [total, x])
    return total


def subtract(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _run1("sub", [x, y])


def multiply(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _run1("mul", [x, y])


def divide(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _run1("div", [x, y])


truediv = divide


def maximum(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _run1("maximum", [x, y])


def minimum(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _run1("minimum", [x, y])


def pow(x: Any, y: Any, name: str | None = None) -> Tensor:  # noqa: A001
    return _run1("pow", [x, y])


def negative(x: Any, name: str | None = None) -> Tensor:
    return _run1("neg", [x])


def matmul(a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False,
           name: str | None = None, **_: Any) -> Tensor:
    """tf.matmul: 2-D operands run `matmul`, batched ones `batch_matmul`."""
    return _matmul(a, b, transpose_a, transpose_b)


def _axes(axis: Any) -> list[int]:
    if axis is None:
        return []
    if isinstance(axis, Tensor):
        axis = axis.numpy().tolist()
    return [int(axis)] if isinstance(axis, (int, np.integer)) else [int(a) for a in axis]


def reduce_sum(input_tensor: Any, axis: Any = None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    return _run1("reduce_sum", [input_tensor], {"axes": _axes(axis), "keepdims": keepdims})


def reduce_mean(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                name: str | None = None) -> Tensor:
    return _run1("reduce_mean", [input_tensor], {"axes": _axes(axis), "keepdims": keepdims})


def reduce_max(input_tensor: Any, axis: Any = None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    return _run1("reduce_max", [input_tensor], {"axes": _axes(axis), "keepdims": keepdims})


def reduce_min(input_tensor: Any, axis: Any = None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    return negative(reduce_max(negative(input_tensor), axis, keepdims))


def argmax(input: Any, axis: int | None = None, output_type: Any = _dtypes.int64,  # noqa: A002
           name: str | None = None) -> Tensor:
    return _run1("argmax", [input], {"axis": -1 if axis is None else axis,
                                     "output_type": _dtypes.as_dtype(output_type).enum})


def argmin(input: Any, axis: int | None = None, output_type: Any = _dtypes.int64,  # noqa: A002
           name: str | None = None) -> Tensor:
    return argmax(negative(input), axis, output_type)


def cumsum(x: Any, axis: int = 0, exclusive: bool = False, reverse: bool = False,
           name: str | None = None) -> Tensor:
    return _run1("cumsum", [x], {"axis": axis, "exclusive": exclusive, "reverse": reverse})


def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any, name: str | None = None) -> Tensor:
    return _run1("clip", [t], {"min": float(clip_value_min), "max": float(clip_value_max)})


def equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _run1("equal", [x, y])


def not_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _run1("not_equal", [x, y])


def less(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _run1("less", [x, y])


def less_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _run1("less_equal", [x, y])


def greater(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _run1("greater", [x, y])


def greater_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _run1("greater_equal", [x, y])


def _unary(op: str, tf_name: str):
    def fn(x: Any, name: str | None = None) -> Tensor:
        return _run1(op, [x])
    fn.__name__ = tf_name
    fn.__qualname__ = tf_name
    fn.__doc__ = f"tf.math.{tf_name}: dlrt's `{op}` op."
    return fn


# TensorFlow name -> the schema's op, for the one-input elementwise functions.
UNARY = {
    "abs": "abs", "exp": "exp", "log": "log", "sqrt": "sqrt", "rsqrt": "rsqrt",
    "square": "square", "sign": "sign", "sin": "sin", "cos": "cos", "tan": "tan",
    "asin": "asin", "acos": "acos", "atan": "atan", "sinh": "sinh", "cosh": "cosh",
    "asinh": "asinh", "acosh": "acosh", "atanh": "atanh", "tanh": "tanh",
    "sigmoid": "sigmoid", "erf": "erf", "floor": "floor", "ceil": "ceil", "round": "round",
    "softplus": "softplus",
}
for _tf, _op in UNARY.items():
    globals()[_tf] = _unary(_op, _tf)

__all__ = [n for n in dir() if not n.startswith("_") and n not in (
    "annotations", "Any", "Sequence", "np", "Tensor", "TensorShape", "builtins_range", "UNARY")]
