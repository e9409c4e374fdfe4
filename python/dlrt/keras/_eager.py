"""Keras layers, models, losses and optimizers on eager tensors: Keras' custom training loop.

    with dlrt.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_weights)
    optimizer.apply_gradients(zip(grads, model.trainable_weights))

A layer called on a tensor runs nn's own Layer::call, compiled once per input shape
(python/src/keras_eager.cc), on its weights: dlrt.Variables made from the layer's parameter
specs with nn's initializers the first time the layer is called or the model's weights are
asked for. A GradientTape records the call like an op and differentiates the same ops.
Dropout in training runs dlrt.nn.dropout (so a tape sees the mask it drew).

The compiled model (fit, evaluate, predict) keeps its weights inside its graphs; the eager
weights are copied there before it runs when they changed (push_to_compiled), and back after
it trained (pull_from_compiled), so the two are one model to the user.
"""

from __future__ import annotations

from typing import Any

from .. import _dlrt
from .. import _tensor
from .. import random as _random
from .._api import convert_to_tensor, cast
from .._tensor import Tensor
from .._variable import Variable

_k = _dlrt.keras


def _as_float(x: Any) -> Tensor:
    t = convert_to_tensor(x)
    return cast(t, "float32") if t.dtype.name == "float64" else t


def layer_weights(layer: Any, input_shapes: list[tuple]) -> list[Variable]:
    """The layer's eager weights, made on the first call (params() order)."""
    weights = getattr(layer, "_eager_weights", None)
    if weights is None:
        made = _k.layer_weights(layer, [list(s) for s in input_shapes], _random._global_seed or 0)
        weights = [Variable(Tensor(h), trainable=trainable, name=f"{layer.name}/{name}")
                   for name, h, trainable in made]
        layer._eager_weights = weights
    return weights


def call_layer(layer: Any, inputs: Any, training: bool = False) -> Tensor:
    many = isinstance(inputs, (list, tuple))
    xs = [_as_float(x) if not _takes_ids(layer) else convert_to_tensor(x)
          for x in (inputs if many else [inputs])]
    if type(layer).__name__ == "Dropout":
        from .. import nn as _nn
        return _nn.dropout(xs[0], getattr(layer, "_rate")) if training else xs[0]
    weights = layer_weights(layer, [tuple(x.shape[1:]) for x in xs])
    composite = _composite(layer, len(xs), bool(training))
    # The Variables themselves: a GradientTape watches trainable ones.
    outs, updates = _tensor._run_composite(composite, xs + weights)
    for k, value in zip(updates, outs[1:]):
        weights[k].assign(value)  # BatchNormalization's moving statistics
    return outs[0]


def _takes_ids(layer: Any) -> bool:
    return type(layer).__name__ == "Embedding"


def _composite(layer: Any, n: int, training: bool) -> Any:
    cache = layer.__dict__.setdefault("_eager_calls", {})
    key = (n, training)
    if key not in cache:
        c = _k.layer_call(layer, n, training, _random._global_seed or 0)
        c._layer = layer  # the composite does not own the layer: this keeps it alive
        cache[key] = c
    return cache[key]


# ---- models ----
def model_layers_in_order(model: Any) -> list:
    return [layer for layer in model.layers if not isinstance(layer, _k.InputLayer)]


def call_model(model: Any, inputs: Any, training: bool = False) -> Any:
    if model._m.is_sequential:
        x = inputs
        for layer in model_layers_in_order(model):
            x = call_layer(layer, x, training)
        return x
    xs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if len(xs) != len(model._inputs):
        raise ValueError(f"the model takes {len(model._inputs)} inputs, got {len(xs)}")
    memo: dict = {(t.node_key, t.index): x for t, x in zip(model._inputs, xs)}

    def value(t: Any) -> Tensor:
        key = (t.node_key, t.index)
        if key not in memo:
            ins = [value(i) for i in t.inputs]
            memo[key] = call_layer(t.layer, ins if len(ins) > 1 else ins[0], training)
        return memo[key]
    outs = [value(t) for t in model._outputs]
    return outs[0] if model._single_output else outs


