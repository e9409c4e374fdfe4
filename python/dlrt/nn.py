"""dlrt.nn: tf.nn's activations, convolutions, pooling and losses over dlrt's ops.

Images are NHWC (TensorFlow's default); conv2d's filters are HWIO as TensorFlow's.
"""

from __future__ import annotations

from typing import Any, Sequence

from ._api import convert_to_tensor
from ._tensor import Tensor, _run1


def _pair(v: Any, name: str) -> list[int]:
    if isinstance(v, int):
        return [v, v]
    v = list(v)
    if len(v) == 4:  # TensorFlow's [1, sh, sw, 1]
        if v[0] != 1 or v[3] != 1:
            raise ValueError(f"{name} {v}: dlrt strides/windows over the batch or channels are "
                             "not supported; expected [1, h, w, 1]")
        return v[1:3]
    if len(v) == 1:
        return [v[0], v[0]]
    return v


def relu(features: Any, name: str | None = None) -> Tensor:
    return _run1("relu", [features])


def relu6(features: Any, name: str | None = None) -> Tensor:
    return _run1("clip", [features], {"min": 0.0, "max": 6.0})


def sigmoid(x: Any, name: str | None = None) -> Tensor:
    return _run1("sigmoid", [x])


def tanh(x: Any, name: str | None = None) -> Tensor:
    return _run1("tanh", [x])


def elu(features: Any, name: str | None = None) -> Tensor:
    return _run1("elu", [features])


def leaky_relu(features: Any, alpha: float = 0.2, name: str | None = None) -> Tensor:
    return _run1("leaky_relu", [features], {"alpha": float(alpha)})


def gelu(features: Any, approximate: bool = False, name: str | None = None) -> Tensor:
    return _run1("gelu", [features], {"approximate": "tanh" if approximate else "none"})


def silu(features: Any, beta: float = 1.0, name: str | None = None) -> Tensor:
    if beta != 1.0:
        return features * sigmoid(features * beta)
    return _run1("silu", [features])


swish = silu


def softplus(features: Any, name: str | None = None) -> Tensor:
    return _run1("softplus", [features])


def softmax(logits: Any, axis: int = -1, name: str | None = None) -> Tensor:
    return _run1("softmax", [logits], {"axis": axis})


def log_softmax(logits: Any, axis: int = -1, name: str | None = None) -> Tensor:
    return _run1("log_softmax", [logits], {"axis": axis})


def bias_add(value: Any, bias: Any, data_format: str | None = None, name: str | None = None) -> Tensor:
    return _run1("bias_add", [value, bias], {"data_format": "NCHW" if data_format == "NCHW" else "NHWC"})


def conv2d(input: Any, filters: Any, strides: Any, padding: str,  # noqa: A002
           data_format: str = "NHWC", dilations: Any = None, name: str | None = None) -> Tensor:
    attrs = {"strides": _pair(strides, "strides"), "padding": padding.upper(),
             "data_format": data_format}
    if dilations is not None:
        attrs["dilations"] = _pair(dilations, "dilations")
    return _run1("conv2d", [input, filters], attrs)


def max_pool2d(input: Any, ksize: Any, strides: Any, padding: str,  # noqa: A002
               data_format: str = "NHWC", name: str | None = None) -> Tensor:
    return _run1("max_pool2d", [input], {"ksize": _pair(ksize, "ksize"),
                                         "strides": _pair(strides, "strides"),
                                         "padding": padding.upper(), "data_format": data_format})


def avg_pool2d(input: Any, ksize: Any, strides: Any, padding: str,  # noqa: A002
               data_format: str = "NHWC", name: str | None = None) -> Tensor:
    return _run1("avg_pool2d", [input], {"ksize": _pair(ksize, "ksize"),
                                         "strides": _pair(strides, "strides"),
                                         "padding": padding.upper(), "data_format": data_format})


max_pool = max_pool2d
avg_pool = avg_pool2d


def dropout(x: Any, rate: float, noise_shape: Any = None, seed: int | None = None,
            name: str | None = None) -> Tensor:
    if noise_shape is not None:
        raise NotImplementedError("dlrt.nn.dropout: noise_shape is not supported")
    return _run1("dropout", [x], {"rate": float(rate), "seed": int(seed or 0)})


def sparse_softmax_cross_entropy_with_logits(labels: Any, logits: Any,
                                             name: str | None = None) -> Tensor:
    """Per-example loss (N,) of integer labels (N,) against logits (N, K)."""
    return _run1("sparse_softmax_cross_entropy", [logits, labels])


def l2_normalize(x: Any, axis: Any = None, epsilon: float = 1e-12, name: str | None = None) -> Tensor:
    from ._api import maximum, reduce_sum, _axes
    x = convert_to_tensor(x)
    sq = reduce_sum(x * x, axis=axis, keepdims=True)
    return x * _run1("rsqrt", [maximum(sq, epsilon)])


def moments(x: Any, axes: Sequence[int], keepdims: bool = False, name: str | None = None):
    from ._api import reduce_mean
    mean = reduce_mean(x, axes, keepdims=True)
    d = x - mean
    var = reduce_mean(d * d, axes, keepdims=keepdims)
    return (mean if keepdims else reduce_mean(x, axes, keepdims=False)), var


def top_k(input: Any, k: int = 1, sorted: bool = True, name: str | None = None):  # noqa: A002
    return tuple(__import__("dlrt._tensor", fromlist=["_run"])._run("top_k", [input], {"k": k, "sorted": sorted}))


def depth_to_space(input: Any, block_size: int, data_format: str = "NHWC",  # noqa: A002
                   name: str | None = None) -> Tensor:
    """TensorFlow's depth_to_space (NHWC, its DCR order): (B, H, W, r*r*C) -> (B, H*r, W*r, C),
    output[b, h*r + i, w*r + j, c] = input[b, h, w, (i*r + j)*C + c]. A reshape, a transpose
    and a reshape of the schema's ops (each with its gradient), so it runs on every device and
    under a GradientTape; ESPCN's sub-pixel upscaling is this after a convolution."""
    from ._api import reshape, transpose
    if data_format != "NHWC":
        raise ValueError("depth_to_space: NHWC only")
    r = int(block_size)
    x = convert_to_tensor(input)
    b, h, w, c = x.shape
    if r < 2 or c % (r * r):
        raise ValueError(f"depth_to_space: {c} channels do not divide into blocks of "
                         f"{r}x{r} (block_size must be >= 2 and its square divide the channels)")
    y = reshape(x, [b, h, w, r, r, c // (r * r)])
    y = transpose(y, [0, 1, 3, 2, 4, 5])  # (b, h, r, w, r, C)
    return reshape(y, [b, h * r, w * r, c // (r * r)])


def space_to_depth(input: Any, block_size: int, data_format: str = "NHWC",  # noqa: A002
                   name: str | None = None) -> Tensor:
    """The inverse of depth_to_space: (B, H*r, W*r, C) -> (B, H, W, r*r*C)."""
    from ._api import reshape, transpose
    if data_format != "NHWC":
        raise ValueError("space_to_depth: NHWC only")
    r = int(block_size)
    x = convert_to_tensor(input)
    b, hr, wr, c = x.shape
    if r < 2 or hr % r or wr % r:
        raise ValueError(f"space_to_depth: a {hr}x{wr} image does not divide into {r}x{r} blocks")
    y = reshape(x, [b, hr // r, r, wr // r, r, c])
    y = transpose(y, [0, 1, 3, 2, 4, 5])  # (b, h, w, r, r, C)
    return reshape(y, [b, hr // r, wr // r, r * r * c])
