"""dlrt.keras.layers: Keras' layers, with Keras' names and arguments, over dlrt's nn library.

Each class here *is* the nn layer (a Python subclass of the bound C++ class): a model holds
the very object you made, so `layer.name`, `layer.trainable` and `model.layers` behave as in
Keras. Every layer also takes Keras' common keywords: `name`, `trainable`, `dtype` (a policy
name such as "mixed_bfloat16"), and `input_shape` (on the first layer of a Sequential).
Arguments nn does not have raise TypeError naming them, rather than being ignored.
"""

from __future__ import annotations

from typing import Any, Sequence

from .. import _dlrt

_k = _dlrt.keras

__all__ = [
    "Layer", "Input", "InputLayer", "Dense", "Conv2D", "Conv2DTranspose", "DepthwiseConv2D",
    "MaxPooling2D", "MaxPool2D", "AveragePooling2D", "AvgPool2D", "GlobalAveragePooling2D",
    "GlobalMaxPooling2D", "Flatten", "Reshape", "Dropout", "BatchNormalization",
    "LayerNormalization", "Add", "Concatenate", "Embedding", "MultiHeadAttention", "LSTM", "GRU",
    "Activation", "ReLU", "Softmax", "LeakyReLU", "ZeroPadding2D", "UpSampling2D",
]

Layer = _k.Layer
KerasTensor = _k.KerasTensor

_COMMON = ("name", "trainable", "dtype", "input_shape", "input_dim", "batch_input_shape")


def _pair(v: Any, what: str) -> tuple[int, int]:
    if isinstance(v, int):
        return (v, v)
    v = tuple(int(x) for x in v)
    if len(v) != 2:
        raise ValueError(f"{what} must be an int or a pair of ints, got {v}")
    return v


def _activation(a: Any) -> str:
    if a is None:
        return "linear"
    if isinstance(a, str):
        return a
    name = getattr(a, "__name__", None)
    if name in ("relu", "sigmoid", "tanh", "softmax", "linear", "gelu", "elu", "selu", "swish",
                "silu", "softplus", "mish"):
        return name
    raise TypeError(f"activation must be a name such as 'relu' (dlrt builds it as an op), got {a!r}")


def _initializer(v: Any, default: str) -> str:
    if v is None:
        return default
    if isinstance(v, str):
        return v
    name = getattr(v, "name", None) or type(v).__name__
    return {"GlorotUniform": "glorot_uniform", "GlorotNormal": "glorot_normal",
            "HeUniform": "he_uniform", "HeNormal": "he_normal", "Zeros": "zeros",
            "Ones": "ones"}.get(name, name)


def _l2(reg: Any) -> float:
    if reg is None:
        return 0.0
    value = getattr(reg, "l2", None)
    if value is None:
        raise TypeError(f"regularizer {reg!r}: dlrt supports L2 (keras.regularizers.l2)")
    return float(value)


def _common(layer: Any, kwargs: dict) -> None:
    """Applies Keras' common keywords; refuses any other leftover keyword."""
    unknown = [k for k in kwargs if k not in _COMMON]
    if unknown:
        raise TypeError(f"{type(layer).__name__}: unsupported argument(s) {', '.join(unknown)}")
    if kwargs.get("name"):
        layer.name = kwargs["name"]
    if "trainable" in kwargs:
        layer.trainable = bool(kwargs["trainable"])
    dtype = kwargs.get("dtype")
    if dtype is not None:
        layer.dtype_policy = dtype if isinstance(dtype, str) else getattr(dtype, "name", str(dtype))
    shape = kwargs.get("input_shape")
    if shape is None and kwargs.get("batch_input_shape") is not None:
        shape = tuple(kwargs["batch_input_shape"])[1:]
    if shape is None and kwargs.get("input_dim") is not None:
        shape = (int(kwargs["input_dim"]),)
    layer._input_shape = tuple(shape) if shape is not None else None


def Input(shape: Sequence[int] | None = None, batch_size: int | None = None,
          name: str | None = None, dtype: Any = None, **kwargs: Any) -> KerasTensor:
    """keras.Input: the symbolic input of a functional model (shape without the batch)."""
    if shape is None:
        raise ValueError("Input needs shape=(...) (the shape of one sample)")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(d is None for d in shape):
        raise ValueError(f"Input shape {shape}: dlrt needs every dim but the batch known")
    t = _k.Input(list(shape))
    return t


class InputLayer(_k.InputLayer):
    def __init__(self, input_shape: Sequence[int] | None = None, shape: Sequence[int] | None = None,
                 **kwargs: Any) -> None:
        s = shape if shape is not None else input_shape
        if s is None:
            raise ValueError("InputLayer needs shape=(...)")
        super().__init__(list(s))
        _common(self, kwargs)


