"""Face recognition, the first step of it: face or not a face, by a small CNN.

Data: scikit-image's data/lfw_subset.npy, 200 grey 25x25 crops of the LFW data set: 100 faces
and 100 patches of the same photographs' backgrounds. A stratified split keeps 60 images
(30 of each) for the test; the 140 others, and their mirror images, train the network.

    python examples/face_recognition.py [--epochs 40] [--seed 0] [--quick]

Prints the test accuracy (the stated quality: at least 0.90) and the confusion counts.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import dlrt as tf
from _data import package_file


def load(seed: int):
    images = np.load(package_file("skimage", "data/lfw_subset.npy")).astype(np.float32) / 255.0
    labels = np.repeat(np.array([1, 0], np.float32), 100)  # faces first, then non-faces
    rng = np.random.default_rng(seed)
    test = np.concatenate([rng.permutation(100)[:30], 100 + rng.permutation(100)[:30]])
    train = np.setdiff1d(np.arange(200), test)
    x = images[..., None]
    # Mirror images: a face seen the other way round is still a face.
    x_train = np.concatenate([x[train], x[train, :, ::-1]])
    y_train = np.concatenate([labels[train], labels[train]])
    # Standardised by the training images' mean and spread (raw 0..1 pixels left some seeds'
    # networks stuck predicting one class).
    mean, std = x_train.mean(), x_train.std()
    return ((x_train - mean) / std, y_train), ((x[test] - mean) / std, labels[test])


def model() -> tf.keras.Model:
    return tf.keras.Sequential([
        tf.keras.layers.Conv2D(16, (3, 3), activation="relu", input_shape=(25, 25, 1)),
        tf.keras.layers.MaxPooling2D((2, 2)),
        tf.keras.layers.Conv2D(32, (3, 3), activation="relu"),
        tf.keras.layers.MaxPooling2D((2, 2)),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(32, activation="relu"),
        tf.keras.layers.Dropout(0.3),
        tf.keras.layers.Dense(1, activation="sigmoid"),
    ])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="8 epochs (the test suite's run)")
    a = ap.parse_args()
    epochs = 8 if a.quick else a.epochs
    tf.random.set_seed(a.seed)
    (x, y), (xt, yt) = load(a.seed)
    net = model()
    net.compile(optimizer=tf.keras.optimizers.Adam(1e-3), loss="binary_crossentropy",
                metrics=["accuracy"])
    net.fit(x, y, epochs=epochs, batch_size=16, verbose=0)
    p = net.predict(xt, verbose=0)[:, 0]
    guess = (p > 0.5).astype(np.float32)
    accuracy = float((guess == yt).mean())
    tp = int(((guess == 1) & (yt == 1)).sum())
    tn = int(((guess == 0) & (yt == 0)).sum())
    print(f"face / non-face, {len(xt)} held-out crops after {epochs} epochs: "
          f"accuracy {accuracy:.3f} (faces found {tp}/30, non-faces rejected {tn}/30)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
