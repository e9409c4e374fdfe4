"""dlrt.tune: hyperparameter search in KerasTuner's shape, whose trials run concurrently, one per
device (or logical device) at a time.

    def build(hp):
        model = dlrt.keras.Sequential([
            dlrt.keras.layers.Dense(hp.Int("units", 16, 128, step=16), activation="relu",
                                    input_shape=(784,)),
            dlrt.keras.layers.Dense(10)])
        model.compile(optimizer=dlrt.keras.optimizers.Adam(hp.Float("lr", 1e-4, 1e-2,
                                                                    sampling="log")),
                      loss=dlrt.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
        return model

    tuner = dlrt.tune.RandomSearch(build, objective="val_accuracy", max_trials=8)
    tuner.search(x, y, epochs=5, validation_data=(xv, yv))
    best = tuner.get_best_models(1)[0]

Devices: `devices=None` takes every logical GPU, else every logical CPU device
(dlrt.config.set_logical_device_configuration splits a CPU into several); a trial's model is
built and compiled inside `dlrt.device(its device)`, so the placement engine puts it there, and
one Python thread per device runs its trials (fit releases the GIL). `devices=["/CPU:0"]` runs
them one after another.

Bad trials stop early: after each epoch a trial whose objective is worse than the median of
the trials that reached that epoch before it stops (the median stopping rule; off with
`early_stopping=False`). Hyperband trains many configurations for few epochs and the best
third (`factor`) of each round for `factor` times more, up to `max_epochs`.

Not KerasTuner's: no oracle files on disk (results live in the tuner object), no
`BayesianOptimization`, and under mpirun each worker searches on its own devices (trials are
not shared between workers).
"""

from __future__ import annotations

import math
import queue
import random
import threading
import time
from typing import Any, Callable, Sequence

from . import config as _config
from ._device_scope import device as _device

__all__ = ["HyperParameters", "Trial", "RandomSearch", "Hyperband"]


class HyperParameters:
    """The values of one trial; hp.Int/Float/Choice/Boolean declare a parameter and return its
    value (its default while the search space is first read)."""

    def __init__(self, rng: random.Random | None = None, fixed: dict | None = None) -> None:
        self._rng = rng
        self._fixed = dict(fixed or {})
        self.values: dict[str, Any] = {}
        self.space: dict[str, str] = {}

    def _pick(self, name: str, describe: str, draw: Callable[[random.Random], Any],
              default: Any) -> Any:
        if name in self.values:
            return self.values[name]
        self.space[name] = describe
        if name in self._fixed:
            value = self._fixed[name]
        elif self._rng is None:
            value = default
        else:
            value = draw(self._rng)
        self.values[name] = value
        return value

    def Int(self, name: str, min_value: int, max_value: int, step: int = 1,  # noqa: N802
            sampling: str = "linear", default: int | None = None) -> int:
        if max_value < min_value or step < 1:
            raise ValueError(f"hp.Int({name!r}): expected min_value <= max_value and step >= 1")
        choices = list(range(min_value, max_value + 1, step))
        if sampling == "log":
            def draw(r):
                v = math.exp(r.uniform(math.log(max(min_value, 1)), math.log(max_value)))
                return min(choices, key=lambda c: abs(c - v))
        elif sampling == "linear":
            def draw(r):
                return r.choice(choices)
        else:
            raise ValueError(f"hp.Int({name!r}): sampling {sampling!r}; expected linear or log")
        return self._pick(name, f"Int [{min_value}, {max_value}] step {step} ({sampling})", draw,
                          min_value if default is None else default)

    def Float(self, name: str, min_value: float, max_value: float,  # noqa: N802
              sampling: str = "linear", default: float | None = None) -> float:
        if not max_value >= min_value:
            raise ValueError(f"hp.Float({name!r}): expected min_value <= max_value")
        if sampling == "log":
            if min_value <= 0:
                raise ValueError(f"hp.Float({name!r}): log sampling needs min_value > 0")

            def draw(r):
                return math.exp(r.uniform(math.log(min_value), math.log(max_value)))
        elif sampling == "linear":
            def draw(r):
                return r.uniform(min_value, max_value)
        else:
            raise ValueError(f"hp.Float({name!r}): sampling {sampling!r}; expected linear or log")
        return self._pick(name, f"Float [{min_value}, {max_value}] ({sampling})", draw,
                          min_value if default is None else default)

    def Choice(self, name: str, values: Sequence[Any], default: Any = None) -> Any:  # noqa: N802
        values = list(values)
        if not values:
            raise ValueError(f"hp.Choice({name!r}): no values")
        return self._pick(name, f"Choice {values}", lambda r: r.choice(values),
                          values[0] if default is None else default)

    def Boolean(self, name: str, default: bool = False) -> bool:  # noqa: N802
        return self._pick(name, "Boolean", lambda r: r.random() < 0.5, default)

    def get(self, name: str) -> Any:
        return self.values[name]


