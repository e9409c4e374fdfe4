"""dlrt.Tensor: an eager tensor on one device, as TensorFlow's EagerTensor.

    x = dlrt.constant([[1.0, 2.0], [3.0, 4.0]])
    y = x @ x + 1            # ops run now, on x's device
    y.numpy(), y.shape, y.dtype, y.device

Operators run the schema's ops (add, sub, mul, div, neg, pow, matmul/batch_matmul, the
comparisons); indexing by integers and slices runs `slice` (and `reshape` for dropped axes).
As in TensorFlow 2, == and != compare elementwise and a Tensor is not hashable.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from . import _dlrt
from . import _device_scope
from . import dtypes as _dtypes


class TensorShape(tuple):
    """A tuple of dims with TensorFlow's TensorShape methods (as_list, rank, num_elements)."""

    def as_list(self) -> list[int]:
        return list(self)

    @property
    def rank(self) -> int:
        return len(self)

    @property
    def ndims(self) -> int:
        return len(self)

    def num_elements(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n

    def __repr__(self) -> str:
        return f"TensorShape({list(self)})"


# Called with (op, inputs as given, the tensors the op read, attrs, outputs) for every op run
# while a GradientTape records (dlrt/_tape.py sets it); None otherwise.
_recorder = None


def _handle(x: Any) -> Any:
    if isinstance(x, Tensor):
        return x._h
    if getattr(x, "_dlrt_variable", False):  # a dlrt.Variable reads as its value
        return x._value._h
    return x


def _run(op: str, inputs: Sequence[Any], attrs: dict | None = None) -> list["Tensor"]:
    """Runs `op` of the schema now and returns its outputs as Tensors."""
    handles = [_handle(x) for x in inputs]
    if _recorder is None:
        return [Tensor(h) for h in _dlrt.run_op(op, handles, attrs, _device_scope.current())]
    if op == "dropout":
        # On a tape: the mask it draws becomes a value of the record (x * mask), so the
        # gradient uses the very mask the forward pass used.
        x = inputs[0]
        ones = _dlrt.run_op("fill", [], {"shape": list(Tensor(handles[0]).shape), "value": 1.0,
                                         "dtype": Tensor(handles[0]).dtype.enum},
                            _device_scope.current())
        mask = Tensor(_dlrt.run_op("dropout", ones, attrs, _device_scope.current())[0])
        return _run("mul", [x, mask])
    outs, used = _dlrt.run_op(op, handles, attrs, _device_scope.current(), True)
    outputs = [Tensor(h) for h in outs]
    read = []
    for given, h in zip(inputs, used):
        if isinstance(given, Tensor) and given._h is h:
            read.append(given)
        elif getattr(given, "_dlrt_variable", False) and given._value._h is h:
            read.append(given._value)
        else:
            read.append(Tensor(h))
    _recorder(op, inputs, read, attrs, outputs)
    return outputs


def _run1(op: str, inputs: Sequence[Any], attrs: dict | None = None) -> "Tensor":
    return _run(op, inputs, attrs)[0]


def _run_composite(composite: Any, inputs: Sequence["Tensor"]) -> tuple[list["Tensor"], list[int]]:
    """Runs a Keras layer call or loss (keras/_eager.py) on tensors; a GradientTape records
    it (its first output) like an op."""
    handles = [_handle(x) for x in inputs]
    outs, updates = _dlrt.keras.run_composite(composite, handles)
    outputs = [Tensor(h) for h in outs]
    if _recorder is not None:
        read = [x if isinstance(x, Tensor) else x._value for x in inputs]
        _recorder("@composite", inputs, read, composite, outputs[:1])
    return outputs, list(updates)


class Tensor:
    """An eager tensor: `.numpy()`, `.shape`, `.dtype`, `.device`, operators, indexing."""

    __slots__ = ("_h", "__weakref__")
    # NumPy defers to our operators (np_array + tensor is a Tensor).
    __array_priority__ = 100

    def __init__(self, handle: Any) -> None:
        if not isinstance(handle, _dlrt.TensorHandle):
            raise TypeError("dlrt.Tensor is made by ops; use dlrt.constant(value) for a value")
        self._h = handle

    # ---- what it is ----
    @property
    def shape(self) -> TensorShape:
        return TensorShape(self._h.shape)

    @property
    def dtype(self) -> _dtypes.DType:
        return _dtypes.from_enum(self._h.dtype)

    @property
    def device(self) -> str:
        return self._h.device

    @property
    def ndim(self) -> int:
        return len(self._h.shape)

    def get_shape(self) -> TensorShape:
        return self.shape

    def numpy(self) -> np.ndarray:
        """A new NumPy array with the values (it owns its memory; bfloat16 reads as float32)."""
        return self._h.numpy()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self._h.numpy()
        return a if dtype is None else a.astype(dtype)

    def __len__(self) -> int:
        if not self._h.shape:
            raise TypeError("len() of a scalar tensor")
        return self._h.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __bool__(self) -> bool:
        return bool(self.numpy())

    def __float__(self) -> float:
        return float(self.numpy())

    def __int__(self) -> int:
        return int(self.numpy())

    def __index__(self) -> int:
        if not self.dtype.is_integer:
            raise TypeError("only integer scalar tensors can be used as an index")
        return int(self.numpy())

    def __repr__(self) -> str:
        return (f"<dlrt.Tensor: shape={tuple(self.shape)}, dtype={self.dtype.name}, "
                f"numpy=\n{self.numpy()!r}>" if self.ndim > 1 else
                f"<dlrt.Tensor: shape={tuple(self.shape)}, dtype={self.dtype.name}, "
                f"numpy={self.numpy()!r}>")

    def __str__(self) -> str:
        return f"dlrt.Tensor(\n{self.numpy()}, shape={tuple(self.shape)}, dtype={self.dtype.name})"

    __hash__ = None  # type: ignore[assignment]  (TensorFlow 2: == is elementwise)

    def ref(self) -> "_Ref":
        """A hashable reference (TensorFlow's Tensor.ref()), for sets and dict keys."""
        return _Ref(self)

    def cpu(self) -> "Tensor":
        return self._copy_to("CPU:0")

    def gpu(self, index: int = 0) -> "Tensor":
        return self._copy_to(f"GPU:{index}")

    def _copy_to(self, spec: str) -> "Tensor":
        return Tensor(self._h.copy_to(_dlrt.find_device(spec)))

    # ---- arithmetic ----
    def __add__(self, o: Any) -> "Tensor":
        return _run1("add", [self, o])

    def __radd__(self, o: Any) -> "Tensor":
        return _run1("add", [o, self])

    def __sub__(self, o: Any) -> "Tensor":
        return _run1("sub", [self, o])

    def __rsub__(self, o: Any) -> "Tensor":
        return _run1("sub", [o, self])

    def __mul__(self, o: Any) -> "Tensor":
        return _run1("mul", [self, o])

    def __rmul__(self, o: Any) -> "Tensor":
        return _run1("mul", [o, self])

    def __truediv__(self, o: Any) -> "Tensor":
        return _run1("div", [self, o])

    def __rtruediv__(self, o: Any) -> "Tensor":
        return _run1("div", [o, self])

    def __pow__(self, o: Any) -> "Tensor":
        return _run1("pow", [self, o])

    def __rpow__(self, o: Any) -> "Tensor":
        return _run1("pow", [o, self])

    def __neg__(self) -> "Tensor":
        return _run1("neg", [self])

    def __pos__(self) -> "Tensor":
        return self

    def __abs__(self) -> "Tensor":
        return _run1("abs", [self])

    def __matmul__(self, o: Any) -> "Tensor":
        return _matmul(self, o)

    def __rmatmul__(self, o: Any) -> "Tensor":
        return _matmul(o, self)

    # ---- comparisons (elementwise, bool tensors) ----
    def __eq__(self, o: Any) -> "Tensor":  # type: ignore[override]
        return _run1("equal", [self, o])

    def __ne__(self, o: Any) -> "Tensor":  # type: ignore[override]
        return _run1("not_equal", [self, o])

    def __lt__(self, o: Any) -> "Tensor":
        return _run1("less", [self, o])

    def __le__(self, o: Any) -> "Tensor":
        return _run1("less_equal", [self, o])

    def __gt__(self, o: Any) -> "Tensor":
        return _run1("greater", [self, o])

    def __ge__(self, o: Any) -> "Tensor":
        return _run1("greater_equal", [self, o])

    # ---- indexing ----
    def __getitem__(self, key: Any) -> "Tensor":
        return _getitem(self, key)


class _Ref:
    __slots__ = ("_t",)

    def __init__(self, t: Tensor) -> None:
        self._t = t

    def deref(self) -> Tensor:
        return self._t

    def __hash__(self) -> int:
        return id(self._t)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Ref) and other._t is self._t