def build_model(model: Any) -> None:
    """Makes every layer's weights from the shapes the model knows (no data needed)."""
    if model._m.is_sequential:
        if model._input_shape is None:
            if all(getattr(layer, "_eager_weights", None) is not None or
                   type(layer).__name__ == "Dropout" for layer in model_layers_in_order(model)):
                return  # made by an earlier call
            raise ValueError("the model's input shape is unknown: give the first layer "
                             "input_shape=, or call the model on data first")
        shape = model._input_shape
        for layer in model_layers_in_order(model):
            if type(layer).__name__ != "Dropout":
                layer_weights(layer, [shape])
            shape = tuple(_k.layer_output_shape(layer, [list(shape)]))
        return
    seen = set()

    def visit(t: Any) -> None:
        if t.layer is None or (t.node_key, t.index) in seen:
            return
        seen.add((t.node_key, t.index))
        for i in t.inputs:
            visit(i)
        if type(t.layer).__name__ != "Dropout":
            layer_weights(t.layer, [tuple(i.shape[1:]) for i in t.inputs])
    for t in model._outputs:
        visit(t)


def model_weights(model: Any, trainable: bool | None) -> list[Variable]:
    build_model(model)
    out = []
    for layer in model_layers_in_order(model):
        for w in getattr(layer, "_eager_weights", None) or []:
            if trainable is None or w.trainable == trainable:
                out.append(w)
    return out


# ---- losses ----
def call_loss(loss: Any, y_true: Any, y_pred: Any) -> Tensor:
    c = loss.__dict__.get("_eager_call")
    if c is None:
        c = loss._eager_call = _k.loss_call(loss)
    yt = convert_to_tensor(y_true)
    yp = _as_float(y_pred)
    outs, _ = _tensor._run_composite(c, [yt, yp])
    return outs[0]


# ---- optimizers ----
def apply_gradients(opt: Any, grads_and_vars: Any) -> None:
    from .. import raw_ops
    from .._api import constant, zeros_like
    slots = opt.__dict__.setdefault("_eager_slots", {})
    opt._eager_iterations = getattr(opt, "_eager_iterations", 0) + 1
    lr = constant(float(opt._eager_lr))
    kind = type(opt).__name__
    for g, v in grads_and_vars:
        if g is None:
            continue
        if not isinstance(v, Variable):
            raise TypeError(f"apply_gradients updates Variables, got {type(v).__name__}")
        state = slots.get(id(v))
        if kind in ("Adam", "AdamW"):
            if state is None:
                state = slots[id(v)] = [zeros_like(v.value()), zeros_like(v.value())]
            if kind == "AdamW" and opt._weight_decay:
                v.assign(v.value() - v.value() * (float(opt._eager_lr) * opt._weight_decay))
            p, m, s = raw_ops.adam_update(v.value(), g, state[0], state[1],
                                          constant(float(opt._eager_iterations)), lr,
                                          beta1=opt._beta_1, beta2=opt._beta_2,
                                          epsilon=opt._epsilon)
            state[0], state[1] = m, s
            v.assign(p)
        elif kind == "SGD":
            if state is None:
                state = slots[id(v)] = [zeros_like(v.value())]
            p, vel = raw_ops.sgd_update(v.value(), g, state[0], lr, momentum=opt._momentum,
                                        nesterov=opt._nesterov)
            state[0] = vel
            v.assign(p)
        else:
            raise NotImplementedError(f"apply_gradients for {kind}")


# ---- one model: the eager weights and the compiled model's ----
def _eager_vars(model: Any) -> list[Variable]:
    out = []
    for layer in model_layers_in_order(model):
        out.extend(getattr(layer, "_eager_weights", None) or [])
    return out


def _state_name(v: Variable) -> str:
    return v.name[:-2] if v.name.endswith(":0") else v.name


def push_to_compiled(model: Any) -> None:
    """Eager weights changed since the last sync go into the compiled model."""
    seen = model.__dict__.setdefault("_synced", {})
    changed = [v for v in _eager_vars(model) if seen.get(id(v)) != v._version]
    if not changed:
        return
    model._m.set_state([(_state_name(v), v.numpy()) for v in changed])
    for v in changed:
        seen[id(v)] = v._version


def pull_from_compiled(model: Any) -> None:
    """After the compiled model trained (or loaded weights): the eager weights take its values."""
    variables = {_state_name(v): v for v in _eager_vars(model)}
    if not variables:
        return
    seen = model.__dict__.setdefault("_synced", {})
    for name, value in model._m.state():
        v = variables.get(name)
        if v is not None:
            from .._api import constant
            v.assign(constant(value))
            seen[id(v)] = v._version
