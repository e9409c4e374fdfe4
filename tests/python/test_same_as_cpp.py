"""A Python fit and the C++ sample (samples/mnist_cnn) give the same loss curve for the same
data, seed and device: the package adds no arithmetic of its own."""

import csv
import os
import subprocess

import numpy as np
import pytest

import dlrt as tf
from conftest import FASHION, have_fashion_mnist

BUILD = os.environ.get("DLRT_BUILD_DIR", "")
SAMPLE = os.path.join(BUILD, "bin", "mnist_cnn")


@pytest.mark.skipif(not have_fashion_mnist() or not os.path.exists(SAMPLE),
                    reason="needs dataset-fashion-mnist and the build's mnist_cnn")
def test_python_fit_matches_the_cpp_sample(tmp_path):
    log = tmp_path / "cpp.csv"
    p = subprocess.run([SAMPLE, "--epochs", "2", "--limit", "2048", "--seed", "7", "--device",
                        "CPU:0", "--csv-log", str(log)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    with open(log) as f:
        cpp = list(csv.DictReader(f))

    (x, y), (xt, yt) = tf.keras.datasets.fashion_mnist.load_data(FASHION)
    # The sample feeds the u8 images as they are (nn scales them); so does this.
    x, y = x[:2048, ..., None], y[:2048]
    xt = xt[..., None]
    tf.keras.utils.set_random_seed(7)
    with tf.device('/CPU:0'):
        model = tf.keras.Sequential([
            tf.keras.layers.Conv2D(32, (3, 3), activation='relu', input_shape=(28, 28, 1)),
            tf.keras.layers.MaxPooling2D((2, 2)),
            tf.keras.layers.Conv2D(64, (3, 3), activation='relu'),
            tf.keras.layers.MaxPooling2D((2, 2)),
            tf.keras.layers.Conv2D(64, (3, 3), activation='relu'),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(64, activation='relu'),
            tf.keras.layers.Dense(10)])
        model.compile(optimizer=tf.keras.optimizers.Adam(1e-3),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=['accuracy'])
    history = model.fit(x, y, epochs=2, batch_size=64, validation_data=(xt, yt), verbose=0)
    for key in ("loss", "accuracy", "val_loss", "val_accuracy"):
        np.testing.assert_allclose(history.history[key], [float(r[key]) for r in cpp],
                                   rtol=1e-6, err_msg=key)