def _rank(x: Any) -> int:
    if isinstance(x, Tensor) or getattr(x, "_dlrt_variable", False):
        return x.ndim
    return np.ndim(x)


def _matmul(a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False) -> Tensor:
    op = "matmul" if _rank(a) == 2 and _rank(b) == 2 else "batch_matmul"
    return _run1(op, [a, b], {"transpose_a": transpose_a, "transpose_b": transpose_b})


def _getitem(x: Tensor, key: Any) -> Tensor:
    """x[key] for integers, slices (any step but 0), Ellipsis and None (a new axis)."""
    if not isinstance(key, tuple):
        key = (key,)
    shape = list(x.shape)
    # Expand the Ellipsis into full slices.
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if n_real > len(shape):
        raise IndexError(f"too many indices for a tensor of rank {len(shape)}")
    expanded: list[Any] = []
    for k in key:
        if k is Ellipsis:
            expanded.extend([slice(None)] * (len(shape) - n_real))
        else:
            expanded.append(k)
    if Ellipsis not in key:
        expanded.extend([slice(None)] * (len(shape) - n_real))
    begin, end, axes, strides = [], [], [], []
    out_shape: list[int] = []
    axis = 0
    for k in expanded:
        if k is None:
            out_shape.append(1)
            continue
        dim = shape[axis]
        if isinstance(k, Tensor):
            k = int(k)
        if isinstance(k, (int, np.integer)):
            i = int(k)
            if i < -dim or i >= dim:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {dim}")
            i %= dim
            begin.append(i), end.append(i + 1), axes.append(axis), strides.append(1)
        elif isinstance(k, slice):
            start, stop, step = k.indices(dim)
            count = len(range(start, stop, step))
            if count == 0:
                raise IndexError(f"slice {k} of axis {axis} (size {dim}) is empty; dlrt tensors "
                                 "have no empty dimension")
            if (start, stop, step) != (0, dim, 1):
                # ONNX Slice's end for a negative step below 0 is "before the first": -dim-1.
                begin.append(start), end.append(stop if stop >= 0 else -dim - 1)
                axes.append(axis), strides.append(step)
            out_shape.append(count)
        else:
            raise TypeError(f"dlrt tensors are indexed by integers, slices, ... and None; got "
                            f"{type(k).__name__}")
        axis += 1
    y = x
    if axes:
        y = _run1("slice", [x], {"begin": begin, "end": end, "axes": axes, "strides": strides})
    if list(y.shape) != out_shape:
        y = _run1("reshape", [y], {"shape": out_shape if out_shape else []})
    return y
