"""dlrt.keras.Model and Sequential: Keras' compile / fit / evaluate / predict over nn::Model.

    model = keras.Sequential([
        keras.layers.Conv2D(32, (3, 3), activation='relu', input_shape=(28, 28, 1)),
        keras.layers.MaxPooling2D((2, 2)), keras.layers.Flatten(), keras.layers.Dense(10)])
    model.compile(optimizer='adam',
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=['accuracy'])
    history = model.fit(x_train, y_train, epochs=5, validation_data=(x_test, y_test))

The model is compiled once into dlrt graphs (forward, loss, gradients and the optimizer's
update in one step), placed by the placement engine, and trained without Python in the step
loop. `with dlrt.device('/GPU:0'):` around compile (or fit) places it; set_log_device_placement
shows where each op went.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import _device_scope, _dlrt
from .. import random as _random
from . import _eager
from . import callbacks as _callbacks
from . import layers as _layers
from . import losses as _losses
from . import optimizers as _optimizers

_k = _dlrt.keras


def _as_list(v: Any) -> list:
    if v is None:
        return []
    if isinstance(v, (list, tuple)):
        return list(v)
    if isinstance(v, dict):
        raise TypeError("dlrt models take arrays (or a list of arrays, one per input), not dicts")
    return [v]


def _arrays(v: Any, what: str) -> list[np.ndarray]:
    out = []
    for a in _as_list(v):
        if hasattr(a, "numpy") and not isinstance(a, np.ndarray):
            a = a.numpy()
        a = np.asarray(a)
        if a.dtype == object:
            raise TypeError(f"{what}: expected numeric arrays, got an object array")
        if a.dtype == np.bool_:  # masks (MultiHeadAttention's attention_mask): 0/1 floats
            a = a.astype(np.float32)
        out.append(a)
    return out


def _targets(model: Any, ys: list[np.ndarray]) -> list[np.ndarray]:
    """Targets as Keras matches them to the outputs: with a loss on dense targets (not class
    indices), an array one dim short of an output whose last dim is 1 gets that dim, so
    labels of shape (N,) train an output (N, 1) (Dense(1, activation='sigmoid') with
    binary_crossentropy, as every Keras tutorial writes it)."""
    from .losses import SparseCategoricalCrossentropy
    if isinstance(model.loss, SparseCategoricalCrossentropy):
        return ys
    shapes = model._m.output_shapes
    out = []
    for k, y in enumerate(ys):
        shape = tuple(shapes[k]) if k < len(shapes) else None
        if shape and shape[-1] == 1 and y.ndim == len(shape) and y.shape[1:] == shape[:-1]:
            y = y[..., None]
        out.append(y)
    return out


class Model:
    """keras.Model(inputs, outputs): a functional model; Sequential is its special case."""

    def __init__(self, inputs: Any = None, outputs: Any = None, name: str | None = None,
                 **kwargs: Any) -> None:
        if kwargs:
            raise TypeError(f"Model: unsupported argument(s) {', '.join(kwargs)}")
        if inputs is None or outputs is None:
            raise NotImplementedError(
                "dlrt.keras.Model needs inputs and outputs (the functional API) or Sequential; "
                "subclassed models with a Python call() are not supported (docs/python.md)")
        self._single_output = not isinstance(outputs, (list, tuple))
        self._inputs, self._outputs = _as_list(inputs), _as_list(outputs)
        self._m = _k.Model.functional(self._inputs, self._outputs, name or "functional")
        self._init_state()

    def _init_state(self) -> None:
        self.optimizer: Any = None
        self.loss: Any = None
        self.compiled_metrics: list[str] = []
        self.history: _callbacks.History | None = None
        self._compiled = False

    # ---- what it is ----
    @property
    def name(self) -> str:
        return self._m.name

    @property
    def layers(self) -> list:
        return list(self._m.layers)

    def get_layer(self, name: str | None = None, index: int | None = None) -> Any:
        if index is not None:
            return self.layers[index]
        return self._m.get_layer(name)

    @property
    def stop_training(self) -> bool:
        return self._m.stop_training

    @stop_training.setter
    def stop_training(self, value: bool) -> None:
        self._m.stop_training = bool(value)

    @property
    def trainable(self) -> bool:
        return all(layer.trainable for layer in self.layers)

    @trainable.setter
    def trainable(self, value: bool) -> None:
        for layer in self.layers:
            layer.trainable = bool(value)

    def summary(self, line_length: int | None = None, positions: Any = None,
                print_fn: Any = None, **kwargs: Any) -> None:
        text = self._m.summary()
        (print_fn or print)(text.rstrip("\n"))

    # ---- eager calls (Keras' custom training loop; keras/_eager.py) ----
    def __call__(self, inputs: Any, training: Any = None, **kwargs: Any) -> Any:
        """The model on tensors or arrays, now (recorded by an active GradientTape)."""
        from ._eager import call_model
        return call_model(self, inputs, bool(training))

    @property
    def trainable_weights(self) -> list:
        from ._eager import model_weights
        return model_weights(self, True)

    trainable_variables = trainable_weights

    @property
    def non_trainable_weights(self) -> list:
        from ._eager import model_weights
        return model_weights(self, False)

    @property
    def weights(self) -> list:
        from ._eager import model_weights
        return model_weights(self, None)

    variables = weights

    # ---- compile ----
    def compile(self, optimizer: Any = "rmsprop", loss: Any = None, metrics: Any = None,
                loss_weights: Any = None, jit_compile: Any = None, steps_per_execution: int = 1,
                **kwargs: Any) -> None:
        """Keras' compile. optimizer: an object or 'adam'/'adamw'/'sgd'; loss: an object or
        Keras' name; metrics: ['accuracy']. Compiles inside the current dlrt.device scope."""
        if kwargs:
            raise TypeError(f"compile: unsupported argument(s) {', '.join(kwargs)}")
        if optimizer == "rmsprop":
            raise ValueError("dlrt has no RMSprop yet; use optimizer='adam' or 'sgd'")
        self.optimizer = _optimizers.get(optimizer) if optimizer is not None else None
        self.loss = _losses.get(loss)
        names = []
        for m in _as_list(metrics):
            if not isinstance(m, str):
                m = getattr(m, "name", None) or type(m).__name__.lower()
            names.append("accuracy" if m in ("acc", "sparse_categorical_accuracy") else m)
        self.compiled_metrics = names
        weights = [float(w) for w in _as_list(loss_weights)]
        from .. import debugging
        self._m.compile(self.optimizer if self.loss is not None else None, self.loss, names,
                        _device_scope.current() or "", _random._global_seed or 0,
                        debugging.get_log_device_placement(), "", weights, "")
        self._compiled = True

    def _check_compiled(self, who: str) -> None:
        if not self._compiled:
            raise RuntimeError(f"You must compile your model before {who}: call model.compile()")

    # ---- fit / evaluate / predict ----
    def fit(self, x: Any = None, y: Any = None, batch_size: int | None = None, epochs: int = 1,
            verbose: Any = "auto", callbacks: Any = None, validation_split: float = 0.0,
            validation_data: Any = None, shuffle: bool = True, class_weight: Any = None,
            sample_weight: Any = None, initial_epoch: int = 0, steps_per_epoch: Any = None,
            validation_steps: Any = None, validation_batch_size: Any = None,
            validation_freq: int = 1, **kwargs: Any) -> _callbacks.History:
        """Keras' fit on NumPy arrays (or lists of them). Returns a History."""
        self._check_compiled("training/testing")
        for what, v in (("class_weight", class_weight), ("sample_weight", sample_weight),
                        ("steps_per_epoch", steps_per_epoch), ("validation_steps", validation_steps)):
            if v is not None:
                raise TypeError(f"fit: {what} is not supported by dlrt")
        if kwargs:
            raise TypeError(f"fit: unsupported argument(s) {', '.join(kwargs)}")
        if y is None and isinstance(x, tuple) and len(x) == 2:
            x, y = x
        xs, ys = _arrays(x, "x"), _targets(self, _arrays(y, "y"))
        if not xs or not ys:
            raise ValueError("fit needs x and y (dlrt's fit takes arrays, not datasets)")
        val_xs = val_ys = None
        if validation_data is not None:
            if len(validation_data) != 2:
                raise ValueError("validation_data must be (x_val, y_val)")
            val_xs = _arrays(validation_data[0], "x_val")
            val_ys = _targets(self, _arrays(validation_data[1], "y_val"))
        elif validation_split:
            if not 0.0 < validation_split < 1.0:
                raise ValueError(f"validation_split must be in (0, 1), got {validation_split}")
            # Keras takes the last fraction of the samples, before any shuffling.
            n = xs[0].shape[0]
            split = int(n * (1.0 - validation_split))
            if split < 1 or split >= n:
                raise ValueError(f"validation_split {validation_split} of {n} samples leaves one "
                                 "side empty")
            val_xs, val_ys = [a[split:] for a in xs], [a[split:] for a in ys]
            xs, ys = [a[:split] for a in xs], [a[:split] for a in ys]
        history = _callbacks.History()
        native, python = [], []
        params = {"verbose": verbose, "epochs": epochs, "steps": None}
        for cb in [history] + _as_list(callbacks):
            if isinstance(cb, _k.NativeCallback):
                native.append(cb)
            else:
                if hasattr(cb, "set_model"):
                    cb.set_model(self)
                if hasattr(cb, "set_params"):
                    cb.set_params(params)
                python.append(_PythonHooks(cb))
        verbose = 1 if verbose == "auto" else int(verbose)
        _eager.push_to_compiled(self)
        try:
            epochs_run, hist = self._m.fit(xs, ys, int(epochs), int(batch_size or 32), val_xs, val_ys,
                                          bool(shuffle), native, python, verbose, int(initial_epoch), 0)
        finally:
            _eager.pull_from_compiled(self)  # also after an interrupted fit: the steps it took
        history.epoch = list(epochs_run)
        history.history = {k: list(v) for k, v in hist.items()}
        history.params = params
        self.history = history
        return history

    def evaluate(self, x: Any = None, y: Any = None, batch_size: int | None = None,
                 verbose: Any = "auto", sample_weight: Any = None, steps: Any = None,
                 callbacks: Any = None, return_dict: bool = False, **kwargs: Any) -> Any:
        """Keras' evaluate: the loss (a float) when there are no metrics, else [loss, *metrics]
        (or a dict with return_dict=True)."""
        self._check_compiled("training/testing")
        if sample_weight is not None or steps is not None:
            raise TypeError("evaluate: sample_weight and steps are not supported by dlrt")
        _eager.push_to_compiled(self)
        logs = self._m.evaluate(_arrays(x, "x"), _targets(self, _arrays(y, "y")),
                                int(batch_size or 32))
        if verbose not in (0, "0"):
            print(" - ".join(f"{k}: {v:.4f}" for k, v in logs))
        if return_dict:
            return dict(logs)
        values = [v for _, v in logs]
        return values[0] if len(values) == 1 else values

    def predict(self, x: Any, batch_size: int | None = None, verbose: Any = "auto",
                steps: Any = None, callbacks: Any = None, **kwargs: Any) -> Any:
        """The model's outputs for x, as NumPy arrays (a list for several outputs)."""
        if not self._compiled:
            self._m.compile(None, None, [], _device_scope.current() or "", 0, False, "", [], "")
            self._compiled = True
        _eager.push_to_compiled(self)
        outs = self._m.predict(_arrays(x, "x"), int(batch_size or 32))
        return outs[0] if len(outs) == 1 else outs

    def train_on_batch(self, x: Any, y: Any = None, return_dict: bool = False, **kwargs: Any) -> Any:
        self._check_compiled("training/testing")
        _eager.push_to_compiled(self)
        logs = self._m.train_on_batch(_arrays(x, "x"), _targets(self, _arrays(y, "y")))
        _eager.pull_from_compiled(self)
        if return_dict:
            return dict(logs)
        values = [v for _, v in logs]
        return values[0] if len(values) == 1 else values

    def test_on_batch(self, x: Any, y: Any = None, return_dict: bool = False, **kwargs: Any) -> Any:
        self._check_compiled("training/testing")
        _eager.push_to_compiled(self)
        logs = self._m.test_on_batch(_arrays(x, "x"), _targets(self, _arrays(y, "y")))
        if return_dict:
            return dict(logs)
        values = [v for _, v in logs]
        return values[0] if len(values) == 1 else values

    # ---- files ----
    def save_weights(self, filepath: str, overwrite: bool = True, **kwargs: Any) -> None:
        """Weights, optimizer state, epoch and seed as one safetensors file (atomic)."""
        _eager.push_to_compiled(self)
        self._m.save_weights(str(filepath))

    def load_weights(self, filepath: str, **kwargs: Any) -> None:
        self._m.load_weights(str(filepath))
        _eager.pull_from_compiled(self)

    def save(self, filepath: str, overwrite: bool = True, input_dtype: Any = None,
             **kwargs: Any) -> None:
        """The model as ONNX (dlrt's model file; dlrt.onnx.InferenceSession and onnxruntime
        read it). Keras' .keras and .h5 formats are not written. The file's inputs are the
        model's, in order, named "input", "input_1", ...; its outputs "output", "output_1", ...
        Their types are `input_dtype`: a NumPy dtype (or its name) for every input, or a list
        of one per input; by default int64 ids for an input only Embeddings read, else
        float32."""
        path = str(filepath)
        if path.endswith((".keras", ".h5", ".hdf5")):
            raise ValueError(f"{path}: dlrt saves models as ONNX; use a .onnx path (and "
                             "save_weights for a checkpoint)")
        if input_dtype is None:
            dtypes = []  # nn decides per input: int64 ids for Embeddings, else float32
        elif isinstance(input_dtype, (list, tuple)):
            dtypes = [np.dtype(d) for d in input_dtype]
        else:
            dtypes = [np.dtype(input_dtype)]
        _eager.push_to_compiled(self)
        self._m.save_onnx(path, dtypes)

    def get_weights(self) -> list[np.ndarray]:
        """Every layer variable's value (not the optimizer's), in plan order."""
        _eager.push_to_compiled(self)
        return [a for name, a in self._m.state() if not name.startswith("optimizer")]

    def set_weights(self, weights: Sequence[Any]) -> None:
        names = [name for name, _ in self._m.state() if not name.startswith("optimizer")]
        if len(weights) != len(names):
            raise ValueError(f"set_weights: the model has {len(names)} weights, got {len(weights)}")
        self._m.set_state(list(zip(names, [np.asarray(w, dtype=np.float32) for w in weights])))
        _eager.pull_from_compiled(self)

    def count_params(self) -> int:
        return int(sum(a.size for a in self.get_weights()))


