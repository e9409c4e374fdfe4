"""Style transfer (Gatys et al., 2016): an image optimised with GradientTape so that its
features match a photograph's (content) and its features' Gram matrices match a painting's
(style), through a feature network this example trains itself.

Data: the style is Van Gogh's The Starry Night (Debian's opencv-doc, examples/data/
starry_night.jpg, read with keras.utils.load_img through libjpeg); the content is
scikit-image's chelsea (the cat). The feature network learns on 32x32 patches of 14 natural
pictures (opencv-doc's and scikit-image's, the two above among them) to tell which picture a
patch came from: a task that needs colour, edge and texture features, as an ImageNet
classifier's early layers have, in about a minute on two cores.

    python examples/style_transfer.py [--steps 300] [--size 128] [--seed 0] [--quick] [--png st.png]

The image (content size x size, RGB 0..1) starts as the photograph and is optimised with Adam:
loss = content_weight * mean((F4(x) - F4(photo))^2)
     + style_weight * sum over l=1..4 of mean((G_l(x) - G_l(painting))^2)
     + tv_weight * total variation(x),
F_l the l-th convolution block's ReLU features, G_l = F_l^T F_l / (H W) their Gram matrix
(channels x channels, where the positions are summed away: the texture, not the layout).
Prints the style loss of the photograph and of the result (the stated quality: at least 5x
lower) and the result's content distance against the painting's own (the result stays a
picture of the cat: its content distance at most half the painting's), and draws photograph,
painting and result side by side.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

import dlrt as tf
from _data import package_file

OPENCV_DATA = "/usr/share/doc/opencv-doc/examples/data"
STYLE = "starry_night.jpg"
CONTENT = "chelsea"
# The feature network's pictures: (source, name). Patches of each are one class.
PICTURES = [("opencv", "starry_night.jpg"), ("opencv", "baboon.jpg"), ("opencv", "fruits.jpg"),
            ("opencv", "butterfly.jpg"), ("opencv", "HappyFish.jpg"), ("opencv", "orange.jpg"),
            ("opencv", "building.jpg"), ("skimage", "chelsea"), ("skimage", "astronaut"),
            ("skimage", "coffee"), ("skimage", "rocket.jpg"), ("skimage", "brick"),
            ("skimage", "grass"), ("skimage", "motorcycle_left")]
PATCH = 32


def opencv_picture(name: str) -> str:
    path = os.path.join(OPENCV_DATA, name)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"{path} is not installed: this example's pictures come with Debian's opencv-doc; "
            "run `make deps` (or `sudo apt-get install opencv-doc`)")
    return path


def picture(source: str, name: str) -> np.ndarray:
    """RGB, float32 0..1, (H, W, 3)."""
    if source == "opencv":
        path = opencv_picture(name)
    else:
        path = package_file("skimage", os.path.join("data", name if "." in name else f"{name}.png"))
    return tf.keras.utils.img_to_array(tf.keras.utils.load_img(path)) / 255.0


def shrink(img: np.ndarray, size: int) -> np.ndarray:
    """The largest centred square, averaged down to about size x size (box filter), then cut."""
    s = min(img.shape[:2])
    y0, x0 = (img.shape[0] - s) // 2, (img.shape[1] - s) // 2
    img = img[y0:y0 + s, x0:x0 + s]
    f = max(1, s // size)
    n = s // f
    img = img[:n * f, :n * f].reshape(n, f, n, f, 3).mean(axis=(1, 3))
    return img[:size, :size].astype(np.float32)


def patches(images: list[np.ndarray], count: int, rng) -> tuple[np.ndarray, np.ndarray]:
    x = np.empty((count, PATCH, PATCH, 3), np.float32)
    y = rng.integers(0, len(images), count)
    for i, k in enumerate(y):
        img = images[k]
        y0, x0 = rng.integers(0, img.shape[0] - PATCH + 1), rng.integers(0, img.shape[1] - PATCH + 1)
        x[i] = img[y0:y0 + PATCH, x0:x0 + PATCH]
    return x, y.astype(np.int32)


def feature_network(classes: int) -> tf.keras.Sequential:
    L = tf.keras.layers
    return tf.keras.Sequential([
        L.Conv2D(32, (3, 3), padding="same", activation="relu", input_shape=(PATCH, PATCH, 3)),
        L.Conv2D(32, (3, 3), padding="same", activation="relu"),      # block 1
        L.MaxPooling2D((2, 2)),
        L.Conv2D(64, (3, 3), padding="same", activation="relu"),      # block 2
        L.MaxPooling2D((2, 2)),
        L.Conv2D(96, (3, 3), padding="same", activation="relu"),      # block 3
        L.MaxPooling2D((2, 2)),
        L.Conv2D(128, (3, 3), padding="same", activation="relu"),     # block 4
        L.GlobalAveragePooling2D(),
        L.Dense(classes),
    ])


# The layers whose outputs are the features F_1..F_4 (indices into model.layers).
FEATURE_LAYERS = (1, 3, 5, 7)


def features(model: tf.keras.Sequential, x) -> list:
    """F_1..F_4 of a batch of images (N, H, W, 3), each layer called eagerly (taped)."""
    out = []
    for i, layer in enumerate(model.layers[:FEATURE_LAYERS[-1] + 1]):
        x = layer(x)
        if i in FEATURE_LAYERS:
            out.append(x)
    return out


def gram(f) -> tf.Tensor:
    """(1, H, W, C) -> (C, C): sum over positions of f f^T, divided by H W."""
    _, h, w, c = f.shape
    flat = tf.reshape(f, [h * w, c])
    return tf.matmul(flat, flat, transpose_a=True) / float(h * w)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300, help="optimisation steps of the image")
    ap.add_argument("--size", type=int, default=128, help="the image's side in pixels")
    ap.add_argument("--patches", type=int, default=24000, help="training patches of the features")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--content-weight", type=float, default=1.0,
                    help="the content term's weight (1: the painting's distance costs as much as "
                         "the photograph's style loss)")
    ap.add_argument("--tv-weight", type=float, default=0.1,
                    help="the total variation's weight (1: the photograph's own costs as much as "
                         "its style loss)")
    ap.add_argument("--lr", type=float, default=0.01, help="Adam's step on the pixels (0..1)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--png", default="style_transfer.png")
    ap.add_argument("--quick", action="store_true",
                    help="6000 patches, 2 epochs, 96 pixels, 120 steps (the test suite's run)")
    a = ap.parse_args()
    if a.quick:
        a.patches, a.epochs, a.size, a.steps = 6000, 2, 96, 120
    tf.keras.utils.set_random_seed(a.seed)
    rng = np.random.default_rng(a.seed)

    # 1. The feature network, trained to tell the pictures' patches apart.
    # At about the scale the transfer sees them, so that the features are of that scale.
    images = [shrink(picture(s, n), a.size * 5 // 4) for s, n in PICTURES]
    x, y = patches(images, a.patches, rng)
    xv, yv = patches(images, 2000, rng)
    model = feature_network(len(images))
    model.compile(optimizer=tf.keras.optimizers.Adam(1e-3),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    model.fit(x, y, epochs=a.epochs, batch_size=64, verbose=0)
    _, patch_accuracy = model.evaluate(xv, yv, verbose=0)

    # 2. The targets: the photograph's content features, the painting's Gram matrices.
    photo = shrink(picture("skimage", CONTENT), a.size)[None]
    painting = shrink(picture("opencv", STYLE), a.size)[None]
    content_target = features(model, photo)[-1]
    style_targets = [gram(f) for f in features(model, painting)]

    def losses(img) -> tuple:
        fs = features(model, img)
        content = tf.reduce_mean((fs[-1] - content_target) ** 2)
        style = tf.add_n([tf.reduce_mean((gram(f) - g) ** 2) for f, g in zip(fs, style_targets)])
        return content, style

    def total_variation(img) -> tf.Tensor:
        return (tf.reduce_mean(tf.abs(img[:, 1:] - img[:, :-1])) +
                tf.reduce_mean(tf.abs(img[:, :, 1:] - img[:, :, :-1])))

    # Each term is measured against a scale of its own, so that the weights mean the same at
    # any size: style against the photograph's style loss (the term starts at 1), content
    # against the painting's content distance (a result as far from the cat as the painting
    # would cost content_weight), total variation against the photograph's own.
    _, s0 = (float(v.numpy()) for v in losses(photo))
    c_painting = float(losses(painting)[0].numpy())
    tv0 = float(total_variation(photo).numpy())
    content_weight, style_weight = a.content_weight / c_painting, 1.0 / s0
    tv_weight = a.tv_weight / tv0

    # 3. The image, optimised.
    image = tf.Variable(photo)
    optimizer = tf.keras.optimizers.Adam(a.lr)
    for _ in range(a.steps):
        with tf.GradientTape() as tape:
            content, style = losses(image)
            loss = (content_weight * content + style_weight * style +
                    tv_weight * total_variation(image))
        optimizer.apply_gradients([(tape.gradient(loss, image), image)])
        image.assign(np.clip(image.numpy(), 0.0, 1.0))

    result = image.numpy()
    style_photo, content_painting = s0, c_painting
    content_result, style_result = (float(v.numpy()) for v in losses(result))
    strip = np.concatenate([photo[0], painting[0], result[0]], axis=1)
    tf.keras.utils.save_img(a.png, (np.clip(strip, 0, 1) * 255).astype(np.uint8))
    print(f"style transfer of {CONTENT} in the style of {STYLE}, {a.size}x{a.size}, {a.steps} "
          f"steps (feature network's patch accuracy {patch_accuracy:.3f} over {len(images)} "
          f"pictures): style loss photograph {style_photo:.4g} -> result {style_result:.4g} "
          f"({style_photo / style_result:.1f}x lower); content distance result "
          f"{content_result:.4g} vs painting {content_painting:.4g} "
          f"({content_result / content_painting:.2f} of it); images in {a.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
