"""dlrt.keras.optimizers: Adam, AdamW, SGD (nn's fused in-place updates), by object or name."""

from __future__ import annotations

from typing import Any

from .. import _dlrt

_k = _dlrt.keras


class Adam(_k.Adam):
    def __init__(self, learning_rate: float = 0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7, **kwargs: Any) -> None:
        _no_extras("Adam", kwargs)
        super().__init__(float(learning_rate), float(beta_1), float(beta_2), float(epsilon))
        self._eager_lr, self._beta_1, self._beta_2, self._epsilon = (
            float(learning_rate), float(beta_1), float(beta_2), float(epsilon))


class AdamW(_k.AdamW):
    def __init__(self, learning_rate: float = 0.001, weight_decay: float = 0.004,
                 beta_1: float = 0.9, beta_2: float = 0.999, epsilon: float = 1e-7,
                 **kwargs: Any) -> None:
        _no_extras("AdamW", kwargs)
        super().__init__(float(learning_rate), float(weight_decay), float(beta_1), float(beta_2),
                         float(epsilon))
        self._eager_lr, self._beta_1, self._beta_2, self._epsilon = (
            float(learning_rate), float(beta_1), float(beta_2), float(epsilon))
        self._weight_decay = float(weight_decay)


class SGD(_k.SGD):
    def __init__(self, learning_rate: float = 0.01, momentum: float = 0.0, nesterov: bool = False,
                 **kwargs: Any) -> None:
        _no_extras("SGD", kwargs)
        super().__init__(float(learning_rate), float(momentum), bool(nesterov))
        self._eager_lr, self._momentum, self._nesterov = float(learning_rate), float(momentum), bool(nesterov)


Optimizer = _k.Optimizer


def _apply_gradients(self: Any, grads_and_vars: Any) -> None:
    """Keras' apply_gradients: one eager update of each Variable (the same update ops fit
    fuses into its step: adam_update, sgd_update)."""
    from ._eager import apply_gradients
    apply_gradients(self, list(grads_and_vars))


def _get_lr(self: Any) -> float:
    return self._eager_lr


def _set_lr(self: Any, value: float) -> None:
    self._eager_lr = float(value)


for _cls in (Adam, AdamW, SGD):
    _cls.apply_gradients = _apply_gradients
    _cls.learning_rate = property(_get_lr, _set_lr)


def _no_extras(who: str, kwargs: dict) -> None:
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"{who}: unsupported argument(s) {', '.join(kwargs)}")


def get(identifier: Any) -> Any:
    """An optimizer from an object or a name ('adam', 'adamw', 'sgd')."""
    if isinstance(identifier, _k.Optimizer):
        return identifier
    if isinstance(identifier, str):
        table = {"adam": Adam, "adamw": AdamW, "sgd": SGD}
        if identifier.lower() in table:
            return table[identifier.lower()]()
        raise ValueError(f"unknown optimizer {identifier!r}; expected one of {', '.join(table)}")
    raise TypeError(f"expected an optimizer or its name, got {identifier!r}")
