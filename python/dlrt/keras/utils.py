"""dlrt.keras.utils: set_random_seed, to_categorical, save_img, load_img and img_to_array."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dlrt
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


def save_img(path: str, x: Any, data_format: str | None = None, file_format: str | None = None,
             scale: bool = True, **kwargs: Any) -> None:
    """Keras' save_img: an image array (H, W) or (H, W, C), C in 1..4, as a PNG file. With
    scale=True (Keras' default) a float array is stretched from its minimum and maximum to
    0..255; otherwise the values are clipped to 0..255. PNG only (dlrt writes it with libpng)."""
    if file_format not in (None, "png", "PNG") or not str(path).lower().endswith(".png"):
        raise ValueError(f"save_img: dlrt writes PNG files only; got {path!r} "
                         f"(file_format={file_format!r})")
    if data_format == "channels_first":
        raise ValueError("save_img: channels_last images only")
    a = np.asarray(x.numpy() if hasattr(x, "numpy") else x)
    if a.ndim == 3 and a.shape[-1] not in (1, 2, 3, 4):
        raise ValueError(f"save_img: an image of {a.shape[-1]} channels; expected 1 to 4")
    if a.dtype != np.uint8:
        a = a.astype(np.float64)
        if scale:
            lo, hi = float(a.min()), float(a.max())
            a = (a - lo) * (255.0 / (hi - lo)) if hi > lo else np.zeros_like(a)
        a = np.clip(np.rint(a), 0, 255).astype(np.uint8)
    _dlrt.png_write(str(path), np.ascontiguousarray(a))


def load_img(path: str, color_mode: str = "rgb", target_size: Any = None,
             interpolation: str = "nearest", **kwargs: Any) -> np.ndarray:
    """Keras' load_img for PNG files, as a uint8 array (H, W, C) rather than a PIL image (which
    img_to_array then makes float32, as in Keras). color_mode 'grayscale', 'rgb' or 'rgba'
    (libpng converts any PNG to it). target_size is not supported (resize with dlrt's ops)."""
    if target_size is not None:
        raise TypeError("load_img: target_size is not supported by dlrt; resize the array")
    channels = {"grayscale": 1, "rgb": 3, "rgba": 4}.get(color_mode)
    if channels is None:
        raise ValueError(f"load_img: color_mode {color_mode!r}; expected 'grayscale', 'rgb' or "
                         "'rgba'")
    return _dlrt.png_read(str(path), channels)


def img_to_array(img: Any, data_format: str | None = None, dtype: str = "float32") -> np.ndarray:
    """An image (load_img's array) as a float32 (H, W, C) array of its values 0..255."""
    if data_format == "channels_first":
        raise ValueError("img_to_array: channels_last images only")
    a = np.asarray(img, dtype=dtype)
    return a[..., None] if a.ndim == 2 else a
