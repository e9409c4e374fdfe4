"""keras.datasets.mnist: Keras' cache file mnist.npz, never downloaded.

    (x_train, y_train), (x_test, y_test) = dlrt.keras.datasets.mnist.load_data()

Reads `path` if it is an existing file, else ~/.keras/datasets/<path> (Keras' cache, where
TensorFlow leaves it after its own download: x_train, y_train, x_test, y_test). A folder of
the four IDX files works too. When the file is missing the error says where to put it.
"""

from __future__ import annotations

import os

import numpy as np

from ._idx import load_split


def load_data(path: str = "mnist.npz") -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    candidates = [path] if os.path.isabs(path) else [path, os.path.join(
        os.path.expanduser("~"), ".keras", "datasets", path)]
    for p in candidates:
        if os.path.isdir(p):
            return load_split(p, "train"), load_split(p, "t10k")
        if os.path.isfile(p):
            try:
                with np.load(p) as f:
                    return (f["x_train"], f["y_train"]), (f["x_test"], f["y_test"])
            except (OSError, KeyError, ValueError) as e:
                raise ValueError(f"{p}: not Keras' mnist.npz (x_train, y_train, x_test, y_test): "
                                 f"{e}") from None
    raise FileNotFoundError(
        f"MNIST is not here: looked for {' and '.join(candidates)}. dlrt downloads nothing: "
        "copy Keras' mnist.npz (from a machine where tf.keras.datasets.mnist.load_data() ran) "
        "to ~/.keras/datasets/mnist.npz, or pass load_data(path=...) to it or to a folder of "
        "MNIST's IDX files. Fashion-MNIST is installed: keras.datasets.fashion_mnist.")
