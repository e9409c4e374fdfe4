"""dlrt.random: tf.random's normal and uniform (Philox on the device, as the schema's ops).

Seeds: every call draws fresh numbers, seeded or not: the runtime advances a counter on every
op run, as TensorFlow's eager random ops advance theirs. A program that runs the same ops
with the same seeds draws the same numbers on every run of it. set_seed(s) seeds the calls
that give no seed of their own from s.
"""

from __future__ import annotations

import itertools
from typing import Any, Sequence

from . import dtypes as _dtypes
from ._api import _shape_list
from ._tensor import Tensor, _run1

_global_seed: int | None = None
_counter = itertools.count(1)


def set_seed(seed: int) -> None:
    """Seeds later calls without a seed of their own from `seed` (as tf.random.set_seed)."""
    global _global_seed, _counter
    _global_seed = int(seed)
    _counter = itertools.count(1)


def _seed(seed: int | None) -> int:
    if seed is not None:
        return int(seed)
    if _global_seed is None:
        return 0  # the runtime's per-run offset makes each call fresh
    return (_global_seed * 1_000_003 + next(_counter)) & 0x7FFFFFFF


def normal(shape: Sequence[int], mean: float = 0.0, stddev: float = 1.0, dtype: Any = _dtypes.float32,
           seed: int | None = None, name: str | None = None) -> Tensor:
    return _run1("random_normal", [], {"shape": _shape_list(shape), "mean": float(mean),
                                       "stddev": float(stddev), "seed": _seed(seed),
                                       "dtype": _dtypes.as_dtype(dtype).enum})


def uniform(shape: Sequence[int], minval: float = 0.0, maxval: float = 1.0, dtype: Any = _dtypes.float32,
            seed: int | None = None, name: str | None = None) -> Tensor:
    return _run1("random_uniform", [], {"shape": _shape_list(shape), "minval": float(minval),
                                        "maxval": float(maxval), "seed": _seed(seed),
                                        "dtype": _dtypes.as_dtype(dtype).enum})
