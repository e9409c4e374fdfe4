#!/usr/bin/env python3
"""dlbench infer --compare-ort's onnxruntime side (infer.cc runs it; not meant to be run alone).

For each batch folder dlbench wrote (DIR/b<batch>/ with model.onnx and in<k>.npy, one file per
model input in the model's order), this loads the model into an onnxruntime InferenceSession
with the same thread count as dlrt (intra-op threads; one inter-op thread, sequential
execution, every graph optimisation on: onnxruntime's best CPU configuration), runs it the way
dlrt was run (warm-up runs, then timed runs until both a minimum count and a minimum time are
reached), writes the outputs as DIR/b<batch>/ort_out<k>.npy for dlbench to compare, and prints
one JSON object on stdout.
"""
import argparse
import json
import os
import time

import numpy as np
import onnxruntime as ort


def time_runs(run, warmup, min_runs, min_seconds, max_runs):
    for _ in range(warmup):
        run()
    samples = []
    start = time.perf_counter()
    while len(samples) < max_runs and (len(samples) < min_runs or
                                       time.perf_counter() - start < min_seconds):
        t0 = time.perf_counter()
        run()
        samples.append((time.perf_counter() - t0) * 1e3)
    return samples


def percentile(sorted_ms, q):
    # The nearest-rank percentile, as infer.cc computes it.
    k = max(0, min(len(sorted_ms) - 1, int(np.ceil(q / 100.0 * len(sorted_ms))) - 1))
    return sorted_ms[k]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--batches", required=True, help="comma-separated batch sizes")
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--min-runs", type=int, default=10)
    ap.add_argument("--min-seconds", type=float, default=2.0)
    ap.add_argument("--max-runs", type=int, default=10000)
    a = ap.parse_args()

    result = {"onnxruntime": ort.__version__, "threads": a.threads, "batches": []}
    for batch in [int(b) for b in a.batches.split(",")]:
        folder = os.path.join(a.dir, "b%d" % batch)
        so = ort.SessionOptions()
        so.intra_op_num_threads = a.threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.log_severity_level = 3  # errors only: its warnings (unused initializers) are noise here
        t0 = time.perf_counter()
        sess = ort.InferenceSession(os.path.join(folder, "model.onnx"), so,
                                    providers=["CPUExecutionProvider"])
        feeds = {}
        for k, i in enumerate(sess.get_inputs()):
            feeds[i.name] = np.load(os.path.join(folder, "in%d.npy" % k))
        outputs = sess.run(None, feeds)
        first_ms = (time.perf_counter() - t0) * 1e3
        for k, o in enumerate(outputs):
            np.save(os.path.join(folder, "ort_out%d.npy" % k), np.ascontiguousarray(o))
        ms = sorted(time_runs(lambda: sess.run(None, feeds), a.warmup, a.min_runs,
                              a.min_seconds, a.max_runs))
        mean = sum(ms) / len(ms)
        result["batches"].append({
            "batch": batch, "runs": len(ms), "load_and_first_run_ms": first_ms,
            "p50_ms": percentile(ms, 50), "p99_ms": percentile(ms, 99), "mean_ms": mean,
            "min_ms": ms[0], "images_per_s": batch * 1e3 / mean})
    print(json.dumps(result))


if __name__ == "__main__":
    main()
