"""dlrt.math: tf.math's functions (the elementwise ops, reductions and comparisons)."""

from ._api import (UNARY, add, add_n, argmax, argmin, cumsum, divide, equal, greater, greater_equal,
                   less, less_equal, maximum, minimum, multiply, negative, not_equal, pow,
                   reduce_max, reduce_mean, reduce_min, reduce_sum, subtract, truediv)
from . import _api

for _name in UNARY:
    globals()[_name] = getattr(_api, _name)

__all__ = ["add", "add_n", "argmax", "argmin", "cumsum", "divide", "equal", "greater", "greater_equal",
           "less", "less_equal", "maximum", "minimum", "multiply", "negative", "not_equal", "pow",
           "reduce_max", "reduce_mean", "reduce_min", "reduce_sum", "subtract", "truediv",
           *UNARY]
