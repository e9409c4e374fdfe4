#!/usr/bin/env python3
"""Opsets 24-28 of the default domain through dlrun, against onnxruntime (or NumPy where
onnxruntime lacks the op), and the changes dlrt refuses, refused by name.

    opsets_vs_ort.py --dlrun build/bin/dlrun

onnx 1.23 writes opset 28 by default. The suite's venv pins onnx 1.18 (its node cases stop at
opset 23), so the models here are built with its onnx.helper and declare the newer opset and
IR version themselves: the file is the same protobuf onnx 1.23 writes (the format did not
change; only the operator set did). What changed between opsets 23 and 28 and what dlrt does
with each change is listed in docs/onnx.md ("Opsets 24-28").
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

IR_VERSION = 11  # onnxruntime 1.32 reads up to 11; onnx 1.23 writes 12, the same format


def make(nodes, inputs, outputs, opset, inits=()):
    graph = helper.make_graph(nodes, "opset_case", inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = IR_VERSION
    return m


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def cnn_opset28():
    """A small CNN whose middle uses opset 28's SpaceToDepth mode (CRD). (Not Swish: onnxruntime
    1.32 runs Swish only in a model of opset 24, by its function body.)"""
    rng = np.random.default_rng(28)
    w1 = rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32)
    w2 = rng.normal(0, 0.2, (4, 8, 3, 3)).astype(np.float32)
    fc = rng.normal(0, 0.1, (4 * 16 * 16, 10)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("SpaceToDepth", ["r1"], ["s"], blocksize=2, mode="CRD"),   # (2,32,8,8)
        helper.make_node("Sigmoid", ["s"], ["sg"]),
        helper.make_node("Mul", ["s", "sg"], ["sw"]),
        helper.make_node("DepthToSpace", ["sw"], ["d"], blocksize=2, mode="CRD"),   # (2,8,16,16)
        helper.make_node("SpaceToDepth", ["d"], ["s2"], blocksize=2),               # DCR default
        helper.make_node("DepthToSpace", ["s2"], ["d2"], blocksize=2),
        helper.make_node("Conv", ["d2", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Flatten", ["c2"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", "fc"], ["g"]),
        helper.make_node("Softmax", ["g"], ["y"], axis=-1),
    ]
    inits = [helper.make_tensor("w1", TensorProto.FLOAT, w1.shape, w1.ravel()),
             helper.make_tensor("w2", TensorProto.FLOAT, w2.shape, w2.ravel()),
             helper.make_tensor("fc", TensorProto.FLOAT, fc.shape, fc.ravel())]
    m = make(nodes, [f32("x", [2, 3, 16, 16])], [f32("y", [2, 10])], 28, inits)
    return m, {"x": rng.normal(size=(2, 3, 16, 16)).astype(np.float32)}


def space_to_depth_crd():
    """SpaceToDepth CRD alone, so its channel order is checked, not only its inverse."""
    x = np.arange(2 * 3 * 4 * 6, dtype=np.float32).reshape(2, 3, 4, 6)
    m = make([helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2, mode="CRD")],
             [f32("x", [2, 3, 4, 6])], [f32("y", [2, 12, 2, 3])], 28)
    return m, {"x": x}


def swish_opset24():
    x = np.random.default_rng(24).normal(size=(3, 5)).astype(np.float32) * 4
    m = make([helper.make_node("Swish", ["x"], ["y"], alpha=0.7)], [f32("x", [3, 5])],
             [f32("y", [3, 5])], 24)
    return m, {"x": x}


def swiglu_opset28():
    rng = np.random.default_rng(280)
    a, b = (rng.normal(size=(2, 6)).astype(np.float32) for _ in range(2))
    m = make([helper.make_node("SwiGLU", ["a", "b"], ["y"], alpha=1.5)],
             [f32("a", [2, 6]), f32("b", [2, 6])], [f32("y", [2, 6])], 28)
    want = a / (1 + np.exp(-1.5 * a)) * b
    return m, {"a": a, "b": b}, [want]


# Models onnxruntime can check.
AGAINST_ORT = [("a CNN at opset 28: SpaceToDepth/DepthToSpace CRD and DCR", cnn_opset28),
               ("SpaceToDepth CRD (opset 28)", space_to_depth_crd),
               ("Swish at opset 24", swish_opset24)]
# Models checked against NumPy: onnxruntime 1.32 has no kernel for them.
AGAINST_NUMPY = [("SwiGLU at opset 28", swiglu_opset28)]


def refused():
    """(title, model, feeds, words the error must name)."""
    q = np.zeros((1, 2, 4, 8), np.float32)
    qkv = [f32(n, [1, 2, 4, 8]) for n in "QKV"]
    lens = helper.make_tensor_value_info("lens", TensorProto.INT64, [1])
    return [
        ("Attention's nonpad_kv_seqlen (opset 24)",
         make([helper.make_node("Attention", ["Q", "K", "V", "", "", "", "lens"], ["y"])],
              qkv + [lens], [f32("y", [1, 2, 4, 8])], 24),
         {"Q": q, "K": q, "V": q, "lens": np.array([4], np.int64)}, "nonpad_kv_seqlen"),
        ("Attention's sliding window (opset 25)",
         make([helper.make_node("Attention", ["Q", "K", "V"], ["y"], left_window_size=2)],
              qkv, [f32("y", [1, 2, 4, 8])], 25),
         {"Q": q, "K": q, "V": q}, "left_window_size"),
        ("Mod of floats with fmod = 0 (opset 28)",
         make([helper.make_node("Mod", ["a", "b"], ["y"])], [f32("a", [3]), f32("b", [3])],
              [f32("y", [3])], 28),
         {"a": np.ones(3, np.float32), "b": np.ones(3, np.float32)}, "fmod = 0"),
        ("opset 29, newer than dlrt reads",
         make([helper.make_node("Relu", ["x"], ["y"])], [f32("x", [3])], [f32("y", [3])], 29),
         {"x": np.ones(3, np.float32)}, "opsets 7-28"),
    ]


def dlrun(exe, tmp, k, m, feeds):
    path = os.path.join(tmp, f"case{k}.onnx")
    onnx.save(m, path)
    out_dir = os.path.join(tmp, f"out{k}")
    cmd = [exe, path, "--save-outputs", out_dir]
    for name, value in feeds.items():
        f = os.path.join(tmp, f"case{k}_{name}.npy")
        np.save(f, value)
        cmd += ["--input", f"{name}={f}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    outs = [os.path.join(out_dir, o.name + ".npy") for o in m.graph.output]
    return r, path, outs


def compare(title, m, got_files, want, atol, rtol):
    worst = 0.0
    for o, f, w in zip(m.graph.output, got_files, want):
        got = np.load(f)
        if got.shape != w.shape:
            print(f"FAIL {title}: {o.name} has shape {got.shape}, expected {w.shape}")
            return False
        worst = max(worst, float(np.max(np.abs(got - w))))
        if np.any(np.abs(got - w) > atol + rtol * np.abs(w)):
            print(f"FAIL {title}: max |diff| {worst:.2e}")
            return False
    print(f"ok   {title}: max |diff| {worst:.2e}")
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlrun", required=True)
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-5)
    a = ap.parse_args()
    failed, total, k = 0, 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for title, build in AGAINST_ORT + AGAINST_NUMPY:
            total += 1
            k += 1
            made = build()
            m, feeds = made[0], made[1]
            r, path, outs = dlrun(a.dlrun, tmp, k, m, feeds)
            if r.returncode != 0:
                print(f"FAIL {title}: dlrun exited {r.returncode}:\n{r.stdout}{r.stderr}")
                failed += 1
                continue
            if len(made) == 3:
                want = made[2]
            else:
                so = ort.SessionOptions()
                so.intra_op_num_threads = 1
                want = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"]).run(None, feeds)
            failed += not compare(title, m, outs, want, a.atol, a.rtol)
        for title, m, feeds, words in refused():
            total += 1
            k += 1
            r, _, _ = dlrun(a.dlrun, tmp, k, m, feeds)
            said = r.stdout + r.stderr
            if r.returncode == 0 or words not in said:
                print(f"FAIL {title}: expected a refusal naming '{words}'; dlrun exited "
                      f"{r.returncode}:\n{said}")
                failed += 1
            else:
                print(f"ok   {title}: refused ({said.strip().splitlines()[-1][:120]})")
    print(f"{total - failed} of {total} opset 24-28 cases as expected")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