class Dense(_k.Dense):
    def __init__(self, units: int, activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, **kwargs: Any) -> None:
        if not use_bias:
            raise TypeError("Dense(use_bias=False) is not supported by dlrt's Dense")
        super().__init__(int(units), _activation(activation),
                         _initializer(kernel_initializer, "glorot_uniform"),
                         _initializer(bias_initializer, "zeros"), _l2(kernel_regularizer))
        _common(self, kwargs)


class Conv2D(_k.Conv2D):
    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
                 data_format: str | None = None, dilation_rate: Any = (1, 1), groups: int = 1,
                 activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, **kwargs: Any) -> None:
        if data_format not in (None, "channels_last"):
            raise ValueError("dlrt's Conv2D is channels_last (NHWC)")
        super().__init__(int(filters), _pair(kernel_size, "kernel_size"), _pair(strides, "strides"),
                         padding.lower(), _activation(activation), bool(use_bias),
                         _initializer(kernel_initializer, "glorot_uniform"),
                         _initializer(bias_initializer, "zeros"), _l2(kernel_regularizer),
                         _pair(dilation_rate, "dilation_rate"), int(groups))
        _common(self, kwargs)


class Conv2DTranspose(_k.Conv2DTranspose):
    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
                 output_padding: Any = None, data_format: str | None = None,
                 dilation_rate: Any = (1, 1), activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, **kwargs: Any) -> None:
        if data_format not in (None, "channels_last"):
            raise ValueError("dlrt's Conv2DTranspose is channels_last (NHWC)")
        super().__init__(int(filters), _pair(kernel_size, "kernel_size"), _pair(strides, "strides"),
                         padding.lower(),
                         None if output_padding is None else _pair(output_padding, "output_padding"),
                         _pair(dilation_rate, "dilation_rate"), _activation(activation),
                         bool(use_bias), _initializer(kernel_initializer, "glorot_uniform"),
                         _initializer(bias_initializer, "zeros"), _l2(kernel_regularizer))
        _common(self, kwargs)


class DepthwiseConv2D(_k.DepthwiseConv2D):
    def __init__(self, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
                 depth_multiplier: int = 1, data_format: str | None = None,
                 dilation_rate: Any = (1, 1), activation: Any = None, use_bias: bool = True,
                 depthwise_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 depthwise_regularizer: Any = None, **kwargs: Any) -> None:
        if data_format not in (None, "channels_last"):
            raise ValueError("dlrt's DepthwiseConv2D is channels_last (NHWC)")
        super().__init__(_pair(kernel_size, "kernel_size"), _pair(strides, "strides"),
                         padding.lower(), int(depth_multiplier),
                         _pair(dilation_rate, "dilation_rate"), _activation(activation),
                         bool(use_bias), _initializer(depthwise_initializer, "glorot_uniform"),
                         _initializer(bias_initializer, "zeros"), _l2(depthwise_regularizer))
        _common(self, kwargs)


