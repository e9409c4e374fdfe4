"""dlrt.Variable: a named, mutable tensor (TensorFlow's tf.Variable), for eager training.

    w = dlrt.Variable(dlrt.random.normal([3, 1]), name="w")
    with dlrt.GradientTape() as tape:
        loss = dlrt.reduce_mean((x @ w - y) ** 2)
    w.assign_sub(0.1 * tape.gradient(loss, w))

Ops read a Variable as its current value; a GradientTape watches trainable Variables without
being asked. assign/assign_add/assign_sub give the Variable a new value (of the same dtype
and shape); tensors read before keep the old one.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from . import dtypes as _dtypes
from ._tensor import Tensor, TensorShape, _getitem, _matmul, _run1

_names = itertools.count()


class Variable:
    __array_priority__ = 100
    _dlrt_variable = True  # _tensor._run reads a Variable as its value

    def __init__(self, initial_value: Any, trainable: bool = True, name: str | None = None,
                 dtype: Any = None, shape: Any = None) -> None:
        from ._api import constant, cast
        if callable(initial_value):
            initial_value = initial_value()
        value = initial_value if isinstance(initial_value, Tensor) else constant(initial_value, dtype=dtype)
        if dtype is not None and value.dtype != _dtypes.as_dtype(dtype):
            value = cast(value, dtype)
        self._value: Tensor = value
        self._version = 0  # counts assignments (keras/_eager.py syncs changed weights)
        self.trainable = bool(trainable)
        self.name = f"{name or 'Variable'}:0" if name is None or ":" not in name else name
        if name is None:
            self.name = f"Variable_{next(_names)}:0"

    # ---- reading ----
    def value(self) -> Tensor:
        return self._value

    def read_value(self) -> Tensor:
        return self._value

    @property
    def shape(self) -> TensorShape:
        return self._value.shape

    @property
    def dtype(self) -> _dtypes.DType:
        return self._value.dtype

    @property
    def device(self) -> str:
        return self._value.device

    def numpy(self) -> np.ndarray:
        return self._value.numpy()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._value.__array__(dtype)

    def __repr__(self) -> str:
        return (f"<dlrt.Variable '{self.name}' shape={tuple(self.shape)} "
                f"dtype={self.dtype.name}, numpy={self.numpy()!r}>")

    # ---- writing ----
    def assign(self, value: Any) -> "Variable":
        from ._api import convert_to_tensor
        t = convert_to_tensor(value, dtype=self.dtype) if not isinstance(value, Tensor) else value
        if t.shape != self.shape or t.dtype != self.dtype:
            raise ValueError(f"assign to {self.name}: expected {self.dtype.name} {tuple(self.shape)}, "
                             f"got {t.dtype.name} {tuple(t.shape)}")
        self._value = t
        self._version += 1
        return self

    def assign_add(self, delta: Any) -> "Variable":
        return self.assign(self._value + delta)

    def assign_sub(self, delta: Any) -> "Variable":
        return self.assign(self._value - delta)

    # ---- arithmetic: ops on the Variable itself ----
    # The Variable, not its current value, is the operand, so that a GradientTape sees it
    # whichever side of the operator it stands (`w * x` as `x * w`); the op reads its value.
    def __getattr__(self, name: str) -> Any:
        # Tensor methods and properties (ndim, ...) of the current value.
        return getattr(self._value, name)

    def __add__(self, o: Any) -> Tensor: return _run1("add", [self, o])
    def __radd__(self, o: Any) -> Tensor: return _run1("add", [o, self])
    def __sub__(self, o: Any) -> Tensor: return _run1("sub", [self, o])
    def __rsub__(self, o: Any) -> Tensor: return _run1("sub", [o, self])
    def __mul__(self, o: Any) -> Tensor: return _run1("mul", [self, o])
    def __rmul__(self, o: Any) -> Tensor: return _run1("mul", [o, self])
    def __truediv__(self, o: Any) -> Tensor: return _run1("div", [self, o])
    def __rtruediv__(self, o: Any) -> Tensor: return _run1("div", [o, self])
    def __matmul__(self, o: Any) -> Tensor: return _matmul(self, o)
    def __rmatmul__(self, o: Any) -> Tensor: return _matmul(o, self)
    def __neg__(self) -> Tensor: return _run1("neg", [self])
    def __abs__(self) -> Tensor: return _run1("abs", [self])
    def __pow__(self, o: Any) -> Tensor: return _run1("pow", [self, o])
    def __rpow__(self, o: Any) -> Tensor: return _run1("pow", [o, self])
    def __getitem__(self, key: Any) -> Tensor: return _getitem(self, key)
    def __lt__(self, o: Any) -> Tensor: return _run1("less", [self, o])
    def __le__(self, o: Any) -> Tensor: return _run1("less_equal", [self, o])
    def __gt__(self, o: Any) -> Tensor: return _run1("greater", [self, o])
    def __ge__(self, o: Any) -> Tensor: return _run1("greater_equal", [self, o])
    def __float__(self) -> float: return float(self._value)
