"""keras.datasets.fashion_mnist from Debian's dataset-fashion-mnist (nothing is downloaded).

    (x_train, y_train), (x_test, y_test) = dlrt.keras.datasets.fashion_mnist.load_data()

uint8 images (60000, 28, 28) and (10000, 28, 28), uint8 labels 0..9, as Keras returns them.
The folder is /usr/share/datasets/fashion-mnist, or DLRT_FASHION_MNIST_DIR, or `path`.
"""

from __future__ import annotations

import os

import numpy as np

from ._idx import load_split

DEFAULT_DIR = "/usr/share/datasets/fashion-mnist"


def load_data(path: str | None = None) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    folder = path or os.environ.get("DLRT_FASHION_MNIST_DIR") or DEFAULT_DIR
    try:
        return load_split(folder, "train"), load_split(folder, "t10k")
    except FileNotFoundError as e:
        raise FileNotFoundError(
            f"Fashion-MNIST is not at {folder} ({e.filename} is missing): install Debian's "
            "package (apt-get install dataset-fashion-mnist; `make` does) or pass path= to a "
            "folder with the four IDX files") from None
