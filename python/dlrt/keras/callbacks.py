"""dlrt.keras.callbacks: Keras' callbacks for fit.

Callback is the base of your own: fit calls on_train_begin, on_epoch_begin,
on_train_batch_end, on_epoch_end and on_train_end with Keras' arguments (logs as a dict), and
`self.model` is the model being trained (set_model). EarlyStopping, LearningRateScheduler and
CSVLogger run inside nn (no Python per step); ModelCheckpoint and History are Python.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from .. import _dlrt

_k = _dlrt.keras


class Callback:
    """Keras' Callback: override the hooks you need."""

    def __init__(self) -> None:
        self.model: Any = None
        self.params: dict = {}

    def set_model(self, model: Any) -> None:
        self.model = model

    def set_params(self, params: dict) -> None:
        self.params = params

    def on_train_begin(self, logs: dict | None = None) -> None: ...
    def on_train_end(self, logs: dict | None = None) -> None: ...
    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None: ...
    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None: ...
    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None: ...


class History(Callback):
    """What fit returns: history (name -> one value per epoch), epoch, params, model."""

    def __init__(self) -> None:
        super().__init__()
        self.history: dict[str, list[float]] = {}
        self.epoch: list[int] = []


class EarlyStopping(_k.EarlyStopping):
    """Stops fit when `monitor` stops improving (model.stop_training); see nn's EarlyStopping."""

    def __init__(self, monitor: str = "val_loss", min_delta: float = 0.0, patience: int = 0,
                 verbose: int = 0, mode: str = "auto", baseline: float | None = None,
                 restore_best_weights: bool = False, start_from_epoch: int = 0) -> None:
        super().__init__(monitor, float(min_delta), int(patience), mode, baseline,
                         bool(restore_best_weights), int(start_from_epoch))


class LearningRateScheduler(_k.LearningRateScheduler):
    """schedule(epoch, lr) -> the rate for that epoch's steps (Keras' signature; a schedule of
    one argument, schedule(epoch), works too)."""

    def __init__(self, schedule: Callable[..., float], verbose: int = 0) -> None:
        try:
            import inspect
            n = len(inspect.signature(schedule).parameters)
        except (TypeError, ValueError):
            n = 2
        fn = schedule if n >= 2 else (lambda epoch, lr: schedule(epoch))
        super().__init__(lambda epoch, lr: float(fn(epoch, lr)))


class CSVLogger(_k.CSVLogger):
    """One row per epoch: epoch and every log, as Keras' CSVLogger writes them."""

    def __init__(self, filename: str, separator: str = ",", append: bool = False) -> None:
        super().__init__(str(filename), separator, bool(append))


class ModelCheckpoint(Callback):
    """Saves the weights (safetensors; or the model as ONNX when the path ends in .onnx and
    save_weights_only is False) after each epoch; `filepath` may hold Keras' format fields
    ({epoch:02d}, {val_loss:.2f}); save_best_only keeps the best by `monitor`."""

    def __init__(self, filepath: str, monitor: str = "val_loss", verbose: int = 0,
                 save_best_only: bool = False, save_weights_only: bool = False, mode: str = "auto",
                 save_freq: str = "epoch") -> None:
        super().__init__()
        if save_freq != "epoch":
            raise ValueError("ModelCheckpoint: dlrt saves once per epoch (save_freq='epoch')")
        self.filepath = str(filepath)
        self.monitor = monitor
        self.verbose = verbose
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        maximize = mode == "max" or (mode == "auto" and ("acc" in monitor or "auc" in monitor))
        self._better = (lambda a, b: a > b) if maximize else (lambda a, b: a < b)
        self.best = -math.inf if maximize else math.inf

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        logs = logs or {}
        path = self.filepath.format(epoch=epoch + 1, **logs)
        if self.save_best_only:
            value = logs.get(self.monitor)
            if value is None:
                raise KeyError(f"ModelCheckpoint: monitor '{self.monitor}' is not in the logs "
                               f"({', '.join(logs)})")
            if not self._better(value, self.best):
                return
            self.best = value
        if self.verbose:
            print(f"\nEpoch {epoch + 1}: saving model to {path}")
        if self.save_weights_only or not path.endswith(".onnx"):
            self.model.save_weights(path)
        else:
            self.model.save(path)


class LambdaCallback(Callback):
    def __init__(self, on_epoch_begin: Callable | None = None, on_epoch_end: Callable | None = None,
                 on_train_begin: Callable | None = None, on_train_end: Callable | None = None,
                 on_train_batch_end: Callable | None = None, **kwargs: Any) -> None:
        super().__init__()
        if on_epoch_begin is not None:
            self.on_epoch_begin = on_epoch_begin  # type: ignore[method-assign]
        if on_epoch_end is not None:
            self.on_epoch_end = on_epoch_end  # type: ignore[method-assign]
        if on_train_begin is not None:
            self.on_train_begin = on_train_begin  # type: ignore[method-assign]
        if on_train_end is not None:
            self.on_train_end = on_train_end  # type: ignore[method-assign]
        if on_train_batch_end is not None:
            self.on_train_batch_end = on_train_batch_end  # type: ignore[method-assign]
