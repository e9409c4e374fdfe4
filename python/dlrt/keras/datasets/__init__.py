"""dlrt.keras.datasets: data sets read from local files (nothing is downloaded)."""

from . import fashion_mnist, mnist

__all__ = ["fashion_mnist", "mnist"]
