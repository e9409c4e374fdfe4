"""Hyperparameter search beyond the anchors' built-in APIs: dlrt.tune's RandomSearch (KerasTuner's
shape) running its trials concurrently, one per logical device, measured against the same
trials one after another on the whole CPU.

Data: Fashion-MNIST from Debian's dataset-fashion-mnist: 12,000 training images, 2,000 of the
test images to validate on.

    python examples/tuner.py [--trials 8] [--epochs 3] [--seed 0] [--quick]
    mpirun -np 2 python examples/tuner.py [--devices 1] [--directory DIR]   # over workers
    python examples/tuner.py --sequential                                   # its baseline

The search space: a CNN's filter count (8-32), dense units (32-256), dropout (0-0.5) and
learning rate (1e-4-1e-2, log). This process splits its CPU into two logical devices
(dlrt.config.set_logical_device_configuration) and runs the search, a trial on each device
at a time; a second process (--sequential) runs the same trials (the same seed draws the same
configurations) on the whole, unsplit CPU one after another. Early stopping is off in both so
that both do the same work. Prints the best configuration and both times (the stated
quality: the best trial's val_accuracy at least 0.8; the speed-up is what it is, written down).

Under mpirun (dlrt.distribute.cluster_resolver() finds several workers) the trials are shared
out between the workers through the tuner's folder (--directory, which every worker must see:
one host's /tmp, or a shared filesystem on a cluster), each worker running its trials on
--devices logical CPU devices (1 by default); every worker prints the same best trial, and
worker 0 the time. The sequential baseline is then a separate run (--sequential), since a
process started from an mpirun worker would take the launcher's variables and count itself a
worker.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import dlrt as tf


def data():
    (x, y), (xt, yt) = tf.keras.datasets.fashion_mnist.load_data()
    scale = lambda a: (a[..., None] / 255.0).astype(np.float32)  # noqa: E731
    return (scale(x[:12000]), y[:12000]), (scale(xt[:2000]), yt[:2000])


def build(hp) -> tf.keras.Model:
    layers = tf.keras.layers
    model = tf.keras.Sequential([
        layers.Conv2D(hp.Int("filters", 8, 32, step=8), (3, 3), activation="relu",
                      input_shape=(28, 28, 1)),
        layers.MaxPooling2D((2, 2)),
        layers.Flatten(),
        layers.Dense(hp.Int("units", 32, 256, step=32), activation="relu"),
        layers.Dropout(hp.Float("dropout", 0.0, 0.5)),
        layers.Dense(10),
    ])
    model.compile(optimizer=tf.keras.optimizers.Adam(hp.Float("lr", 1e-4, 1e-2, sampling="log")),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def search(trials: int, epochs: int, seed: int, devices, **folder) -> tuple[float, object]:
    (x, y), validation = data()
    tuner = tf.tune.RandomSearch(build, objective="val_accuracy", max_trials=trials, seed=seed,
                                 devices=devices, early_stopping=False, **folder)
    start = time.perf_counter()
    tuner.search(x, y, epochs=epochs, batch_size=64, validation_data=validation)
    return time.perf_counter() - start, tuner


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=8)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="4 trials of 1 epoch (the test suite's run)")
    ap.add_argument("--sequential", action="store_true",
                    help="the baseline: the trials one after another on the whole CPU")
    ap.add_argument("--devices", type=int, default=None,
                    help="logical CPU devices per process (2 alone, 1 per mpirun worker)")
    ap.add_argument("--directory", default=os.path.join(tempfile.gettempdir(),
                                                         "dlrt-tuner-example"),
                    help="the tuner's folder under mpirun (every worker must see it)")
    a = ap.parse_args()
    trials, epochs = (4, 1) if a.quick else (a.trials, a.epochs)
    if a.sequential:
        seconds, tuner = search(trials, epochs, a.seed, ["/CPU:0"], over_workers=False)
        best = tuner._ranked()[0]
        print(json.dumps({"seconds": seconds, "best": best.score}))
        return 0

    workers = tf.distribute.cluster_resolver()
    rank, n_workers = workers["task_id"], workers["num_workers"]
    n_devices = a.devices or (1 if n_workers > 1 else 2)
    if n_devices > 1:
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(n_devices)])
    devices = [d.name for d in tf.config.list_logical_devices("CPU")]
    if n_workers > 1:
        concurrent, tuner = search(trials, epochs, a.seed, devices, directory=a.directory,
                                   project_name="tuner", overwrite=True)
        best = tuner._ranked()[0]
        if rank == 0:
            tuner.results_summary(3)
        ran = sum(t.worker == rank for t in tuner.trials)
        print(f"worker {rank}: ran {ran} of {trials} trials; best trial {best.trial_id} "
              f"val_accuracy {best.score:.3f} {best.hyperparameters.values}")
        if rank == 0:
            print(f"tuner, {trials} trials of {epochs} epochs: {n_workers} workers x "
                  f"{len(devices)} logical device(s) {concurrent:.1f} s (compare: python "
                  f"examples/tuner.py --sequential --trials {trials} --epochs {epochs} "
                  f"--seed {a.seed})")
        return 0 if not any(t.error for t in tuner.trials) else 1

    concurrent, tuner = search(trials, epochs, a.seed, devices)
    failed = [t.error for t in tuner.trials if t.error]
    if failed:
        print("failed trials:", failed, file=sys.stderr)
        return 1
    tuner.results_summary(3)
    args = [sys.executable, __file__, "--sequential", "--trials", str(trials), "--epochs",
            str(epochs), "--seed", str(a.seed)]
    baseline = json.loads(subprocess.run(args, capture_output=True, text=True,
                                         check=True).stdout.strip().splitlines()[-1])
    best = tuner._ranked()[0]
    print(f"tuner, {trials} trials of {epochs} epochs: best val_accuracy {best.score:.3f} "
          f"{best.hyperparameters.values}; concurrent on {len(devices)} logical CPUs "
          f"{concurrent:.1f} s, sequential on the whole CPU {baseline['seconds']:.1f} s: "
          f"speed-up {baseline['seconds'] / concurrent:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
