"""dlrt.debugging: tf.debugging's placement log.

set_log_device_placement(True) prints, on stderr, one line per eager op as TensorFlow does
("Executing op matmul in device /job:localhost/replica:0/task:0/device:CPU:0"), followed by
the reason in brackets ([explicit], [follows-input], [default-priority],
[fallback:device-missing: ...]); models compiled afterwards print the core's placement log,
one line per placed node (docs/placement.md).
"""

from __future__ import annotations

from . import _dlrt


def set_log_device_placement(enabled: bool) -> None:
    _dlrt.set_log_device_placement(bool(enabled))


def get_log_device_placement() -> bool:
    return _dlrt.log_device_placement()