class Trial:
    """One configuration tried: its values, the device it ran on, its history and score."""

    def __init__(self, trial_id: int, hp: HyperParameters) -> None:
        self.trial_id = trial_id
        self.hyperparameters = hp
        self.device = ""
        self.history: dict[str, list[float]] = {}
        self.score: float | None = None
        self.epochs = 0
        self.stopped_early = False
        self.seconds = 0.0
        self.model: Any = None
        self.error: str | None = None


class _Tuner:
    def __init__(self, hypermodel: Callable[[HyperParameters], Any], objective: str = "val_loss",
                 seed: int | None = None, devices: Sequence[str] | None = None,
                 early_stopping: bool = True) -> None:
        if not callable(hypermodel):
            raise TypeError("the hypermodel must be a function of hp that returns a compiled model")
        self.hypermodel = hypermodel
        self.objective = objective
        self.direction = "max" if ("acc" in objective) else "min"
        self._rng = random.Random(seed)
        self.devices = list(devices) if devices else _default_devices()
        self.early_stopping = early_stopping
        self.trials: list[Trial] = []
        self._lock = threading.Lock()
        self._epoch_scores: dict[int, list[float]] = {}  # epoch -> objectives reached there

    # ---- results ----
    def _better(self, a: float, b: float) -> bool:
        return a > b if self.direction == "max" else a < b

    def _ranked(self) -> list[Trial]:
        done = [t for t in self.trials if t.score is not None and math.isfinite(t.score)]
        return sorted(done, key=lambda t: -t.score if self.direction == "max" else t.score)

    def get_best_hyperparameters(self, num_trials: int = 1) -> list[HyperParameters]:
        return [t.hyperparameters for t in self._ranked()[:num_trials]]

    def get_best_models(self, num_models: int = 1) -> list[Any]:
        return [t.model for t in self._ranked()[:num_models]]

    def results_summary(self, num_trials: int = 10) -> None:
        print(f"Results summary: objective {self.objective} ({self.direction}), "
              f"{len(self.trials)} trials on {', '.join(self.devices)}")
        for t in self._ranked()[:num_trials]:
            flag = " (stopped early)" if t.stopped_early else ""
            print(f"Trial {t.trial_id:03d} on {t.device}: {self.objective} {t.score:.4f} after "
                  f"{t.epochs} epochs{flag}, {t.seconds:.1f} s; {t.hyperparameters.values}")

    def search_space_summary(self) -> None:
        hp = HyperParameters()
        self.hypermodel(hp)
        print(f"Search space summary: {len(hp.space)} parameters")
        for name, describe in hp.space.items():
            print(f"{name}: {describe}")

    # ---- running ----
    def _median_says_stop(self, epoch: int, score: float) -> bool:
        with self._lock:
            seen = list(self._epoch_scores.get(epoch, []))
            self._epoch_scores.setdefault(epoch, []).append(score)
        if not self.early_stopping or len(seen) < 2:
            return False
        seen.sort()
        median = seen[len(seen) // 2] if len(seen) % 2 else 0.5 * (seen[len(seen) // 2 - 1] +
                                                                      seen[len(seen) // 2])
        return self._better(median, score)

    def _run_trial(self, trial: Trial, device: str, epochs: int, initial_epoch: int,
                   fit_args: dict) -> None:
        from .keras.callbacks import Callback
        tuner = self

        class MedianStop(Callback):
            def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
                score = (logs or {}).get(tuner.objective)
                if score is None:
                    raise KeyError(f"the objective {tuner.objective!r} is not in the logs "
                                   f"({', '.join(logs or {})}): give validation data for val_*")
                if tuner._median_says_stop(epoch, float(score)):
                    trial.stopped_early = True
                    self.model.stop_training = True

        trial.device = device
        start = time.perf_counter()
        try:
            with _device(device):
                if trial.model is None:
                    trial.model = self.hypermodel(trial.hyperparameters)
                callbacks = list(fit_args.get("callbacks") or []) + [MedianStop()]
                args = {k: v for k, v in fit_args.items() if k != "callbacks"}
                h = trial.model.fit(epochs=epochs, initial_epoch=initial_epoch,
                                    callbacks=callbacks, verbose=0, **args)
            for k, v in h.history.items():
                trial.history.setdefault(k, []).extend(v)
            scores = trial.history.get(self.objective, [])
            trial.epochs = len(scores)
            if scores:
                trial.score = max(scores) if self.direction == "max" else min(scores)
        except Exception as e:  # a bad configuration fails its trial, not the search
            trial.error = f"{type(e).__name__}: {e}"
            trial.score = None
        trial.seconds += time.perf_counter() - start

    def _run_all(self, jobs: list[tuple[Trial, int, int]], fit_args: dict) -> None:
        """Runs (trial, epochs, initial_epoch) jobs, one thread per device taking the next."""
        work: queue.Queue = queue.Queue()
        for j in jobs:
            work.put(j)

        def worker(device: str) -> None:
            while True:
                try:
                    trial, epochs, initial = work.get_nowait()
                except queue.Empty:
                    return
                self._run_trial(trial, device, epochs, initial, fit_args)

        threads = [threading.Thread(target=worker, args=(d,), name=f"tune:{d}")
                   for d in self.devices]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def _new_trial(self) -> Trial:
        hp = HyperParameters(random.Random(self._rng.random()))
        trial = Trial(len(self.trials), hp)
        self.trials.append(trial)
        return trial


class RandomSearch(_Tuner):
    """max_trials random configurations, each trained for search()'s epochs."""

    def __init__(self, hypermodel: Callable[[HyperParameters], Any], objective: str = "val_loss",
                 max_trials: int = 10, seed: int | None = None,
                 devices: Sequence[str] | None = None, early_stopping: bool = True,
                 **kwargs: Any) -> None:
        _reject(kwargs, "RandomSearch")
        super().__init__(hypermodel, objective, seed, devices, early_stopping)
        self.max_trials = int(max_trials)

    def search(self, x: Any = None, y: Any = None, epochs: int = 1, **fit_args: Any) -> None:
        jobs = [(self._new_trial(), int(epochs), 0) for _ in range(self.max_trials)]
        self._run_all(jobs, {"x": x, "y": y, **fit_args})


class Hyperband(_Tuner):
    """Successive halving (Li et al., 2017): a round trains n configurations for r epochs,
    keeps the best 1/factor and trains those factor times longer, up to max_epochs; the
    brackets trade many short trials against few long ones."""

    def __init__(self, hypermodel: Callable[[HyperParameters], Any], objective: str = "val_loss",
                 max_epochs: int = 27, factor: int = 3, hyperband_iterations: int = 1,
                 seed: int | None = None, devices: Sequence[str] | None = None,
                 **kwargs: Any) -> None:
        _reject(kwargs, "Hyperband")
        # Halving replaces the median rule: a trial continued is one that ranked well.
        super().__init__(hypermodel, objective, seed, devices, early_stopping=False)
        if factor < 2 or max_epochs < 1:
            raise ValueError("Hyperband: expected factor >= 2 and max_epochs >= 1")
        self.max_epochs, self.factor = int(max_epochs), int(factor)
        self.iterations = int(hyperband_iterations)

    def search(self, x: Any = None, y: Any = None, epochs: int | None = None,
               **fit_args: Any) -> None:
        args = {"x": x, "y": y, **fit_args}
        s_max = int(math.log(self.max_epochs, self.factor) + 1e-9)
        for _ in range(self.iterations):
            for s in range(s_max, -1, -1):
                n = int(math.ceil((s_max + 1) / (s + 1) * self.factor ** s))
                r = self.max_epochs / self.factor ** s
                alive = [self._new_trial() for _ in range(n)]
                done = {t.trial_id: 0 for t in alive}
                for i in range(s + 1):
                    target = max(1, int(round(r * self.factor ** i)))
                    self._run_all([(t, target, done[t.trial_id]) for t in alive], args)
                    for t in alive:
                        done[t.trial_id] = target
                    keep = max(1, len(alive) // self.factor)
                    ranked = [t for t in self._ranked() if t in alive]
                    alive = ranked[:keep]


def _default_devices() -> list[str]:
    gpus = _config.list_logical_devices("GPU")
    return [d.name for d in (gpus or _config.list_logical_devices("CPU"))]


def _reject(kwargs: dict, who: str) -> None:
    known_ignored = {"directory", "project_name", "overwrite", "executions_per_trial"}
    unknown = set(kwargs) - known_ignored
    if unknown:
        raise TypeError(f"{who}: unsupported argument(s) {', '.join(sorted(unknown))}")
