#!/usr/bin/env python3
"""Converter forms ONNX's node cases leave out, through dlrun and onnxruntime on the same
random inputs: RNN, GRU and LSTM in bidirectional and reverse directions, GRU's
linear_before_reset, LSTM peepholes and clip, non-default activations (layout 1 is left to
ONNX's batchwise node cases: onnxruntime's CPU kernels refuse it); Einsum with implicit
outputs, "...", three operands, attention-shaped contractions and f64; Pad's edge, wrap and
reflect modes on integers and with negative (cropping) pads.

    forms_vs_ort.py --dlrun build/bin/dlrun

Each model is built with onnx.helper, saved to a temporary folder, run by onnxruntime (the
reference here) and by `dlrun --input ... --save-outputs DIR`; every output must agree within
--atol + --rtol * |want| (dlrt unrolls the recurrence into matmuls, so only rounding differs).
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


def einsum(equation, *shapes, dtype=np.float32):
    rng = np.random.default_rng(len(equation))
    elem = TensorProto.DOUBLE if dtype == np.float64 else TensorProto.FLOAT
    names = [f"x{i}" for i in range(len(shapes))]
    inputs = [helper.make_tensor_value_info(n, elem, list(sh)) for n, sh in zip(names, shapes)]
    feeds = {n: rng.uniform(-1, 1, sh).astype(dtype) for n, sh in zip(names, shapes)}
    node = helper.make_node("Einsum", names, ["y"], equation=equation)
    out_shape = list(np.einsum(equation, *feeds.values()).shape)
    graph = helper.make_graph([node], "einsum_case", inputs, [helper.make_tensor_value_info("y", elem, out_shape)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m, feeds


def pad(mode, shape, pads, dtype=np.float32):
    rng = np.random.default_rng(len(mode) + sum(pads))
    elem = {np.float32: TensorProto.FLOAT, np.int32: TensorProto.INT32, np.int64: TensorProto.INT64}[dtype]
    x = rng.uniform(-9, 9, shape).astype(dtype)
    node = helper.make_node("Pad", ["x", "pads"], ["y"], mode=mode)
    want = [shape[k] + pads[k] + pads[k + len(shape)] for k in range(len(shape))]
    graph = helper.make_graph([node], "pad_case", [helper.make_tensor_value_info("x", elem, list(shape))],
                              [helper.make_tensor_value_info("y", elem, want)],
                              [helper.make_tensor("pads", TensorProto.INT64, [len(pads)], pads)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    m.ir_version = 9
    onnx.checker.check_model(m)
    return m, {"x": x}


def model(op, S, B, I, H, attrs, with_bias=True, with_initial=True, peepholes=False, layout=0):
    G = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    D = 2 if attrs.get("direction") == "bidirectional" else 1
    rng = np.random.default_rng(len(op) * 1000 + S * 100 + H)
    xdims = [S, B, I] if layout == 0 else [B, S, I]
    hdims = [D, B, H] if layout == 0 else [B, D, H]
    inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, xdims)]
    inits = [
        helper.make_tensor("W", TensorProto.FLOAT, [D, G * H, I], rng.uniform(-0.6, 0.6, D * G * H * I)),
        helper.make_tensor("R", TensorProto.FLOAT, [D, G * H, H], rng.uniform(-0.6, 0.6, D * G * H * H)),
    ]
    names = ["X", "W", "R"]
    if with_bias:
        inits.append(helper.make_tensor("B", TensorProto.FLOAT, [D, 2 * G * H], rng.uniform(-0.5, 0.5, D * 2 * G * H)))
    names.append("B" if with_bias else "")
    names.append("")  # sequence_lens
    feeds = {"X": rng.uniform(-1, 1, xdims).astype(np.float32)}
    if with_initial:
        inputs.append(helper.make_tensor_value_info("h0", TensorProto.FLOAT, hdims))
        feeds["h0"] = rng.uniform(-1, 1, hdims).astype(np.float32)
    names.append("h0" if with_initial else "")
    if op == "LSTM":
        if with_initial:
            inputs.append(helper.make_tensor_value_info("c0", TensorProto.FLOAT, hdims))
            feeds["c0"] = rng.uniform(-1, 1, hdims).astype(np.float32)
        names.append("c0" if with_initial else "")
        if peepholes:
            inits.append(helper.make_tensor("P", TensorProto.FLOAT, [D, 3 * H], rng.uniform(-0.5, 0.5, D * 3 * H)))
            names.append("P")
    while names and names[-1] == "":
        names.pop()
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = helper.make_node(op, names, outs, hidden_size=H, layout=layout, **attrs)
    ydims = [S, D, B, H] if layout == 0 else [B, S, D, H]
    outputs = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ydims)]
    outputs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, hdims) for n in outs[1:]]
    graph = helper.make_graph([node], f"{op.lower()}_case", inputs, outputs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m, feeds


RNN_CASES = [
    ("RNN reverse, Relu", "RNN", 5, 2, 3, 4, {"direction": "reverse", "activations": ["Relu"]}, {}),
    ("RNN bidirectional, no h0", "RNN", 4, 3, 2, 5, {"direction": "bidirectional"}, {"with_initial": False}),
    ("GRU bidirectional", "GRU", 6, 2, 3, 4, {"direction": "bidirectional"}, {}),
    ("GRU linear_before_reset", "GRU", 5, 3, 4, 3, {"linear_before_reset": 1}, {}),
    ("GRU reverse, lbr, no bias or h0", "GRU", 4, 2, 3, 5, {"direction": "reverse", "linear_before_reset": 1},
     {"with_bias": False, "with_initial": False}),
    ("LSTM bidirectional, peepholes", "LSTM", 5, 2, 3, 4, {"direction": "bidirectional"}, {"peepholes": True}),
    ("LSTM clip, HardSigmoid", "LSTM", 4, 2, 3, 3,
     {"clip": 0.7, "activations": ["HardSigmoid", "Tanh", "Tanh"], "activation_alpha": [0.3, 0, 0],
      "activation_beta": [0.4, 0, 0]}, {}),
    ("LSTM reverse, no bias or state", "LSTM", 3, 4, 2, 3, {"direction": "reverse"},
     {"with_bias": False, "with_initial": False}),
]
CASES = [(title, lambda a=a: model(*a[:6], **a[6])) for title, *a in RNN_CASES]
CASES += [
    ("Einsum attention scores", lambda: einsum("bhqd,bhkd->bhqk", (2, 3, 4, 5), (2, 3, 6, 5))),
    ("Einsum implicit output", lambda: einsum("ij,jk", (3, 4), (4, 5))),
    ("Einsum ... broadcast", lambda: einsum("...ij,...jk->...ik", (2, 1, 3, 4), (1, 5, 4, 2))),
    ("Einsum three operands", lambda: einsum("ij,jk,kl->il", (2, 3), (3, 4), (4, 2))),
    ("Einsum outer product, f64", lambda: einsum("i,j->ij", (3,), (4,), dtype=np.float64)),
    ("Einsum batch matmul, f64", lambda: einsum("bij,bjk->bik", (2, 3, 4), (2, 4, 2), dtype=np.float64)),
    ("Einsum sum out own label", lambda: einsum("ab,bc->c", (3, 4), (4, 5))),
    ("Pad edge, rank 3", lambda: pad("edge", (2, 3, 4), [0, 2, 1, 1, 0, 3])),
    ("Pad wrap", lambda: pad("wrap", (3, 4), [1, 4, 2, 3])),
    ("Pad reflect to index 0, i64", lambda: pad("reflect", (3, 5), [2, 4, 2, 4], np.int64)),
    ("Pad constant with cropping", lambda: pad("constant", (4, 5), [-1, 2, 1, -2])),
    ("Pad edge with cropping, i32", lambda: pad("edge", (4, 5), [2, -1, -1, 3], np.int32)),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlrun", required=True)
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-5)
    args = ap.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for k, (title, make) in enumerate(CASES):
            m, feeds = make()
            path = os.path.join(tmp, f"case{k}.onnx")
            onnx.save(m, path)
            so = ort.SessionOptions()
            so.intra_op_num_threads = 1
            want = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"]).run(None, feeds)
            out_dir = os.path.join(tmp, f"out{k}")
            cmd = [args.dlrun, path, "--save-outputs", out_dir]
            for name, value in feeds.items():
                f = os.path.join(tmp, f"case{k}_{name}.npy")
                np.save(f, value)
                cmd += ["--input", f"{name}={f}"]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                print(f"FAIL {title}: dlrun exited {r.returncode}:\n{r.stdout}{r.stderr}")
                failed += 1
                continue
            worst = 0.0
            for o, w in zip(m.graph.output, want):
                got = np.load(os.path.join(out_dir, o.name + ".npy"))
                if got.shape != w.shape:
                    print(f"FAIL {title}: {o.name} has shape {got.shape}, onnxruntime {w.shape}")
                    failed += 1
                    break
                excess = np.abs(got - w) - (args.atol + args.rtol * np.abs(w))
                worst = max(worst, float(np.max(np.abs(got - w))))
                if np.any(excess > 0):
                    i = np.unravel_index(np.argmax(excess), w.shape)
                    print(f"FAIL {title}: {o.name}{list(i)} = {got[i]}, onnxruntime {w[i]}")
                    failed += 1
                    break
            else:
                print(f"ok   {title}: max |diff| {worst:.2e}")
    print(f"{len(CASES) - failed} of {len(CASES)} converter forms agree with onnxruntime")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
