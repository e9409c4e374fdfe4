"""What the Python package costs over C++: three figures, each measured side by side in one run.

    PYTHONPATH=build/python build/venv-onnx/bin/python tools/dlbench/python_overhead.py \
        --build build [--epochs 2] [--repeats 200] [--rounds 5] [--skip-epoch]

1. The reference CNN's training epoch from Python (dlrt.keras fit on Fashion-MNIST's 60,000
   images, batch 64, CPU:0) against dlbench's C++ epoch (`dlbench train`), both timed from
   on_epoch_begin to on_epoch_end (median of the epochs). The issue's bar: within 3%.
2. An eager `reduce_sum(random.normal([1000, 1000]))` against onnxruntime's Python call of the
   same computation (an ONNX model RandomNormal -> ReduceSum), same threads.
3. A batch-1 InferenceSession.run of the exported reference CNN: dlrt.onnx against
   onnxruntime, same model file and threads.

2 and 3 alternate dlrt and onnxruntime in --rounds rounds of --repeats calls each and report
every round's medians and ratio, and the median of the ratios: on a shared machine the speed
of both moves by up to 2x from minute to minute, and a ratio taken within one round is what
survives that. --skip-epoch leaves out 1 (and trains no model for 3: a fresh one is exported).

Needs onnxruntime and onnx for 2 and 3 (the ONNX suite's venv, build/venv-onnx, has them; the
figures are skipped with a note otherwise). Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def median_time(fn, repeats: int) -> float:
    for _ in range(min(10, repeats)):
        fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def paired_rounds(ours, theirs, repeats: int, rounds: int) -> dict:
    """Median call times of `ours` and `theirs`, alternated in rounds; ratios per round."""
    per_round = []
    for _ in range(rounds):
        a = median_time(ours, repeats)
        b = median_time(theirs, repeats)
        per_round.append({"dlrt_ms": 1e3 * a, "onnxruntime_ms": 1e3 * b, "ratio": a / b})
    ratios = [r["ratio"] for r in per_round]
    return {"rounds": per_round, "ratio_median": statistics.median(ratios),
            "ratio_min": min(ratios), "ratio_max": max(ratios)}


def cpp_epoch(build: str, epochs: int, threads: int) -> float:
    out = subprocess.run([os.path.join(build, "bin", "dlbench"), "train", "--device", "CPU:0",
                          "--epochs", str(epochs), "--threads", str(threads)],
                         capture_output=True, text=True, check=True).stdout
    doc = json.loads(out[out.index("{"):])
    return statistics.median(doc["epoch_seconds"])


def python_epoch(epochs: int) -> tuple[float, object]:
    import dlrt as tf
    (x, y), _ = tf.keras.datasets.fashion_mnist.load_data()
    x = x[..., None]
    times: list[float] = []

    class Timer(tf.keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.t = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            times.append(time.perf_counter() - self.t)

    model = reference_cnn()
    with tf.device("/CPU:0"):
        model.compile(optimizer="adam",
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
    model.fit(x, y, epochs=epochs, batch_size=64, verbose=0, callbacks=[Timer()])
    return statistics.median(times), model


def eager_vs_ort(repeats: int, rounds: int, threads: int) -> dict:
    import dlrt as tf
    ours = lambda: tf.reduce_sum(tf.random.normal([1000, 1000])).numpy()  # noqa: E731
    try:
        import onnx  # noqa: F401
        import onnxruntime as ort
        from onnx import TensorProto, helper
    except ImportError as e:
        return {"dlrt_ms": 1e3 * median_time(ours, repeats), "onnxruntime": f"skipped: {e}"}
    graph = helper.make_graph(
        [helper.make_node("RandomNormal", [], ["r"], shape=[1000, 1000], dtype=TensorProto.FLOAT),
         helper.make_node("ReduceSum", ["r"], ["s"], keepdims=0)],
        "normal_sum", [], [helper.make_tensor_value_info("s", TensorProto.FLOAT, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return paired_rounds(ours, lambda: sess.run(None, {}), repeats, rounds)


def reference_cnn():
    """The reference CNN (the article's), built on CPU:0, not compiled."""
    import dlrt as tf
    with tf.device("/CPU:0"):
        model = tf.keras.Sequential([
            tf.keras.layers.Conv2D(32, (3, 3), activation="relu", input_shape=(28, 28, 1)),
            tf.keras.layers.MaxPooling2D((2, 2)),
            tf.keras.layers.Conv2D(64, (3, 3), activation="relu"),
            tf.keras.layers.MaxPooling2D((2, 2)),
            tf.keras.layers.Conv2D(64, (3, 3), activation="relu"),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(64, activation="relu"),
            tf.keras.layers.Dense(10)])
    return model


def session_vs_ort(model, repeats: int, rounds: int, threads: int) -> dict:
    import dlrt.onnx as dort
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "cnn.onnx")
        model.save(path)
        x = np.random.default_rng(0).random((1, 28, 28, 1), dtype=np.float32)
        s = dort.InferenceSession(path, providers=["CPUExecutionProvider"])
        name = s.get_inputs()[0].name
        ours = lambda: s.run(None, {name: x})  # noqa: E731
        try:
            import onnxruntime as ort
        except ImportError as e:
            return {"dlrt_ms": 1e3 * median_time(ours, repeats), "onnxruntime": f"skipped: {e}"}
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        o = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        oname = o.get_inputs()[0].name
        np.testing.assert_allclose(ours()[0], o.run(None, {oname: x})[0], rtol=1e-4, atol=1e-5)
        return paired_rounds(ours, lambda: o.run(None, {oname: x}), repeats, rounds)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--skip-epoch", action="store_true")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    doc = {"date": time.strftime("%Y-%m-%d"), "cpu": cpu_model(), "threads": a.threads}
    if a.skip_epoch:
        model = reference_cnn()
    else:
        cpp = cpp_epoch(a.build, a.epochs, a.threads)
        py, model = python_epoch(a.epochs)
        doc["cnn_epoch"] = {"cpp_dlbench_s": cpp, "python_fit_s": py,
                            "ratio_python_over_cpp": py / cpp}
    doc["eager_reduce_sum_normal"] = eager_vs_ort(a.repeats, a.rounds, a.threads)
    doc["batch1_session"] = session_vs_ort(model, a.repeats, a.rounds, a.threads)
    print(json.dumps(doc, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
