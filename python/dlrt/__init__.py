"""dlrt: a deep-learning runtime whose device backends are plugins, from Python.

Written so that TensorFlow code runs with one changed line:

    import dlrt as tf
    print(tf.config.list_physical_devices())
    with tf.device('/CPU:0'):
        c = tf.matmul(tf.constant([[1.0, 2.0]]), tf.constant([[3.0], [4.0]]))
    model = tf.keras.Sequential([...]); model.compile(...); model.fit(x, y)

What is here: tf.config, tf.debugging, tf.device, eager tensors and every op of dlrt's schema
(dlrt.raw_ops; TensorFlow's names at the top level and in dlrt.math, dlrt.nn, dlrt.random,
dlrt.linalg), tf.errors' exception classes, GradientTape, and dlrt.keras over dlrt's compiled
nn library. docs/python.md lists what differs from TensorFlow.
"""

from __future__ import annotations

from . import _dlrt
from . import errors
from . import dtypes
from .dtypes import (DType, bfloat16, bool, double, float16, float32, float64, half, int8,  # noqa: A004
                     int16, int32, int64, uint8, uint16, uint32, uint64, as_dtype)
from ._tensor import Tensor, TensorShape
from ._variable import Variable
from ._device_scope import device
from . import config
from . import debugging
from . import raw_ops
from ._api import *  # noqa: F401,F403  (TensorFlow's top-level functions)
from . import _api
from . import math
from . import linalg
from . import nn
from . import random
from ._tape import GradientTape

__version__: str = _dlrt.version()

# At exit the runtime lets go of its context; the context (and its plugins: MPI is finalized
# there) goes with the last tensor or model, as the interpreter tears down.
import atexit as _atexit
_atexit.register(_dlrt.release_runtime)

# The one-input elementwise functions TensorFlow also has at the top level.
for _name in ("abs", "exp", "sqrt", "square", "sign", "sin", "cos", "tanh", "sigmoid", "round",
              "floor", "ceil"):
    globals()[_name] = getattr(_api, _name)
del _name

newaxis = None


def __getattr__(name: str):
    # Heavier submodules load on first use (import dlrt stays quick).
    import importlib
    if name in ("keras", "distribute", "onnx", "probe", "tune"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'dlrt' has no attribute '{name}'")
