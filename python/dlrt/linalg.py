"""dlrt.linalg: tf.linalg's matmul (2-D: `matmul`; batched: `batch_matmul`)."""

from ._api import matmul

__all__ = ["matmul"]
