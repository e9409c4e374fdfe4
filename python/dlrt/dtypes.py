"""dlrt.dtypes: element types under TensorFlow's names (dlrt.float32, dlrt.int32, ...).

A DType compares equal to itself, to its name ("float32") and to the NumPy dtype of the same
type, so code written for tf.float32 or np.float32 works unchanged. bfloat16 has no NumPy
type: Tensor.numpy() of a bfloat16 tensor is float32.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _dlrt


class DType:
    """One element type: `name` (TensorFlow's), `enum` (dlrt's dlrt_dtype value)."""

    __slots__ = ("name", "enum", "_numpy")

    def __init__(self, name: str, enum: int, numpy_name: str | None) -> None:
        self.name = name
        self.enum = enum
        self._numpy = np.dtype(numpy_name) if numpy_name else None

    @property
    def as_numpy_dtype(self) -> type:
        """The NumPy scalar type (float32 for bfloat16, which NumPy has not)."""
        return (self._numpy or np.dtype("float32")).type

    @property
    def is_floating(self) -> bool:
        return self.name in ("float16", "bfloat16", "float32", "float64")

    @property
    def is_integer(self) -> bool:
        return self.name.startswith(("int", "uint"))

    @property
    def is_bool(self) -> bool:
        return self.name == "bool"

    @property
    def size(self) -> int:
        return {"float16": 2, "bfloat16": 2, "float64": 8, "int64": 8, "uint64": 8,
                "int16": 2, "uint16": 2, "int8": 1, "uint8": 1, "bool": 1}.get(self.name, 4)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DType):
            return other.enum == self.enum
        try:
            return as_dtype(other).enum == self.enum
        except (TypeError, ValueError):
            return False

    def __hash__(self) -> int:
        return hash(self.enum)

    def __repr__(self) -> str:
        return f"dlrt.{self.name}"


float32 = DType("float32", 1, "float32")
float16 = DType("float16", 2, "float16")
half = float16
bfloat16 = DType("bfloat16", 3, None)
float64 = DType("float64", 4, "float64")
double = float64
int32 = DType("int32", 5, "int32")
int64 = DType("int64", 6, "int64")
uint8 = DType("uint8", 7, "uint8")
int8 = DType("int8", 8, "int8")
bool = DType("bool", 9, "bool")  # noqa: A001 (TensorFlow's name)
uint16 = DType("uint16", 10, "uint16")
uint32 = DType("uint32", 11, "uint32")
uint64 = DType("uint64", 12, "uint64")
int16 = DType("int16", 13, "int16")

_ALL = (float32, float16, bfloat16, float64, int32, int64, uint8, int8, bool, uint16, uint32,
        uint64, int16)
_BY_ENUM = {d.enum: d for d in _ALL}
# dlrt's short names (docs/ops.md, dlprobe) too.
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME.update({_dlrt.dtype_name(d.enum): d for d in _ALL})
_BY_NAME.update({"float": float32, "half": float16, "double": float64})


def as_dtype(value: Any) -> DType:
    """A DType from a DType, a name ("float32", "f32"), a dlrt_dtype value, or a NumPy dtype."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        if value in _BY_NAME:
            return _BY_NAME[value]
        raise TypeError(f"unknown dtype name {value!r}; expected one of "
                        f"{', '.join(sorted(d.name for d in _ALL))}")
    if isinstance(value, int) and not isinstance(value, type(True)):
        if value in _BY_ENUM:
            return _BY_ENUM[value]
        raise TypeError(f"unknown dtype value {value}")
    try:
        npd = np.dtype(value)
    except TypeError as e:
        raise TypeError(f"cannot interpret {value!r} as a dtype") from e
    return _BY_ENUM[_dlrt.dtype_of_numpy(npd)]


def from_enum(enum: int) -> DType:
    return _BY_ENUM[enum]
