"""Semantic segmentation by a small U-Net, on two data sets: Fashion-MNIST canvases (each pixel
labelled with the class of the item it belongs to, or background) and a fluorescence
microscopy image of cell nuclei (each pixel background, nucleus or a nucleus' boundary).

Data: Fashion-MNIST from Debian's dataset-fashion-mnist (keras.datasets.fashion_mnist). A canvas
is 32x32 and holds 1 to 3 items, each halved to 14x14 (2x2 means), at random places, later
ones covering earlier ones; an item's pixels brighter than 0.1 are its mask, labelled 1 + its
class (0 is background), so the masks come from the items' own pixels. Training canvases are
made from the training images, test canvases from the test images. (At full size, 64x64
canvases of 28x28 items, an epoch cost four times as much for the same lesson.)

Nuclei: stardist's img2d.tif / mask2d.tif (PyPI stardist 0.9.2, installed for its data; read
with keras.utils.load_img through libtiff, 16-bit), 512x512 pixels from the 2018 Data Science
Bowl with every nucleus annotated (125 of them). The mask's instance labels become three
classes, as U-Nets for nuclei use them: background, interior, and boundary (a nucleus pixel
with a 4-neighbour of another label), the boundary being what keeps touching nuclei apart.
The left 384 columns train (random 64x64 crops, flipped and turned); the right 128 columns,
never seen, are the test, predicted in 64x64 tiles.

    python examples/segmentation.py [--data both|canvases|nuclei] [--epochs 12]
                                    [--canvases 8000] [--seed 0] [--quick]
                                    [--png segmentation.png] [--nuclei-png nuclei.png]

The U-Net: two 3x3 convolutions per level (16, 32, 64 channels), max pooling down, a strided
Conv2DTranspose and an UpSampling2D up, the encoder's maps concatenated into the decoder's
(the skips), and a 1x1 convolution to 11 logits per pixel; sparse categorical cross-entropy
over the pixels. Prints the pixel accuracy and the mean IoU over the 11 classes (the stated
quality: mean IoU at least 0.5) and draws 8 test canvases, their true masks and the predicted
ones into a PNG. For the nuclei (the same U-Net on 64x64 crops, 3 classes): the test strip's
pixel accuracy, the mean IoU over the 3 classes and the IoU of nucleus pixels (interior or
boundary) against the annotation (the stated quality: at least 0.8), drawn as image, truth and
prediction.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

import dlrt as tf
from _data import package_file

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


def unet(size: int = SIZE, classes: int = CLASSES) -> tf.keras.Model:
    inputs = tf.keras.Input(shape=(size, size, 1))
    c1 = conv_block(inputs, 16)                                          # 32x32x16
    c2 = conv_block(tf.keras.layers.MaxPooling2D((2, 2))(c1), 32)       # 16x16x32
    bottom = conv_block(tf.keras.layers.MaxPooling2D((2, 2))(c2), 64)   # 8x8x64
    up2 = tf.keras.layers.Conv2DTranspose(32, (2, 2), strides=(2, 2))(bottom)
    d2 = conv_block(tf.keras.layers.Concatenate()([up2, c2]), 32)       # 16x16x32
    up1 = tf.keras.layers.Conv2D(16, (3, 3), padding="same", activation="relu")(
        tf.keras.layers.UpSampling2D((2, 2))(d2))
    d1 = conv_block(tf.keras.layers.Concatenate()([up1, c1]), 16)       # 32x32x16
    logits = tf.keras.layers.Conv2D(classes, (1, 1))(d1)
    return tf.keras.Model(inputs=inputs, outputs=logits)


def mean_iou(truth: np.ndarray, guess: np.ndarray,
             classes: int = CLASSES) -> tuple[float, list[float]]:
    ious = []
    for c in range(classes):
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


NUCLEI_TILE, NUCLEI_TRAIN_COLUMNS = 64, 384
# Background black, interior green, boundary yellow.
NUCLEI_PALETTE = np.array([[0, 0, 0], [60, 180, 75], [255, 225, 25]], np.uint8)


def nuclei() -> tuple[np.ndarray, np.ndarray]:
    """stardist's nuclei image, normalised as stardist does (1st..99.8th percentile to 0..1),
    and its 3-class mask: 0 background, 1 interior, 2 boundary."""
    folder = os.path.join("data", "images")
    img = tf.keras.utils.load_img(package_file("stardist", os.path.join(folder, "img2d.tif")),
                                  color_mode="grayscale")[..., 0].astype(np.float32)
    labels = tf.keras.utils.load_img(package_file("stardist", os.path.join(folder, "mask2d.tif")),
                                     color_mode="grayscale")[..., 0].astype(np.int64)
    lo, hi = np.percentile(img, (1, 99.8))
    img = np.clip((img - lo) / (hi - lo), 0, 1)
    padded = np.pad(labels, 1, mode="edge")
    differs = np.zeros(labels.shape, bool)
    for dy, dx in ((0, 1), (2, 1), (1, 0), (1, 2)):
        differs |= padded[dy:dy + labels.shape[0], dx:dx + labels.shape[1]] != labels
    classes = np.where(labels > 0, np.where(differs, 2, 1), 0).astype(np.int32)
    return img, classes


def nuclei_crops(img: np.ndarray, mask: np.ndarray, count: int, rng) -> tuple:
    t = NUCLEI_TILE
    x = np.empty((count, t, t, 1), np.float32)
    y = np.empty((count, t, t), np.int32)
    for n in range(count):
        r = rng.integers(0, img.shape[0] - t + 1)
        c = rng.integers(0, NUCLEI_TRAIN_COLUMNS - t + 1)
        a, b = img[r:r + t, c:c + t], mask[r:r + t, c:c + t]
        k = rng.integers(4)
        a, b = np.rot90(a, k), np.rot90(b, k)
        if rng.random() < 0.5:
            a, b = a[:, ::-1], b[:, ::-1]
        x[n, ..., 0], y[n] = a, b
    return x, y


def segment_nuclei(epochs: int, crops: int, png: str, rng) -> str:
    img, mask = nuclei()
    x, y = nuclei_crops(img, mask, crops, rng)
    net = unet(NUCLEI_TILE, 3)
    net.compile(optimizer=tf.keras.optimizers.Adam(2e-3),
                loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                metrics=["accuracy"])
    net.fit(x, y, epochs=epochs, batch_size=16, verbose=0)
    # The held-out strip (all rows, the last 128 columns) in 64x64 tiles.
    t = NUCLEI_TILE
    strip, truth = img[:, NUCLEI_TRAIN_COLUMNS:], mask[:, NUCLEI_TRAIN_COLUMNS:]
    tiles = np.stack([strip[r:r + t, c:c + t] for r in range(0, strip.shape[0], t)
                      for c in range(0, strip.shape[1], t)])[..., None]
    out = np.argmax(net.predict(tiles, batch_size=16, verbose=0), axis=-1)
    per_row = strip.shape[1] // t
    guess = np.zeros_like(truth)
    for i, tile in enumerate(out):
        r, c = (i // per_row) * t, (i % per_row) * t
        guess[r:r + t, c:c + t] = tile
    miou, _ = mean_iou(truth, guess, 3)
    fg = float(np.logical_and(truth > 0, guess > 0).sum() / np.logical_or(truth > 0, guess > 0).sum())
    pixels = float((guess == truth).mean())
    grey = np.repeat((strip[..., None] * 255).astype(np.uint8), 3, axis=-1)
    gap = np.full((strip.shape[0], 4, 3), 255, np.uint8)
    tf.keras.utils.save_img(png, np.concatenate(
        [grey, gap, NUCLEI_PALETTE[truth], gap, NUCLEI_PALETTE[guess]], axis=1))
    return (f"nuclei, the held-out 512x128 strip after {epochs} epochs on {crops} crops: pixel "
            f"accuracy {pixels:.3f}, mean IoU {miou:.3f} (3 classes), nucleus IoU {fg:.3f}; "
            f"drawn into {png}")


def segment_canvases(epochs: int, count: int, png: str, rng) -> str:
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
    draw(png, xt[:8], yt[:8], guess[:8])
    return (f"segmentation, 500 test canvases after {epochs} epochs on {count}: pixel accuracy "
            f"{pixels:.3f}, mean IoU {miou:.3f} (11 classes); masks drawn into {png}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", choices=("both", "canvases", "nuclei"), default="both")
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--canvases", type=int, default=8000)
    ap.add_argument("--nuclei-crops", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--png", default="segmentation.png")
    ap.add_argument("--nuclei-png", default="nuclei.png")
    ap.add_argument("--quick", action="store_true",
                    help="4 epochs on 3,000 canvases and 800 nuclei crops (the test suite's run)")
    a = ap.parse_args()
    epochs, count, crops = (4, 3000, 800) if a.quick else (a.epochs, a.canvases, a.nuclei_crops)
    tf.random.set_seed(a.seed)
    rng = np.random.default_rng(a.seed)
    lines = []
    if a.data in ("both", "canvases"):
        lines.append(segment_canvases(epochs, count, a.png, rng))
    if a.data in ("both", "nuclei"):
        lines.append(segment_nuclei(epochs, crops, a.nuclei_png, rng))
    # One line, the canvases' figures first: the test reads both from it.
    print("; ".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
