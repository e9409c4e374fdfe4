"""IDX files (MNIST's format, gzip'd or not) as NumPy arrays."""

from __future__ import annotations

import gzip
import os

import numpy as np

_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
           0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}


def read_idx(path: str) -> np.ndarray:
    """The array in IDX file `path`; ValueError naming the file for anything malformed."""
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ValueError(f"{path}: cannot read it as an IDX file ({e})") from e
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] not in _DTYPES:
        raise ValueError(f"{path}: not an IDX file (bad magic number)")
    rank = data[3]
    header = 4 + 4 * rank
    if len(data) < header:
        raise ValueError(f"{path}: truncated IDX header")
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    dtype = np.dtype(_DTYPES[data[2]])
    count = int(np.prod(dims)) if dims else 1
    if len(data) - header != count * dtype.itemsize:
        raise ValueError(f"{path}: {len(data) - header} bytes of data for dims {dims} "
                         f"({count * dtype.itemsize} expected)")
    return np.frombuffer(data, dtype=dtype, offset=header).reshape(dims).astype(dtype.newbyteorder("="))


def load_split(folder: str, prefix: str) -> tuple[np.ndarray, np.ndarray]:
    def find(name: str) -> str:
        for candidate in (name + ".gz", name):
            p = os.path.join(folder, candidate)
            if os.path.exists(p):
                return p
        raise FileNotFoundError(os.path.join(folder, name + ".gz"))
    return (read_idx(find(f"{prefix}-images-idx3-ubyte")),
            read_idx(find(f"{prefix}-labels-idx1-ubyte")))
