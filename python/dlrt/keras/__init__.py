"""dlrt.keras: Keras' models, layers, losses, optimizers, callbacks and data sets, over
dlrt's compiled nn library (each model is compiled once into dlrt graphs; the step loop runs
without Python). docs/python.md says what differs from Keras."""

from . import callbacks, datasets, layers, losses, mixed_precision, optimizers
from .layers import Input
from .models import Model, Sequential
from . import models
from . import utils

__all__ = ["Input", "Model", "Sequential", "callbacks", "datasets", "layers", "losses",
           "mixed_precision", "models", "optimizers", "utils"]
