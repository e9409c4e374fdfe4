#!/usr/bin/env python3
"""Writes ONNX's own conformance cases in ONNX's backend-test layout, for dlrt-onnx-suite.

    OUT/node/<case>/model.onnx + test_data_set_<k>/input_<i>.pb, output_<j>.pb
    OUT/light/<model>/model.onnx + test_data_set_0/input_0.pb, output_0.pb

The node cases come from the `onnx` package's definitions (onnx.backend.test.case.node; each
case computes its expected outputs with NumPy when collected). The light models ship with
the package with their reference outputs; their inputs are made as ONNX's own runner makes
them (arange(n) / n, onnx/backend/test/runner generate_dummy_data). Run with the Python of the
venv tools/onnx-suite/setup-venv.sh makes (onnx pinned there).
"""
import argparse
import os
import shutil
import sys
import warnings

import numpy as np
import onnx
from onnx import numpy_helper


def write_node_cases(out):
    import onnx.backend.test.case.node as node_cases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = node_cases.collect_testcases(None)
    written = 0
    for case in cases:
        d = os.path.join(out, "node", case.name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        for k, (inputs, outputs) in enumerate(case.data_sets):
            ds = os.path.join(d, f"test_data_set_{k}")
            os.makedirs(ds, exist_ok=True)
            ok = True
            for role, values, infos in (("input", inputs, case.model.graph.input),
                                        ("output", outputs, case.model.graph.output)):
                for j, v in enumerate(values):
                    if isinstance(v, onnx.TensorProto):
                        proto = v
                    elif isinstance(v, np.ndarray) or np.isscalar(v):
                        proto = numpy_helper.from_array(np.asarray(v), infos[j].name)
                    else:  # sequences, maps, optionals: dlrt has tensors only
                        ok = False
                        break
                    with open(os.path.join(ds, f"{role}_{j}.pb"), "wb") as f:
                        f.write(proto.SerializeToString())
            if not ok:
                with open(os.path.join(d, "NOT_TENSORS"), "w") as f:
                    f.write("inputs or outputs are sequences, maps or optionals\n")
        written += 1
    return written


def write_light_models(out):
    src = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    written = 0
    for name in sorted(os.listdir(src)):
        if not name.endswith(".onnx"):
            continue
        stem = name[: -len(".onnx")]
        model = onnx.load(os.path.join(src, name))
        d = os.path.join(out, "light", stem)
        ds = os.path.join(d, "test_data_set_0")
        os.makedirs(ds, exist_ok=True)
        shutil.copy(os.path.join(src, name), os.path.join(d, "model.onnx"))
        inits = {i.name for i in model.graph.initializer}
        k = 0
        for x in model.graph.input:
            if x.name in inits:
                continue
            shape = tuple(dim.dim_value if dim.HasField("dim_value") else 1
                          for dim in x.type.tensor_type.shape.dim)
            n = int(np.prod(shape))
            value = (np.arange(n).reshape(shape) / n).astype(np.float32)
            with open(os.path.join(ds, f"input_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(value, x.name).SerializeToString())
            k += 1
        shutil.copy(os.path.join(src, f"{stem}_output_0.pb"), os.path.join(ds, "output_0.pb"))
        written += 1
    return written


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    a = p.parse_args()
    if os.path.exists(a.out):
        shutil.rmtree(a.out)
    n = write_node_cases(a.out)
    m = write_light_models(a.out)
    with open(os.path.join(a.out, "ONNX_VERSION"), "w") as f:
        f.write(onnx.__version__ + "\n")
    print(f"generate_cases: onnx {onnx.__version__}: {n} node cases, {m} light models in {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
