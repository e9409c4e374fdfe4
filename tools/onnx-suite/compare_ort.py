#!/usr/bin/env python3
"""An exported dlrt model (nn::Model::save_onnx) in onnxruntime and in dlrun, on the same rows.

    compare_ort.py --model cnn.onnx --images t10k-images-idx3-ubyte.gz --rows 1000 --dlrun build/bin/dlrun

Reads the first --rows images of an IDX file (u8, as (N, H, W, 1)), runs them through
onnxruntime (2 threads) and through dlrun (--input input=x.npy --save-outputs), and fails unless
every row's predicted class agrees and the outputs agree within --atol.
"""
import argparse
import gzip
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnxruntime as ort


def read_idx_images(path, rows):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if int.from_bytes(data[0:4], "big") != 0x803:
        raise SystemExit(f"{path}: not an IDX u8 image file")
    n, h, w = (int.from_bytes(data[4 + 4 * k: 8 + 4 * k], "big") for k in range(3))
    n = min(n, rows)
    return np.frombuffer(data, np.uint8, n * h * w, 16).reshape(n, h, w, 1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--images", required=True)
    p.add_argument("--rows", type=int, default=1000)
    p.add_argument("--dlrun", required=True)
    p.add_argument("--atol", type=float, default=1e-3)
    a = p.parse_args()
    x = read_idx_images(a.images, a.rows)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    sess = ort.InferenceSession(a.model, opts, providers=["CPUExecutionProvider"])
    want = sess.run(None, {sess.get_inputs()[0].name: x})[0]
    with tempfile.TemporaryDirectory() as d:
        np.save(os.path.join(d, "x.npy"), x)
        subprocess.run([a.dlrun, a.model, "--input", "input=" + os.path.join(d, "x.npy"),
                        "--save-outputs", d], check=True, stdout=subprocess.DEVNULL)
        got = np.load(os.path.join(d, "output.npy"))
    if got.shape != want.shape:
        raise SystemExit(f"dlrun gave {got.shape}, onnxruntime {want.shape}")
    same = int((got.argmax(1) == want.argmax(1)).sum())
    diff = float(np.abs(got - want).max())
    print(f"compare_ort: onnxruntime {ort.__version__} vs dlrun on {len(x)} rows: "
          f"{same} of {len(x)} predictions equal, max |diff| {diff:.3g}")
    return 0 if same == len(x) and diff <= a.atol else 1


if __name__ == "__main__":
    sys.exit(main())