class Sequential(Model):
    """keras.Sequential([layers...]); input_shape= on the first layer (or an Input first)."""

    def __init__(self, layers: Sequence[Any] | None = None, name: str | None = None,
                 **kwargs: Any) -> None:
        if kwargs:
            raise TypeError(f"Sequential: unsupported argument(s) {', '.join(kwargs)}")
        self._single_output = True
        self._input_shape: tuple | None = None  # one sample's, once an Input gives it
        self._m = _k.Model.sequential([], name or "sequential")
        self._init_state()
        for layer in layers or []:
            self.add(layer)

    def add(self, layer: Any) -> None:
        if isinstance(layer, _k.KerasTensor):  # keras.Input(shape=...) as the first item
            layer = _layers.InputLayer(shape=tuple(d for d in layer.shape[1:]))
        if not isinstance(layer, _k.Layer):
            raise TypeError(f"Sequential.add expects a layer, got {type(layer).__name__}")
        shape = getattr(layer, "_input_shape", None)
        if shape is not None and not self._m.layers and self._input_shape is None:
            self._m.add(_layers.InputLayer(shape=shape))
            self._input_shape = tuple(shape)
        if isinstance(layer, _k.InputLayer):
            self._input_shape = tuple(layer.shape)
        self._m.add(layer)


class _PythonHooks:
    """Calls a callback's hooks with Keras' signatures (missing ones are skipped)."""

    def __init__(self, cb: Any) -> None:
        self._cb = cb
        self._history = isinstance(cb, _callbacks.History)

    def on_train_begin(self, logs: dict) -> None:
        f = getattr(self._cb, "on_train_begin", None)
        if f:
            f(logs)

    def on_epoch_begin(self, epoch: int) -> None:
        f = getattr(self._cb, "on_epoch_begin", None)
        if f:
            f(epoch)

    def on_train_batch_end(self, batch: int, logs: dict) -> None:
        f = getattr(self._cb, "on_train_batch_end", None)
        if f:
            f(batch, logs)

    def on_epoch_end(self, epoch: int, logs: dict) -> None:
        if self._history:
            self._cb.epoch.append(epoch)
            for k, v in logs.items():
                self._cb.history.setdefault(k, []).append(v)
            return
        f = getattr(self._cb, "on_epoch_end", None)
        if f:
            f(epoch, logs)

    def on_train_end(self, logs: dict) -> None:
        f = getattr(self._cb, "on_train_end", None)
        if f:
            f(logs)
