"""dlrt.keras.utils: set_random_seed and to_categorical."""

from __future__ import annotations

import numpy as np

from .. import random as _random


def set_random_seed(seed: int) -> None:
    """Seeds dlrt's random ops and the weights and shuffling of models compiled afterwards
    (dlrt draws no Python or NumPy random numbers of its own)."""
    _random.set_seed(seed)


def to_categorical(y: np.ndarray, num_classes: int | None = None, dtype: str = "float32") -> np.ndarray:
    y = np.asarray(y, dtype=np.int64).reshape(-1)
    n = int(num_classes if num_classes is not None else y.max() + 1)
    out = np.zeros((y.size, n), dtype=dtype)
    out[np.arange(y.size), y] = 1
    return out
