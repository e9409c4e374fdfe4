"""dlrt.onnx: run ONNX models with onnxruntime's Python call shape.

    import dlrt.onnx as ort           # instead of: import onnxruntime as ort
    sess = ort.InferenceSession("model.onnx")
    outputs = sess.run(None, {sess.get_inputs()[0].name: x})

The model is imported onto dlrt's op schema (docs/onnx.md), compiled once per input shape,
placed like any graph (providers=['CUDAExecutionProvider'] asks for the GPU,
['CPUExecutionProvider'] for the CPU; by default placement decides), and run with the
overhead of one executable run. Outputs are NumPy arrays.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from . import _dlrt
from . import dtypes as _dtypes

_ONNX_TYPE = {"float32": "tensor(float)", "float16": "tensor(float16)", "float64": "tensor(double)",
              "bfloat16": "tensor(bfloat16)", "int32": "tensor(int32)", "int64": "tensor(int64)",
              "uint8": "tensor(uint8)", "int8": "tensor(int8)", "bool": "tensor(bool)",
              "uint16": "tensor(uint16)", "uint32": "tensor(uint32)", "uint64": "tensor(uint64)",
              "int16": "tensor(int16)"}


class NodeArg:
    """onnxruntime's NodeArg: name, shape (ints, names of symbolic dims, None), type."""

    def __init__(self, name: str, dtype: int, shape: Any) -> None:
        self.name = name
        self.shape = shape
        self.type = _ONNX_TYPE.get(_dtypes.from_enum(dtype).name, "tensor(unknown)")

    def __repr__(self) -> str:
        return f"NodeArg(name='{self.name}', type='{self.type}', shape={self.shape})"


class SessionOptions:
    """Accepted for onnxruntime compatibility; dlrt reads log_severity_level < 1 as the
    placement log and graph_optimization_level 0 (ORT_DISABLE_ALL) as no graph passes."""

    def __init__(self) -> None:
        self.log_severity_level = 2
        self.graph_optimization_level = 99
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0


_PROVIDERS = {"CPUExecutionProvider": "/CPU:0", "CUDAExecutionProvider": "/GPU:0"}


def get_available_providers() -> list[str]:
    kinds = {d["device_type"] for d in _dlrt.logical_devices()}
    out = ["CUDAExecutionProvider"] if "GPU" in kinds else []
    return out + ["CPUExecutionProvider"]


class InferenceSession:
    def __init__(self, path_or_bytes: Any, sess_options: SessionOptions | None = None,
                 providers: Sequence[Any] | None = None, provider_options: Any = None,
                 **kwargs: Any) -> None:
        if not isinstance(path_or_bytes, (str, bytes)) and hasattr(path_or_bytes, "__fspath__"):
            path_or_bytes = str(path_or_bytes)
        if isinstance(path_or_bytes, bytes):
            raise TypeError("dlrt.onnx.InferenceSession takes a file path (write the bytes to a "
                            "file first)")
        device = ""
        for p in providers or []:
            name = p[0] if isinstance(p, tuple) else p
            if name not in _PROVIDERS:
                raise ValueError(f"unknown provider {name!r}; dlrt knows {', '.join(_PROVIDERS)}")
            if name == "CUDAExecutionProvider" and "CUDAExecutionProvider" not in get_available_providers():
                continue  # onnxruntime also falls back to the next provider
            device = _PROVIDERS[name]
            break
        o = sess_options or SessionOptions()
        self._s = _dlrt.Session(str(path_or_bytes), device, o.graph_optimization_level != 0,
                                True if o.log_severity_level < 1 else None)
        self._inputs = [NodeArg(*io) for io in self._s.inputs()]
        self._outputs = [NodeArg(*io) for io in self._s.outputs()]
        self._providers = [k for k, v in _PROVIDERS.items() if v == device] or get_available_providers()

    def get_inputs(self) -> list[NodeArg]:
        return list(self._inputs)

    def get_outputs(self) -> list[NodeArg]:
        return list(self._outputs)

    def get_providers(self) -> list[str]:
        return list(self._providers)

    def run(self, output_names: Sequence[str] | None, input_feed: dict[str, Any],
            run_options: Any = None) -> list[np.ndarray]:
        """The outputs named (all, in the model's order, for None) as NumPy arrays."""
        return self._s.run(None if output_names is None else list(output_names), input_feed)

    def placement_log(self) -> str:
        """Where each node of the last run's executable ran (docs/placement.md)."""
        return self._s.placement_log()
