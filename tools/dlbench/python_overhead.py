"""What the Python package costs over C++: three figures, each measured side by side in one run.

    PYTHONPATH=build/python build/venv-onnx/bin/python tools/dlbench/python_overhead.py \
        --build build [--epochs 2] [--repeats 200]

1. The reference CNN's training epoch from Python (dlrt.keras fit on Fashion-MNIST's 60,000
   images, batch 64, CPU:0) against dlbench's C++ epoch (`dlbench train`), both timed from
   on_epoch_begin to on_epoch_end (median of the epochs). The issue's bar: within 3%.
2. An eager `reduce_sum(random.normal([1000, 1000]))` against onnxruntime's Python call of the
   same computation (an ONNX model RandomNormal -> ReduceSum), same threads.
3. A batch-1 InferenceSession.run of the exported reference CNN: dlrt.onnx against
   onnxruntime, same model file and threads.

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
        model.compile(optimizer="adam",
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
    model.fit(x, y, epochs=epochs, batch_size=64, verbose=0, callbacks=[Timer()])
    return statistics.median(times), model


def eager_vs_ort(repeats: int, threads: int) -> dict:
    import dlrt as tf
    out: dict = {}
    out["dlrt_eager_ms"] = 1e3 * median_time(
        lambda: tf.reduce_sum(tf.random.normal([1000, 1000])).numpy(), repeats)
    try:
        import onnx
        import onnxruntime as ort
        from onnx import TensorProto, helper
    except ImportError as e:
        out["onnxruntime"] = f"skipped: {e}"
        return out
    graph = helper.make_graph(
        [helper.make_node("RandomNormal", [], ["r"], shape=[1000, 1000], dtype=TensorProto.FLOAT),
         helper.make_node("ReduceSum", ["r"], ["s"], keepdims=0)],
        "normal_sum", [], [helper.make_tensor_value_info("s", TensorProto.FLOAT, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    out["onnxruntime_ms"] = 1e3 * median_time(lambda: sess.run(None, {}), repeats)
    out["ratio_dlrt_over_ort"] = out["dlrt_eager_ms"] / out["onnxruntime_ms"]
    return out


def session_vs_ort(model, repeats: int, threads: int) -> dict:
    import dlrt.onnx as dort
    out: dict = {}
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "cnn.onnx")
        model.save(path)
        x = np.random.default_rng(0).random((1, 28, 28, 1), dtype=np.float32)
        s = dort.InferenceSession(path, providers=["CPUExecutionProvider"])
        name = s.get_inputs()[0].name
        out["dlrt_batch1_ms"] = 1e3 * median_time(lambda: s.run(None, {name: x}), repeats)
        try:
            import onnxruntime as ort
        except ImportError as e:
            out["onnxruntime"] = f"skipped: {e}"
            return out
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        o = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        oname = o.get_inputs()[0].name
        out["onnxruntime_batch1_ms"] = 1e3 * median_time(lambda: o.run(None, {oname: x}), repeats)
        out["ratio_dlrt_over_ort"] = out["dlrt_batch1_ms"] / out["onnxruntime_batch1_ms"]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    doc = {"date": time.strftime("%Y-%m-%d"), "cpu": cpu_model(), "threads": a.threads}
    cpp = cpp_epoch(a.build, a.epochs, a.threads)
    py, model = python_epoch(a.epochs)
    doc["cnn_epoch"] = {"cpp_dlbench_s": cpp, "python_fit_s": py, "ratio_python_over_cpp": py / cpp}
    doc["eager_reduce_sum_normal"] = eager_vs_ort(a.repeats, a.threads)
    doc["batch1_session"] = session_vs_ort(model, a.repeats, a.threads)
    print(json.dumps(doc, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
