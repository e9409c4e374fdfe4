"""dlrt.keras.utils: set_random_seed, to_categorical, save_img, load_img (PNG, JPEG, TIFF) and
img_to_array."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dlrt
from .. import errors as _errors
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
    """Keras' save_img: an image array (H, W) or (H, W, C) as a PNG (C in 1..4, libpng) or JPEG
    file (C of 1 or 3, libjpeg; `quality=` 1..100, 95 unless given), chosen by file_format or
    else by the name's extension, as Keras does. With scale=True (Keras' default) a float array
    is stretched from its minimum and maximum to 0..255; otherwise the values are clipped to
    0..255."""
    kind = _file_kind(str(path), file_format)
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
    if kind == "png":
        _dlrt.png_write(str(path), np.ascontiguousarray(a))
        return
    if a.ndim == 3 and a.shape[-1] == 1:
        a = a[..., 0]
    _dlrt.jpeg_write(str(path), np.ascontiguousarray(a), int(kwargs.get("quality", 95)))


def _file_kind(path: str, file_format: str | None) -> str:
    """'png' or 'jpeg' from file_format (Keras/PIL's names) or else the extension."""
    name = (file_format or path.rsplit(".", 1)[-1]).lower()
    kind = {"png": "png", "jpg": "jpeg", "jpeg": "jpeg"}.get(name)
    if kind is None:
        raise ValueError(f"save_img: dlrt writes PNG and JPEG files; got {path!r} "
                         f"(file_format={file_format!r})")
    return kind


def load_img(path: str, color_mode: str = "rgb", target_size: Any = None,
             interpolation: str = "nearest", **kwargs: Any) -> np.ndarray:
    """Keras' load_img for PNG, JPEG and TIFF files (told apart by their first bytes, not the
    name), as an array (H, W, C) rather than a PIL image (which img_to_array then makes float32,
    as in Keras): uint8 for PNG and JPEG; a TIFF keeps its own sample type (16-bit microscopy
    and label masks stay exact). color_mode 'grayscale', 'rgb' or 'rgba' (libpng and libjpeg
    convert to it; a JPEG has no alpha, so 'rgba' gives it an opaque one; a grey TIFF is
    repeated for 'rgb'). target_size is not supported (resize with dlrt's ops)."""
    if target_size is not None:
        raise TypeError("load_img: target_size is not supported by dlrt; resize the array")
    channels = {"grayscale": 1, "rgb": 3, "rgba": 4}.get(color_mode)
    if channels is None:
        raise ValueError(f"load_img: color_mode {color_mode!r}; expected 'grayscale', 'rgb' or "
                         "'rgba'")
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except FileNotFoundError as e:
        raise _errors.NotFoundError(f"load_img: {path}: no such file") from e
    if head[:4] in (b"II*\x00", b"MM\x00*"):
        return _tiff(str(path), channels)
    if head.startswith(b"\xff\xd8\xff"):
        rgb = _dlrt.jpeg_read(str(path), min(channels, 3))
        if channels == 4:
            rgb = np.concatenate([rgb, np.full(rgb.shape[:2] + (1,), 255, np.uint8)], axis=-1)
        return rgb
    return _dlrt.png_read(str(path), channels)


def _tiff(path: str, channels: int) -> np.ndarray:
    """A TIFF's first image with its own sample type (uint16 microscopy and label masks stay
    exact), its samples matched to color_mode: grey repeated for 'rgb'/'rgba' (as PIL converts
    it), an opaque alpha added to RGB for 'rgba'; anything else is refused by name."""
    a = _dlrt.tiff_read(path)
    have = a.shape[-1]
    if have == channels:
        return a
    if have == 1 and channels in (3, 4):
        a = np.repeat(a, 3, axis=-1)
        have = 3
    if have == 3 and channels == 4:
        opaque = np.iinfo(a.dtype).max if a.dtype.kind in "ui" else 1.0
        return np.concatenate([a, np.full(a.shape[:2] + (1,), opaque, a.dtype)], axis=-1)
    if have == channels:
        return a
    names = {1: "grayscale", 3: "rgb", 4: "rgba"}
    raise ValueError(f"load_img: {path} has {a.shape[-1]} samples per pixel; color_mode "
                     f"{names[channels]!r} cannot be made from them")


def img_to_array(img: Any, data_format: str | None = None, dtype: str = "float32") -> np.ndarray:
    """An image (load_img's array) as a float32 (H, W, C) array of its values 0..255."""
    if data_format == "channels_first":
        raise ValueError("img_to_array: channels_last images only")
    a = np.asarray(img, dtype=dtype)
    return a[..., None] if a.ndim == 2 else a
