"""Object detection: a single-stage, anchor-free detector in CenterNet's manner (a heatmap of
object centres per class, and each object's box size read at its centre), on canvases of
Fashion-MNIST items.

Data: Fashion-MNIST from Debian's dataset-fashion-mnist. A canvas is 96x96 and holds 1 to 4
items (28x28, not overlapping) at random places; an item's box is the bounding box of its
pixels brighter than 0.1, its class the item's label. Training canvases come from the training
images, the 500 test canvases from the test images.

    python examples/detection.py [--epochs 12] [--canvases 6000] [--seed 0] [--quick]
                                 [--png detection.png]

The network sees the canvas at a quarter of its resolution in its output: a 24x24 grid of
cells. Convolutions (stride-2 and max pooling down to 24x24, then 3x3 layers of 64 channels)
end in one 1x1 convolution to 12 sigmoid channels per cell: 10 class heatmaps, each object a
Gaussian bump at its centre's cell, and the box's width and height over 96, the target at
every cell of the box. One binary cross-entropy against those soft targets trains both, with
keras' fit. Decoding: the cells that are the maximum of their 3x3 neighbourhood in a class's
heatmap, above 0.05, are detections scored by the heatmap, their box read from the size
channels at that cell. Prints the mean average precision at IoU 0.5 over the 10 classes
(VOC's all-points AP; the stated quality: mAP@0.5 at least 0.5) and draws 8 test canvases
with the true boxes (white) and the detections scoring over 0.3 (coloured by class).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import dlrt as tf

SIZE, GRID, CLASSES = 96, 24, 10
CELL = SIZE // GRID
PALETTE = np.array([[230, 25, 75], [60, 180, 75], [255, 225, 25], [0, 130, 200], [245, 130, 48],
                    [145, 30, 180], [70, 240, 240], [240, 50, 230], [210, 245, 60],
                    [250, 190, 190]], np.uint8)


def canvases(images: np.ndarray, labels: np.ndarray, count: int, rng):
    """Canvases (count, 96, 96, 1) in 0..1 and, per canvas, its boxes [(class, x0, y0, x1, y1)]
    in pixels (x1, y1 exclusive)."""
    x = np.zeros((count, SIZE, SIZE, 1), np.float32)
    boxes: list[list[tuple]] = []
    for n in range(count):
        placed: list[tuple] = []
        objects: list[tuple] = []
        for _ in range(rng.integers(1, 5)):
            for _attempt in range(20):  # a free place, else one item fewer
                r, c = (int(v) for v in rng.integers(0, SIZE - 28 + 1, 2))
                if all(r + 28 <= pr or pr + 28 <= r or c + 28 <= pc or pc + 28 <= c
                       for pr, pc in placed):
                    break
            else:
                continue
            placed.append((r, c))
            k = rng.integers(len(images))
            item = images[k].astype(np.float32) / 255.0
            x[n, r:r + 28, c:c + 28, 0] = item
            rows, cols = np.nonzero(item > 0.1)
            objects.append((int(labels[k]), c + cols.min(), r + rows.min(), c + cols.max() + 1,
                            r + rows.max() + 1))
        boxes.append(objects)
    return x, boxes


def targets(boxes: list[list[tuple]]) -> np.ndarray:
    """(count, 24, 24, 12): class heatmaps (a Gaussian bump at each centre cell, sigma from the
    box size, as CenterNet's) and the box size / 96 at every cell of the box."""
    t = np.zeros((len(boxes), GRID, GRID, CLASSES + 2), np.float32)
    gy, gx = np.mgrid[0:GRID, 0:GRID].astype(np.float32) + 0.5
    for n, objects in enumerate(boxes):
        for cls, x0, y0, x1, y1 in objects:
            cx, cy = (x0 + x1) / 2 / CELL, (y0 + y1) / 2 / CELL
            sigma = max(0.5, min(x1 - x0, y1 - y0) / CELL / 6)
            bump = np.exp(-((gx - cx) ** 2 + (gy - cy) ** 2) / (2 * sigma ** 2))
            t[n, ..., cls] = np.maximum(t[n, ..., cls], bump)
            t[n, int(cy), int(cx), cls] = 1.0
            r0, r1 = int(y0 // CELL), int((y1 - 1) // CELL) + 1
            c0, c1 = int(x0 // CELL), int((x1 - 1) // CELL) + 1
            t[n, r0:r1, c0:c1, CLASSES] = (x1 - x0) / SIZE
            t[n, r0:r1, c0:c1, CLASSES + 1] = (y1 - y0) / SIZE
    return t


def detector() -> tf.keras.Model:
    """Conv + BatchNormalization + ReLU blocks (without the normalisation the ReLUs of a run
    died in its first epoch: every output stuck near 0), down to the 24x24 grid."""
    layers = tf.keras.layers

    def block(filters, **kw):
        return [layers.Conv2D(filters, (3, 3), padding="same", **kw), layers.BatchNormalization(),
                layers.ReLU()]

    return tf.keras.Sequential([
        *block(16, strides=(2, 2), input_shape=(SIZE, SIZE, 1)),   # 48x48
        *block(32),
        layers.MaxPooling2D((2, 2)),                                # 24x24
        *block(64), *block(64), *block(64),
        layers.Conv2D(CLASSES + 2, (1, 1), activation="sigmoid"),
    ])


def decode(out: np.ndarray, threshold: float = 0.05) -> list[list[tuple]]:
    """Per canvas: detections (score, class, x0, y0, x1, y1) at the 3x3 peaks of each heatmap."""
    result = []
    for o in out:
        heat = o[..., :CLASSES]
        padded = np.pad(heat, ((1, 1), (1, 1), (0, 0)), constant_values=-1.0)
        peak = np.max([padded[dy:dy + GRID, dx:dx + GRID] for dy in range(3) for dx in range(3)],
                      axis=0)
        found = []
        for r, c, cls in zip(*np.nonzero((heat == peak) & (heat > threshold))):
            w, h = o[r, c, CLASSES] * SIZE, o[r, c, CLASSES + 1] * SIZE
            cx, cy = (c + 0.5) * CELL, (r + 0.5) * CELL
            found.append((float(heat[r, c, cls]), int(cls), cx - w / 2, cy - h / 2, cx + w / 2,
                          cy + h / 2))
        result.append(found)
    return result


def iou(a: tuple, b: tuple) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def mean_average_precision(truth: list[list[tuple]], found: list[list[tuple]]) -> float:
    """VOC's all-points AP at IoU 0.5 per class, averaged over the classes with objects."""
    aps = []
    for cls in range(CLASSES):
        gt = {n: [b[1:] for b in objs if b[0] == cls] for n, objs in enumerate(truth)}
        total = sum(len(v) for v in gt.values())
        if total == 0:
            continue
        dets = sorted(((d[0], n, d[2:]) for n, ds in enumerate(found) for d in ds if d[1] == cls),
                      key=lambda d: -d[0])
        used = {n: [False] * len(v) for n, v in gt.items()}
        tp = np.zeros(len(dets))
        for i, (_, n, box) in enumerate(dets):
            best, j_best = 0.5, -1
            for j, g in enumerate(gt[n]):
                o = iou(box, g)
                if o >= best and not used[n][j]:
                    best, j_best = o, j
            if j_best >= 0:
                used[n][j_best] = True
                tp[i] = 1
        hits = np.cumsum(tp)
        recall = hits / total
        precision = hits / np.arange(1, len(dets) + 1) if len(dets) else np.zeros(0)
        # All points: precision made monotone from the right, summed over recall steps.
        r = np.concatenate([[0.0], recall, [1.0]])
        p = np.concatenate([[0.0], precision, [0.0]])
        for i in range(len(p) - 2, -1, -1):
            p[i] = max(p[i], p[i + 1])
        steps = np.nonzero(r[1:] != r[:-1])[0]
        aps.append(float(np.sum((r[steps + 1] - r[steps]) * p[steps + 1])))
    return float(np.mean(aps))


def draw(path: str, x: np.ndarray, truth: list, found: list) -> None:
    n, gap = len(x), 4
    grid = np.full((SIZE, n * SIZE + (n - 1) * gap, 3), 255, np.uint8)

    def rectangle(img, box, colour):
        x0, y0, x1, y1 = (int(round(v)) for v in box)
        x0, y0 = max(x0, 0), max(y0, 0)
        x1, y1 = min(x1, SIZE) - 1, min(y1, SIZE) - 1
        if x1 <= x0 or y1 <= y0:
            return
        img[y0, x0:x1 + 1] = img[y1, x0:x1 + 1] = colour
        img[y0:y1 + 1, x0] = img[y0:y1 + 1, x1] = colour

    for i in range(n):
        img = np.repeat((x[i] * 160).astype(np.uint8), 3, axis=2)
        for b in truth[i]:
            rectangle(img, b[1:], np.array([255, 255, 255], np.uint8))
        for d in found[i]:
            if d[0] > 0.3:
                rectangle(img, d[2:], PALETTE[d[1]])
        grid[:, i * (SIZE + gap):i * (SIZE + gap) + SIZE] = img
    tf.keras.utils.save_img(path, grid)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--canvases", type=int, default=6000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--png", default="detection.png")
    ap.add_argument("--quick", action="store_true",
                    help="6 epochs on 3,000 canvases (the test suite's run)")
    a = ap.parse_args()
    epochs, count = (6, 3000) if a.quick else (a.epochs, a.canvases)
    tf.random.set_seed(a.seed)
    rng = np.random.default_rng(a.seed)
    (xi, yi), (xti, yti) = tf.keras.datasets.fashion_mnist.load_data()
    x, boxes = canvases(xi, yi, count, rng)
    xt, test_boxes = canvases(xti, yti, 500, rng)
    net = detector()
    net.compile(optimizer=tf.keras.optimizers.Adam(2e-3), loss="binary_crossentropy")
    net.fit(x, targets(boxes), epochs=epochs, batch_size=32, verbose=0)
    found = decode(net.predict(xt, batch_size=50, verbose=0))
    m = mean_average_precision(test_boxes, found)
    draw(a.png, xt[:8], test_boxes[:8], found[:8])
    objects = sum(len(b) for b in test_boxes)
    print(f"detection, 500 test canvases ({objects} objects) after {epochs} epochs on {count}: "
          f"mAP@0.5 {m:.3f} (10 classes); boxes drawn into {a.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
