"""Semantic segmentation: each pixel of a canvas labelled with the class of the Fashion-MNIST item
it belongs to, or background, by a small U-Net.

Data: Fashion-MNIST from Debian's dataset-fashion-mnist (keras.datasets.fashion_mnist). A canvas
is 32x32 and holds 1 to 3 items, each halved to 14x14 (2x2 means), at random places, later
ones covering earlier ones; an item's pixels brighter than 0.1 are its mask, labelled 1 + its
class (0 is background), so the masks come from the items' own pixels. Training canvases are
made from the training images, test canvases from the test images. (At full size, 64x64
canvases of 28x28 items, an epoch cost four times as much for the same lesson.)

    python examples/segmentation.py [--epochs 12] [--canvases 8000] [--seed 0] [--quick]
                                    [--png segmentation.png]

The U-Net: two 3x3 convolutions per level (16, 32, 64 channels), max pooling down, a strided
Conv2DTranspose and an UpSampling2D up, the encoder's maps concatenated into the decoder's
(the skips), and a 1x1 convolution to 11 logits per pixel; sparse categorical cross-entropy
over the pixels. Prints the pixel accuracy and the mean IoU over the 11 classes (the stated
quality: mean IoU at least 0.5) and draws 8 test canvases, their true masks and the predicted
ones into a PNG.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import dlrt as tf

SIZE, ITEM, CLASSES = 32, 14, 11  # canvas, item side; background + the 10 classes

# One colour per class for the PNG (background black).
PALETTE = np.array([[0, 0, 0], [230, 25, 75], [60, 180, 75], [255, 225, 25], [0, 130, 200],
                    [245, 130, 48], [145, 30, 180], [70, 240, 240], [240, 50, 230],
                    [210, 245, 60], [250, 190, 190]], np.uint8)


def canvases(images: np.ndarray, labels: np.ndarray, count: int, rng) -> tuple:
    """(count, SIZE, SIZE, 1) canvases in 0..1 and their (count, SIZE, SIZE) int32 masks."""
    small = images.astype(np.float32).reshape(-1, ITEM, 2, ITEM, 2).mean(axis=(2, 4)) / 255.0
    x = np.zeros((count, SIZE, SIZE), np.float32)
    y = np.zeros((count, SIZE, SIZE), np.int32)
    for n in range(count):
        for _ in range(rng.integers(1, 4)):
            k = rng.integers(len(images))
            r, c = rng.integers(0, SIZE - ITEM + 1, 2)
            item = small[k]
            on = item > 0.1
            x[n, r:r + ITEM, c:c + ITEM][on] = item[on]
            y[n, r:r + ITEM, c:c + ITEM][on] = 1 + labels[k]
    return x[..., None], y


def conv_block(x, filters: int):
    for _ in range(2):
        x = tf.keras.layers.Conv2D(filters, (3, 3), padding="same", activation="relu")(x)
    return x


def unet() -> tf.keras.Model:
    inputs = tf.keras.Input(shape=(SIZE, SIZE, 1))
    c1 = conv_block(inputs, 16)                                          # 32x32x16
    c2 = conv_block(tf.keras.layers.MaxPooling2D((2, 2))(c1), 32)       # 16x16x32
    bottom = conv_block(tf.keras.layers.MaxPooling2D((2, 2))(c2), 64)   # 8x8x64
    up2 = tf.keras.layers.Conv2DTranspose(32, (2, 2), strides=(2, 2))(bottom)
    d2 = conv_block(tf.keras.layers.Concatenate()([up2, c2]), 32)       # 16x16x32
    up1 = tf.keras.layers.Conv2D(16, (3, 3), padding="same", activation="relu")(
        tf.keras.layers.UpSampling2D((2, 2))(d2))
    d1 = conv_block(tf.keras.layers.Concatenate()([up1, c1]), 16)       # 32x32x16
    logits = tf.keras.layers.Conv2D(CLASSES, (1, 1))(d1)
    return tf.keras.Model(inputs=inputs, outputs=logits)


def mean_iou(truth: np.ndarray, guess: np.ndarray) -> tuple[float, list[float]]:
    ious = []
    for c in range(CLASSES):
        union = np.logical_or(truth == c, guess == c).sum()
        if union:
            ious.append(float(np.logical_and(truth == c, guess == c).sum() / union))
    return float(np.mean(ious)), ious


def draw(path: str, x: np.ndarray, truth: np.ndarray, guess: np.ndarray) -> None:
    """Three rows of 8: the canvases, the true masks, the predicted masks (2-pixel gaps)."""
    n, gap = len(x), 2
    grid = np.full((3 * SIZE + 2 * gap, n * SIZE + (n - 1) * gap, 3), 255, np.uint8)
    for i in range(n):
        c = i * (SIZE + gap)
        grid[0:SIZE, c:c + SIZE] = (x[i, ..., 0, None] * 255).astype(np.uint8)
        grid[SIZE + gap:2 * SIZE + gap, c:c + SIZE] = PALETTE[truth[i]]
        grid[2 * (SIZE + gap):, c:c + SIZE] = PALETTE[guess[i]]
    tf.keras.utils.save_img(path, grid)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--canvases", type=int, default=8000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--png", default="segmentation.png")
    ap.add_argument("--quick", action="store_true",
                    help="4 epochs on 3,000 canvases (the test suite's run)")
    a = ap.parse_args()
    epochs, count = (4, 3000) if a.quick else (a.epochs, a.canvases)
    tf.random.set_seed(a.seed)
    rng = np.random.default_rng(a.seed)
    (xi, yi), (xti, yti) = tf.keras.datasets.fashion_mnist.load_data()
    x, y = canvases(xi, yi, count, rng)
    xt, yt = canvases(xti, yti, 500, rng)
    net = unet()
    net.compile(optimizer=tf.keras.optimizers.Adam(2e-3),
                loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                metrics=["accuracy"])
    net.fit(x, y, epochs=epochs, batch_size=32, verbose=0)
    guess = np.argmax(net.predict(xt, batch_size=50, verbose=0), axis=-1)
    miou, _ = mean_iou(yt, guess)
    pixels = float((guess == yt).mean())
    draw(a.png, xt[:8], yt[:8], guess[:8])
    print(f"segmentation, 500 test canvases after {epochs} epochs on {count}: pixel accuracy "
          f"{pixels:.3f}, mean IoU {miou:.3f} (11 classes); masks drawn into {a.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
