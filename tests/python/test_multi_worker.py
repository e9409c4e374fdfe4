"""The article's MultiWorkerMirroredStrategy listing under `mpirun -np 2` on this host: both
workers train the same model in sync (each prints the same losses)."""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from conftest import have_fashion_mnist

MPIRUN = shutil.which("mpirun")

LISTING = textwrap.dedent("""
    import os
    import dlrt as tf

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    print('Number of replicas:', strategy.num_replicas_in_sync)

    (x, y), _ = tf.keras.datasets.fashion_mnist.load_data()
    x, y = x[:2048].reshape(-1, 28, 28, 1) / 255.0, y[:2048]

    def build_and_compile_cnn_model():
      model = tf.keras.Sequential([
          tf.keras.layers.Conv2D(32, 3, activation='relu', input_shape=(28, 28, 1)),
          tf.keras.layers.MaxPooling2D(),
          tf.keras.layers.Flatten(),
          tf.keras.layers.Dense(64, activation='relu'),
          tf.keras.layers.Dense(10)
      ])
      model.compile(
          loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
          optimizer=tf.keras.optimizers.SGD(learning_rate=0.01),
          metrics=['accuracy'])
      return model

    with strategy.scope():
      multi_worker_model = build_and_compile_cnn_model()
    history = multi_worker_model.fit(x, y, epochs=2, batch_size=64, verbose=0)
    rank = tf.distribute.cluster_resolver()["task_id"]
    print(f"RANK{rank}", history.history["loss"])
""")


@pytest.mark.skipif(MPIRUN is None or not have_fashion_mnist(),
                    reason="needs mpirun (openmpi-bin) and dataset-fashion-mnist")
def test_two_workers_under_mpirun(tmp_path):
    script = tmp_path / "listing.py"
    script.write_text(LISTING)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               DLRT_COLLECTIVE_TIMEOUT="30")
    p = subprocess.run([MPIRUN, "-np", "2", "--oversubscribe", "--mca",
                        "btl_vader_single_copy_mechanism", "none", "--output-filename",
                        str(tmp_path / "out"), "-x", "PYTHONPATH",
                        sys.executable, str(script)], capture_output=True, text=True, env=env,
                       timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    # --output-filename: each rank's stdout in its own file (out/1/rank.<n>/stdout).
    lines = []
    for rank in (0, 1):
        lines += (tmp_path / "out" / "1" / f"rank.{rank}" / "stdout").read_text().splitlines()
    assert lines.count("Number of replicas: 2") == 2, lines
    losses = {}
    for line in lines:
        if line.startswith("RANK"):
            rank, values = line.split(" ", 1)
            losses[rank] = eval(values)
    assert set(losses) == {"RANK0", "RANK1"}, lines
    assert losses["RANK0"] == losses["RANK1"]  # one model, trained in sync
    assert losses["RANK0"][1] < losses["RANK0"][0]
