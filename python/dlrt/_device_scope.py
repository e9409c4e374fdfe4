"""`with dlrt.device('/CPU:0'):`: the device scope of eager ops and of models compiled in it.

Scopes nest per thread; the innermost one wins, as in TensorFlow. The spec is any device
name TensorFlow accepts ("/CPU:0", "/device:GPU:1", "GPU:0", "/job:localhost/.../GPU:0");
it is resolved when an op runs, so a scope for a device this process does not have is no
error: under soft placement (the default) the op runs on the default device and the
placement log says so.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Iterator

_local = threading.local()


def _stack() -> list[str]:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = []
        _local.stack = stack
    return stack


def current() -> str | None:
    """The innermost device scope's spec on this thread, or None."""
    stack = _stack()
    return stack[-1] if stack else None


@contextlib.contextmanager
def device(device_name: str | None) -> Iterator[None]:
    """TensorFlow's tf.device: ops and models inside run on `device_name`.

    None (or "") clears the scope, as in TensorFlow.
    """
    if device_name is not None and not isinstance(device_name, str):
        # tf.device also takes a LogicalDevice/PhysicalDevice; their .name is the spec.
        device_name = getattr(device_name, "name", None)
        if not isinstance(device_name, str):
            raise TypeError("dlrt.device expects a device name such as '/CPU:0' or '/GPU:0'")
    stack = _stack()
    stack.append(device_name or "")
    try:
        yield
    finally:
        stack.pop()
