"""Super-resolution: ESPCN (Shi et al., 2016), a small network that sees the low-resolution image
and ends in a sub-pixel convolution (tf.nn.depth_to_space), 2x and 4x, against bicubic
upscaling.

Data: scikit-image's natural photographs (data/*.png, read with keras.utils.load_img): crops
of astronaut, coffee, motorcycle_left, camera, brick, grass and gravel train it; chelsea (the cat) is
the test image, never seen in training. As in ESPCN, the network works on the luminance
(Y of YCbCr, 0..1); a low-resolution image is the high-resolution one averaged over r x r
blocks.

    python examples/super_resolution.py [--steps 3000] [--seed 0] [--quick] [--png sr.png]

The network (on the low-resolution image): Conv2D(64, 5x5, tanh), Conv2D(32, 3x3, tanh),
Conv2D(r*r, 3x3), then depth_to_space(r), trained with Keras' custom loop (layers called on
eager tensors in a GradientTape, the sub-pixel shuffle a reshape/transpose the tape
differentiates) on 48x48 crops, mean squared error, Adam. Prints, per factor, the test
image's PSNR (dB, on Y, a border of r pixels left out) for bicubic and for ESPCN (the stated
quality: ESPCN above bicubic at both factors) and draws a crop of the cat: low resolution
(pixels repeated), bicubic, ESPCN, the original.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

import dlrt as tf
from _data import package_file

TRAIN = ["astronaut", "coffee", "motorcycle_left", "camera", "brick", "grass", "gravel"]
TEST = "chelsea"
CROP = 48


def luminance(name: str) -> np.ndarray:
    """The image's Y (0..1), cut to a multiple of 4 on each side."""
    path = package_file("skimage", os.path.join("data", f"{name}.png"))
    rgb = tf.keras.utils.img_to_array(tf.keras.utils.load_img(path)) / 255.0
    y = rgb @ np.array([0.299, 0.587, 0.114], np.float32)
    h, w = y.shape[0] // 4 * 4, y.shape[1] // 4 * 4
    return y[:h, :w].astype(np.float32)


def downscale(hr: np.ndarray, r: int) -> np.ndarray:
    """(..., H, W) -> (..., H/r, W/r): the mean of each r x r block."""
    *lead, h, w = hr.shape
    return hr.reshape(*lead, h // r, r, w // r, r).mean(axis=(-3, -1))


def bicubic(lr: np.ndarray, r: int) -> np.ndarray:
    """Keys' cubic convolution (a = -0.5), separable, pixel centres aligned, edges repeated:
    the usual bicubic upscaling, the baseline."""
    def along(x: np.ndarray, axis: int) -> np.ndarray:
        n = x.shape[axis]
        centres = (np.arange(n * r) + 0.5) / r - 0.5
        base = np.floor(centres).astype(int)
        out = 0.0
        for k in range(-1, 3):
            d = np.abs(centres - (base + k))
            weight = np.where(d <= 1, 1.5 * d**3 - 2.5 * d**2 + 1,
                              np.where(d < 2, -0.5 * d**3 + 2.5 * d**2 - 4 * d + 2, 0.0))
            idx = np.clip(base + k, 0, n - 1)
            shape = [1] * x.ndim
            shape[axis] = -1
            out = out + np.take(x, idx, axis=axis) * weight.reshape(shape)
        return out
    return along(along(lr, 0), 1).astype(np.float32)


def psnr(a: np.ndarray, b: np.ndarray, border: int) -> float:
    d = (a - b)[border:-border, border:-border]
    return float(10 * np.log10(1.0 / np.mean(np.clip(d, -1, 1) ** 2)))


class ESPCN:
    def __init__(self, r: int) -> None:
        layers = tf.keras.layers
        self.r = r
        self.layers = [layers.Conv2D(64, (5, 5), padding="same", activation="tanh"),
                       layers.Conv2D(32, (3, 3), padding="same", activation="tanh"),
                       layers.Conv2D(r * r, (3, 3), padding="same")]

    def __call__(self, lr) -> tf.Tensor:
        x = lr
        for layer in self.layers:
            x = layer(x)
        return tf.nn.depth_to_space(x, self.r)

    @property
    def weights(self) -> list:
        return [w for layer in self.layers for w in layer.trainable_weights]


def train(r: int, images: list[np.ndarray], steps: int, rng) -> ESPCN:
    net = ESPCN(r)
    optimizer = tf.keras.optimizers.Adam(1e-3)
    for step in range(steps):
        batch = []
        for _ in range(16):
            img = images[rng.integers(len(images))]
            y0, x0 = rng.integers(0, img.shape[0] - CROP + 1), rng.integers(0, img.shape[1] - CROP + 1)
            crop = img[y0:y0 + CROP, x0:x0 + CROP]
            batch.append(crop[::-1] if rng.random() < 0.5 else crop)  # flips: more crops
        hr = np.stack(batch)[..., None]
        lr = downscale(hr[..., 0], r)[..., None]
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((net(lr) - hr) ** 2)
        optimizer.apply_gradients(zip(tape.gradient(loss, net.weights), net.weights))
    return net


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--png", default="super_resolution.png")
    ap.add_argument("--quick", action="store_true", help="300 steps (the test suite's run)")
    a = ap.parse_args()
    steps = 300 if a.quick else a.steps
    tf.random.set_seed(a.seed)
    rng = np.random.default_rng(a.seed)
    images = [luminance(n) for n in TRAIN]
    hr = luminance(TEST)
    rows, report = [], []
    for r in (2, 4):
        net = train(r, images, steps, rng)
        lr = downscale(hr, r)
        cubic = bicubic(lr, r)
        ours = net(lr[None, ..., None]).numpy()[0, ..., 0]
        report.append(f"{r}x: bicubic {psnr(cubic, hr, r):.2f} dB, ESPCN {psnr(ours, hr, r):.2f} dB")
        # The cat's face, 96x96 of the original.
        y0, x0 = 60, 120
        crop = lambda im: np.clip(im[y0:y0 + 96, x0:x0 + 96], 0, 1)  # noqa: E731
        rows.append(np.concatenate([crop(np.repeat(np.repeat(lr, r, 0), r, 1)), crop(cubic),
                                    crop(ours), crop(hr)], axis=1))
    tf.keras.utils.save_img(a.png, (np.concatenate(rows, axis=0) * 255).astype(np.uint8)[..., None])
    print(f"super-resolution of {TEST} (never trained on), {steps} steps per factor: "
          f"{'; '.join(report)}; crops in {a.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
