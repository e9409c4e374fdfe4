"""dlrt.keras.losses: the losses nn computes inside the training step, by object or name."""

from __future__ import annotations

from typing import Any

from .. import _dlrt

_k = _dlrt.keras


class SparseCategoricalCrossentropy(_k.SparseCategoricalCrossentropy):
    """Keras' loss. ignore_class: labels equal to it count nothing (padding); the loss is
    then the mean over the batch's other labels, as Keras' (docs/nn.md)."""

    def __init__(self, from_logits: bool = False, ignore_class: int | None = None,
                 **kwargs: Any) -> None:
        kwargs.pop("name", None), kwargs.pop("reduction", None)
        if kwargs:
            raise TypeError(f"SparseCategoricalCrossentropy: unsupported {', '.join(kwargs)}")
        super().__init__(bool(from_logits), None if ignore_class is None else int(ignore_class))


class BinaryCrossentropy(_k.BinaryCrossentropy):
    def __init__(self, from_logits: bool = False, **kwargs: Any) -> None:
        kwargs.pop("name", None), kwargs.pop("reduction", None)
        if kwargs:
            raise TypeError(f"BinaryCrossentropy: unsupported {', '.join(kwargs)}")
        super().__init__(bool(from_logits))


class MeanSquaredError(_k.MeanSquaredError):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__()


class MeanAbsoluteError(_k.MeanAbsoluteError):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__()


class Huber(_k.Huber):
    def __init__(self, delta: float = 1.0, **kwargs: Any) -> None:
        super().__init__(float(delta))


Loss = _k.Loss


def _loss_call(self: Any, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
    """loss(y_true, y_pred): the batch mean, as a tensor (recorded by a GradientTape)."""
    if sample_weight is not None:
        raise TypeError("dlrt's losses take no sample_weight")
    from ._eager import call_loss
    return call_loss(self, y_true, y_pred)


for _cls in (SparseCategoricalCrossentropy, BinaryCrossentropy, MeanSquaredError,
             MeanAbsoluteError, Huber):
    _cls.__call__ = _loss_call

_BY_NAME = {
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "binary_crossentropy": BinaryCrossentropy,
    "mean_squared_error": MeanSquaredError, "mse": MeanSquaredError,
    "mean_absolute_error": MeanAbsoluteError, "mae": MeanAbsoluteError,
    "huber": Huber, "huber_loss": Huber,
}


def get(identifier: Any) -> Any:
    """A loss from an object or Keras' name ('sparse_categorical_crossentropy', 'mse', ...)."""
    if identifier is None or isinstance(identifier, _k.Loss):
        return identifier
    if isinstance(identifier, str):
        if identifier in _BY_NAME:
            return _BY_NAME[identifier]()
        raise ValueError(f"unknown loss {identifier!r}; expected one of {', '.join(sorted(_BY_NAME))}")
    raise TypeError(f"expected a loss or its name, got {identifier!r} (dlrt computes the loss in "
                    "the compiled step: a Python function cannot be one)")