class MaxPooling2D(_k.MaxPooling2D):
    def __init__(self, pool_size: Any = (2, 2), strides: Any = None, padding: str = "valid",
                 data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(_pair(pool_size, "pool_size"),
                         (0, 0) if strides is None else _pair(strides, "strides"), padding.lower())
        _common(self, kwargs)


class AveragePooling2D(_k.AveragePooling2D):
    def __init__(self, pool_size: Any = (2, 2), strides: Any = None, padding: str = "valid",
                 data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(_pair(pool_size, "pool_size"),
                         (0, 0) if strides is None else _pair(strides, "strides"), padding.lower())
        _common(self, kwargs)


MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D


class GlobalAveragePooling2D(_k.GlobalAveragePooling2D):
    def __init__(self, data_format: str | None = None, keepdims: bool = False, **kwargs: Any) -> None:
        super().__init__(bool(keepdims), data_format or "channels_last")
        _common(self, kwargs)


class GlobalMaxPooling2D(_k.GlobalMaxPooling2D):
    def __init__(self, data_format: str | None = None, keepdims: bool = False, **kwargs: Any) -> None:
        super().__init__(bool(keepdims), data_format or "channels_last")
        _common(self, kwargs)


class Flatten(_k.Flatten):
    def __init__(self, data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__()
        _common(self, kwargs)


class Reshape(_k.Reshape):
    def __init__(self, target_shape: Sequence[int], **kwargs: Any) -> None:
        super().__init__([int(d) for d in target_shape])
        _common(self, kwargs)


class Dropout(_k.Dropout):
    def __init__(self, rate: float, noise_shape: Any = None, seed: int | None = None,
                 **kwargs: Any) -> None:
        if noise_shape is not None:
            raise TypeError("Dropout(noise_shape=...) is not supported by dlrt")
        super().__init__(float(rate))
        self._rate = float(rate)
        _common(self, kwargs)


class BatchNormalization(_k.BatchNormalization):
    def __init__(self, axis: int = -1, momentum: float = 0.99, epsilon: float = 1e-3,
                 center: bool = True, scale: bool = True, **kwargs: Any) -> None:
        super().__init__(int(axis), float(momentum), float(epsilon), bool(center), bool(scale))
        _common(self, kwargs)


class LayerNormalization(_k.LayerNormalization):
    def __init__(self, axis: int = -1, epsilon: float = 1e-3, center: bool = True,
                 scale: bool = True, **kwargs: Any) -> None:
        super().__init__(int(axis), float(epsilon), bool(center), bool(scale))
        _common(self, kwargs)


class Add(_k.Add):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        _common(self, kwargs)


class Concatenate(_k.Concatenate):
    def __init__(self, axis: int = -1, **kwargs: Any) -> None:
        super().__init__(int(axis))
        _common(self, kwargs)


class Embedding(_k.Embedding):
    def __init__(self, input_dim: int, output_dim: int, embeddings_initializer: Any = "uniform",
                 **kwargs: Any) -> None:
        kwargs.pop("input_length", None)  # Keras 2's, only for the summary
        super().__init__(int(input_dim), int(output_dim), _initializer(embeddings_initializer, "uniform"))
        _common(self, kwargs)


class MultiHeadAttention(_k.MultiHeadAttention):
    """Keras' MultiHeadAttention. Called as Keras calls it, `layer(query, value, key=None,
    attention_mask=None, training=None, use_causal_mask=None)`, or with dlrt's list forms
    `layer(x)` (self-attention), `layer([query, value])`, `layer([query, value, key])`.

    attention_mask: (batch, T_query, T_key), or (batch, 1, T_key) for a key padding mask;
    True / non-zero = the query may attend to that key. Symbolic (a keras.Input or a layer's
    output, in a functional model) or eager (a NumPy array or tensor, beside eager query and
    value). The masked attention runs unfused (docs/nn.md). use_causal_mask is the layer's:
    give it to the constructor (a call may repeat it, not change it)."""

    def __init__(self, num_heads: int, key_dim: int, value_dim: int | None = None,
                 dropout: float = 0.0, use_bias: bool = True, use_causal_mask: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(int(num_heads), int(key_dim), int(value_dim or 0), float(dropout),
                         bool(use_bias), bool(use_causal_mask))
        self._use_causal_mask = bool(use_causal_mask)
        _common(self, kwargs)


class LSTM(_k.LSTM):
    def __init__(self, units: int, return_sequences: bool = False, **kwargs: Any) -> None:
        super().__init__(int(units), bool(return_sequences))
        _common(self, kwargs)


class GRU(_k.GRU):
    def __init__(self, units: int, return_sequences: bool = False, **kwargs: Any) -> None:
        super().__init__(int(units), bool(return_sequences))
        _common(self, kwargs)


class Activation(_k.Activation):
    def __init__(self, activation: Any, **kwargs: Any) -> None:
        super().__init__(_activation(activation))
        _common(self, kwargs)


class ReLU(_k.ReLU):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        _common(self, kwargs)


class Softmax(_k.Softmax):
    def __init__(self, axis: int = -1, **kwargs: Any) -> None:
        if axis != -1:
            raise ValueError("dlrt's Softmax layer normalises the last axis")
        super().__init__()
        _common(self, kwargs)


class LeakyReLU(_k.LeakyReLU):
    def __init__(self, negative_slope: float = 0.3, alpha: float | None = None, **kwargs: Any) -> None:
        super().__init__(float(alpha if alpha is not None else negative_slope))
        _common(self, kwargs)


class ZeroPadding2D(_k.ZeroPadding2D):
    def __init__(self, padding: Any = (1, 1), data_format: str | None = None, **kwargs: Any) -> None:
        if isinstance(padding, int):
            tb = lr = (padding, padding)
        elif isinstance(padding[0], int):
            tb, lr = (padding[0], padding[0]), (padding[1], padding[1])
        else:
            tb, lr = tuple(padding[0]), tuple(padding[1])
        super().__init__(tb, lr, data_format or "channels_last")
        _common(self, kwargs)


class UpSampling2D(_k.UpSampling2D):
    def __init__(self, size: Any = (2, 2), data_format: str | None = None,
                 interpolation: str = "nearest", **kwargs: Any) -> None:
        super().__init__(_pair(size, "size"), interpolation, data_format or "channels_last")
        _common(self, kwargs)


def _is_symbolic(inputs: Any) -> bool:
    if isinstance(inputs, (list, tuple)):
        return bool(inputs) and all(isinstance(i, KerasTensor) for i in inputs)
    return isinstance(inputs, KerasTensor)


def _layer_call(self: Any, inputs: Any, training: Any = None, **kwargs: Any) -> Any:
    """layer(keras_tensor) adds the layer to a functional model; layer(tensor or array) runs
    it now (keras/_eager.py), recorded by an active GradientTape."""
    if kwargs:
        raise TypeError(f"{type(self).__name__}(): unsupported call argument(s) {', '.join(kwargs)}")
    if _is_symbolic(inputs):
        return _k.Layer.__call__(self, list(inputs) if isinstance(inputs, tuple) else inputs)
    from ._eager import call_layer
    return call_layer(self, inputs, bool(training))


def _mha_call(self: Any, query: Any, value: Any = None, key: Any = None,
              attention_mask: Any = None, return_attention_scores: bool = False,
              training: Any = None, use_causal_mask: Any = None, **kwargs: Any) -> Any:
    """Keras' MultiHeadAttention.__call__ (see the class): the tensors become nn's list
    [query], [query, value], [query, value, key] or, with a mask, [query, value, key, mask]."""
    name = type(self).__name__
    unsupported = [k for k in kwargs if kwargs[k] is not None]
    if unsupported:
        raise TypeError(f"{name}(): unsupported call argument(s) {', '.join(unsupported)} "
                        "(dlrt takes attention_mask: (batch, T_query, T_key) or (batch, 1, T_key))")
    if return_attention_scores:
        raise TypeError(f"{name}(): return_attention_scores is not supported by dlrt")
    if use_causal_mask is not None and bool(use_causal_mask) != self._use_causal_mask:
        raise ValueError(f"{name}(): use_causal_mask={bool(use_causal_mask)} at the call, but "
                         f"the layer was made with use_causal_mask={self._use_causal_mask}; "
                         "dlrt fixes it when the layer is made: "
                         f"MultiHeadAttention(..., use_causal_mask={bool(use_causal_mask)})")
    if isinstance(query, (list, tuple)):
        if value is not None or key is not None:
            raise TypeError(f"{name}(): give the tensors as a list or as query, value, key; "
                            "not both")
        if not 1 <= len(query) <= 3:
            raise ValueError(f"{name}(): called on {len(query)} tensors; expected [query], "
                             "[query, value] or [query, value, key] (the mask is "
                             "attention_mask=)")
        tensors = list(query)
    else:
        tensors = [query] + ([value] if value is not None else []) + \
            ([key] if key is not None else [])
        if key is not None and value is None:
            raise TypeError(f"{name}(): key without value")
    if attention_mask is not None:
        while len(tensors) < 3:  # nn's fourth tensor is the mask: value and key spelled out
            tensors.append(tensors[-1])
        tensors.append(attention_mask)
    symbolic = [isinstance(t, KerasTensor) for t in tensors]
    if any(symbolic):
        if not all(symbolic):
            raise TypeError(f"{name}(): in a functional model every tensor, the attention_mask "
                            "included, must be symbolic (a keras.Input or a layer's output); "
                            "make the mask a model input")
        return _k.Layer.__call__(self, tensors if len(tensors) > 1 else tensors[0])
    from ._eager import call_layer
    if attention_mask is not None:
        from .._api import cast, convert_to_tensor
        tensors[-1] = cast(convert_to_tensor(attention_mask), "float32")
    return call_layer(self, tensors if len(tensors) > 1 else tensors[0], bool(training))


def _weights(self: Any) -> list:
    """The layer's eager weights (dlrt.Variables), made on its first eager call; [] before, as
    in Keras before a layer is built."""
    return list(getattr(self, "_eager_weights", None) or [])


def _trainable_weights(self: Any) -> list:
    return [w for w in _weights(self) if w.trainable] if self.trainable else []


def _non_trainable_weights(self: Any) -> list:
    return [w for w in _weights(self) if not (w.trainable and self.trainable)]


for _name in __all__:
    _cls = globals()[_name]
    if isinstance(_cls, type) and _cls.__module__ == __name__:
        _cls.__call__ = _layer_call
        # Keras' Layer.weights / trainable_weights (also as *_variables).
        _cls.weights = _cls.variables = property(_weights)
        _cls.trainable_weights = _cls.trainable_variables = property(_trainable_weights)
        _cls.non_trainable_weights = _cls.non_trainable_variables = property(_non_trainable_weights)
MultiHeadAttention.__call__ = _mha_call
