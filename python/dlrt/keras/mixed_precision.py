"""dlrt.keras.mixed_precision: Keras' global dtype policy ("float32", "mixed_bfloat16",
"mixed_float16"); layers made after set_global_policy compute in it."""

from __future__ import annotations

from typing import Any

from .. import _dlrt


class Policy:
    def __init__(self, name: str) -> None:
        if name not in ("float32", "mixed_bfloat16", "mixed_float16"):
            raise ValueError(f"unknown policy {name!r}; expected float32, mixed_bfloat16 or "
                             "mixed_float16")
        self.name = name

    @property
    def compute_dtype(self) -> str:
        return {"mixed_bfloat16": "bfloat16", "mixed_float16": "float16"}.get(self.name, "float32")

    @property
    def variable_dtype(self) -> str:
        return "float32"

    def __repr__(self) -> str:
        return f'<Policy "{self.name}">'


def set_global_policy(policy: Any) -> None:
    name = policy.name if isinstance(policy, Policy) else str(policy)
    Policy(name)
    _dlrt.keras.set_global_policy(name)


def global_policy() -> Policy:
    return Policy(_dlrt.keras.global_policy())
