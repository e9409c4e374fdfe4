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

Workers: under a launcher of several workers (`mpirun -np N python script.py`, srun,
torchrun's variables, TF_CONFIG: whatever dlrt.distribute.cluster_resolver() finds), every
worker runs the same script and search, each on the devices it sees (workers on one host share
them unless devices= or CUDA_VISIBLE_DEVICES part them), and the trials are shared out through
files in the tuner's folder (`directory`/`project_name`, by default ./untitled_project), which
every worker must see (one host, or a shared filesystem on a cluster):

  - the workers meet once (worker 0 writes launch.json naming a fresh run-<token> folder and,
    without `seed=`, the seed every worker then draws from; each worker answers there with a
    random nonce, and worker 0 confirms them), so every worker draws the same configurations
    and stale files of earlier runs are never read;
  - a trial is taken by the first worker (device thread) that creates its claim file with
    O_CREAT|O_EXCL (atomic on local filesystems and NFSv3 or later): a shared queue, so a
    worker whose trials finish sooner takes more, where a fixed split (trial i on worker
    i % N) would leave it idle while a slower one works through its share;
  - the worker that ran a trial writes its result (values, worker, device, history, score) with
    an atomic rename, and its weights (save_weights, safetensors) beside it; after each round
    every worker waits for every result, so get_best_hyperparameters() and results_summary()
    agree on every worker, and get_best_models() loads a trial trained elsewhere from its
    weights (Hyperband's next round likewise continues a trial on any worker);
  - each worker publishes its objective per epoch, so the median rule also counts the other
    workers' trials that reached an epoch first;
  - a worker that raises out of search() writes failed-<rank>.json, and each worker's heartbeat
    file changes every second: the others stop with an error naming the worker that failed, or
    whose heartbeat stopped for `worker_timeout` seconds (300 by default), rather than hang.

No MPI is used for this (no process talks to another except through the folder), and nothing
is resumed: each launch starts a new run-<token> folder (`overwrite=True` makes worker 0
delete the earlier ones); one tuner per folder at a time. `over_workers=False` keeps each
worker searching on its own (as trials that train under a MultiWorkerMirroredStrategy need).

Not KerasTuner's: no resuming a search from its folder, no `BayesianOptimization`; in one
process nothing is written to disk (results live in the tuner object).
"""

from __future__ import annotations

import json
import math
import os
import queue
import random
import secrets
import shutil
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
        self._draw: float | None = None
        self.worker = 0  # the rank of the worker that ran it (last, for Hyperband)


class _Tuner:
    def __init__(self, hypermodel: Callable[[HyperParameters], Any], objective: str = "val_loss",
                 seed: int | None = None, devices: Sequence[str] | None = None,
                 early_stopping: bool = True, directory: str | None = None,
                 project_name: str | None = None, overwrite: bool = False,
                 over_workers: bool = True, worker_timeout: float = 300.0) -> None:
        if not callable(hypermodel):
            raise TypeError("the hypermodel must be a function of hp that returns a compiled model")
        self.hypermodel = hypermodel
        self.objective = objective
        self.direction = "max" if ("acc" in objective) else "min"
        self._seed = seed
        self._rng = random.Random(seed)
        self.devices = list(devices) if devices else _default_devices()
        self.early_stopping = early_stopping
        self.trials: list[Trial] = []
        self._lock = threading.Lock()
        self._epoch_scores: dict[int, list[float]] = {}  # epoch -> objectives reached there
        # Several workers (mpirun, ...): the trials are shared out through files in the folder.
        from .distribute import cluster_resolver
        info = cluster_resolver()  # this worker's place in the job, as dlrt's strategies see it
        self.rank, self.num_workers = int(info["task_id"]), int(info["num_workers"])
        self._exchange: _Exchange | None = None
        if over_workers and self.num_workers > 1:
            if not worker_timeout > 0:
                raise ValueError("worker_timeout: expected seconds > 0")
            folder = os.path.join(directory or ".", project_name or "untitled_project")
            self._exchange = _Exchange(folder, self.rank, self.num_workers, float(worker_timeout),
                                       bool(overwrite))
        self._steps = 0  # rounds of trials run (_run_all calls): the same count on every worker

    # ---- results ----
    def _better(self, a: float, b: float) -> bool:
        return a > b if self.direction == "max" else a < b

    def _ranked(self) -> list[Trial]:
        done = [t for t in self.trials if t.score is not None and math.isfinite(t.score)]
        return sorted(done, key=lambda t: -t.score if self.direction == "max" else t.score)

    def get_best_hyperparameters(self, num_trials: int = 1) -> list[HyperParameters]:
        return [t.hyperparameters for t in self._ranked()[:num_trials]]

    def get_best_models(self, num_models: int = 1) -> list[Any]:
        """The best trials' models as their trials left them; under several workers, a trial
        run on another worker is built here (on this worker's first device) and given the
        weights that worker saved."""
        best = self._ranked()[:num_models]
        if self._exchange is not None:
            for t in best:
                if t.model is None:
                    with _device(self.devices[0]):
                        t.model = self._restored(t)
        return [t.model for t in best]

    def results_summary(self, num_trials: int = 10) -> None:
        where = (', '.join(self.devices) if self._exchange is None else
                 f"{self.num_workers} workers")
        print(f"Results summary: objective {self.objective} ({self.direction}), "
              f"{len(self.trials)} trials on {where}")
        for t in self._ranked()[:num_trials]:
            flag = " (stopped early)" if t.stopped_early else ""
            on = t.device if self._exchange is None else f"worker {t.worker} {t.device}"
            print(f"Trial {t.trial_id:03d} on {on}: {self.objective} {t.score:.4f} after "
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
            if self._exchange is not None and self.early_stopping:
                self._exchange.publish_scores(self._epoch_scores)
        if self._exchange is not None and self.early_stopping:
            seen += self._exchange.remote_scores(epoch)  # the other workers' trials, so far
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
        trial.worker = self.rank
        start = time.perf_counter()
        try:
            with _device(device):
                if trial.model is None:
                    # A trial continued here after another worker ran its earlier epochs
                    # (Hyperband) starts from the weights that worker saved.
                    trial.model = (self._restored(trial) if initial_epoch > 0 and
                                   self._exchange is not None else
                                   self.hypermodel(trial.hyperparameters))
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

    def _restored(self, trial: Trial) -> Any:
        model = self.hypermodel(trial.hyperparameters)
        model.load_weights(self._exchange.weights_path(trial.trial_id))
        return model

    def _search(self, run: Callable[[], None]) -> None:
        """Runs a search() body; under several workers, first meets the others (once) and
        keeps a heartbeat while it runs, and a failure is written down for the others."""
        if self._exchange is None:
            run()
            return
        ex = self._exchange
        try:
            if ex.token is None:
                shared_seed = ex.join()
                if self._seed is None:  # every worker draws from worker 0's seed
                    self._rng = random.Random(shared_seed)
            ex.heartbeat(True)
            run()
        except BaseException as e:
            ex.fail(f"{type(e).__name__}: {e}")
            raise
        finally:
            ex.heartbeat(False)

    def _run_all(self, jobs: list[tuple[Trial, int, int]], fit_args: dict) -> None:
        """Runs (trial, epochs, initial_epoch) jobs, one thread per device taking the next."""
        self._steps += 1
        if self._exchange is not None:
            self._run_shared(jobs, fit_args)
            return
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

        self._on_every_device(worker)

    def _on_every_device(self, worker) -> None:
        """Runs worker(device) on a thread per device and waits for all of them."""
        threads = [threading.Thread(target=worker, args=(d,), name=f"tune:{d}")
                   for d in self.devices]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def _run_shared(self, jobs: list[tuple[Trial, int, int]], fit_args: dict) -> None:
        """_run_all over several workers: every worker walks the same jobs in the same order,
        claims the next one no one has claimed, runs it, and writes its result and weights;
        then waits for every job's result and takes them in, so every worker ends the round
        knowing the same trials."""
        ex, step = self._exchange, self._steps
        plan = [[t.trial_id, e, i] for t, e, i in jobs]
        ex.open_step(step)
        work: queue.Queue = queue.Queue()
        for j in jobs:
            work.put(j)
        errors: list[BaseException] = []

        def worker(device: str) -> None:
            try:
                while not errors:
                    try:
                        trial, epochs, initial = work.get_nowait()
                    except queue.Empty:
                        return
                    ex.check_failures()
                    if not ex.claim(step, trial.trial_id):
                        continue
                    self._run_trial(trial, device, epochs, initial, fit_args)
                    if trial.model is not None and trial.error is None:
                        trial.model.save_weights(ex.weights_path(trial.trial_id))
                    ex.write_result(step, _record(trial, plan))
            except BaseException as e:  # noqa: BLE001 - re-raised on the calling thread
                errors.append(e)

        self._on_every_device(worker)
        if errors:
            raise errors[0]
        mine = ex.claimed_here(step)
        others = [t.trial_id for t, _, _ in jobs if t.trial_id not in mine]
        results = ex.wait_results(step, others)
        for trial, _, _ in jobs:
            if trial.trial_id not in mine:
                _take_in(trial, results[trial.trial_id], plan, ex)

    def _new_trial(self) -> Trial:
        draw = self._rng.random()
        hp = HyperParameters(random.Random(draw))
        trial = Trial(len(self.trials), hp)
        trial._draw = draw  # its values' seed: the same on every worker of a shared search
        self.trials.append(trial)
        return trial


class RandomSearch(_Tuner):
    """max_trials random configurations, each trained for search()'s epochs."""

    def __init__(self, hypermodel: Callable[[HyperParameters], Any], objective: str = "val_loss",
                 max_trials: int = 10, seed: int | None = None,
                 devices: Sequence[str] | None = None, early_stopping: bool = True,
                 directory: str | None = None, project_name: str | None = None,
                 overwrite: bool = False, over_workers: bool = True,
                 worker_timeout: float = 300.0, **kwargs: Any) -> None:
        _reject(kwargs, "RandomSearch")
        super().__init__(hypermodel, objective, seed, devices, early_stopping, directory,
                         project_name, overwrite, over_workers, worker_timeout)
        self.max_trials = int(max_trials)

    def search(self, x: Any = None, y: Any = None, epochs: int = 1, **fit_args: Any) -> None:
        def run() -> None:
            jobs = [(self._new_trial(), int(epochs), 0) for _ in range(self.max_trials)]
            self._run_all(jobs, {"x": x, "y": y, **fit_args})
        self._search(run)


class Hyperband(_Tuner):
    """Successive halving (Li et al., 2017): a round trains n configurations for r epochs,
    keeps the best 1/factor and trains those factor times longer, up to max_epochs; the
    brackets trade many short trials against few long ones."""

    def __init__(self, hypermodel: Callable[[HyperParameters], Any], objective: str = "val_loss",
                 max_epochs: int = 27, factor: int = 3, hyperband_iterations: int = 1,
                 seed: int | None = None, devices: Sequence[str] | None = None,
                 directory: str | None = None, project_name: str | None = None,
                 overwrite: bool = False, over_workers: bool = True,
                 worker_timeout: float = 300.0, **kwargs: Any) -> None:
        _reject(kwargs, "Hyperband")
        # Halving replaces the median rule: a trial continued is one that ranked well.
        super().__init__(hypermodel, objective, seed, devices, False, directory, project_name,
                         overwrite, over_workers, worker_timeout)
        if factor < 2 or max_epochs < 1:
            raise ValueError("Hyperband: expected factor >= 2 and max_epochs >= 1")
        self.max_epochs, self.factor = int(max_epochs), int(factor)
        self.iterations = int(hyperband_iterations)

    def search(self, x: Any = None, y: Any = None, epochs: int | None = None,
               **fit_args: Any) -> None:
        self._search(lambda: self._brackets({"x": x, "y": y, **fit_args}))

    def _brackets(self, args: dict) -> None:
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
    known_ignored = {"executions_per_trial"}
    unknown = set(kwargs) - known_ignored
    if unknown:
        raise TypeError(f"{who}: unsupported argument(s) {', '.join(sorted(unknown))}")


# ---- several workers: the files of a shared search ----

def _write_atomic(path: str, data: Any) -> None:
    """JSON to `path` through a temporary name and os.replace: a reader sees all or nothing."""
    tmp = f"{path}.tmp-{os.getpid()}-{threading.get_ident()}"
    with open(tmp, "w") as f:
        json.dump(data, f, default=repr)  # a Choice of values JSON lacks: their repr
    os.replace(tmp, path)


def _read(path: str) -> Any:
    """The JSON at `path`, or None where it is not there (yet)."""
    try:
        with open(path) as f:
            return json.load(f)
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def _values_key(values: dict) -> str:
    return json.dumps(values, sort_keys=True, default=repr)


def _record(trial: Trial, plan: list) -> dict:
    hp = trial.hyperparameters
    return {"trial_id": trial.trial_id, "worker": trial.worker, "device": trial.device,
            "draw": trial._draw, "values": hp.values, "space": hp.space, "plan": plan,
            "history": trial.history, "score": trial.score, "epochs": trial.epochs,
            "stopped_early": trial.stopped_early, "seconds": trial.seconds,
            "error": trial.error}


def _take_in(trial: Trial, rec: dict, plan: list, ex: "_Exchange") -> None:
    """Another worker's result for `trial` (it ran this round there)."""
    w, hp = rec["worker"], trial.hyperparameters
    # The values are drawn as the hypermodel asks for them, so a worker that did not build
    # this trial has none yet: it checks that it would have drawn them from the same seed, and
    # takes them (as JSON has them) from the worker that did.
    if rec["draw"] != trial._draw or (hp.values and
                                      _values_key(rec["values"]) != _values_key(hp.values)):
        raise RuntimeError(
            f"dlrt.tune: worker {w} ran trial {trial.trial_id} with {rec['values']} (drawn from "
            f"{rec['draw']!r}), this worker (worker {ex.rank}) draws it from {trial._draw!r}"
            f"{' as ' + str(hp.values) if hp.values else ''}: every worker must run the same "
            f"search (the same hypermodel, seed and max_trials)")
    if not hp.values:
        hp.values, hp.space = dict(rec["values"]), dict(rec["space"])
    if rec["plan"] != plan:
        raise RuntimeError(
            f"dlrt.tune: worker {w} ran round {ex.step} as {rec['plan']} ([trial, epochs, "
            f"initial epoch]), this worker (worker {ex.rank}) as {plan}: every worker must run "
            f"the same search (the same max_trials, epochs, max_epochs)")
    trial.worker, trial.device = w, rec["device"]
    trial.history = {k: list(v) for k, v in rec["history"].items()}
    trial.score, trial.epochs = rec["score"], rec["epochs"]
    trial.stopped_early, trial.seconds, trial.error = (rec["stopped_early"], rec["seconds"],
                                                       rec["error"])
    trial.model = None  # a model of this trial here, if any, is behind: the weights are there


class _Exchange:
    """The folder through which the workers of one job share a search:

        <folder>/launch.json                 worker 0: the run's token, seed and members
        <folder>/run-<token>/hello-<r>.json  worker r's nonce (joining)
                            /alive-<r>       worker r's heartbeat (a counter, every second)
                            /failed-<r>.json worker r's error, where search() raised there
                            /scores-<r>.json worker r's objective per epoch (the median rule)
                            /trial-<i>.safetensors  trial i's weights as its last round left them
                            /step-<s>/claim-<i>       who took trial i in round s (O_EXCL)
                            /step-<s>/result-<i>.json its result

    Every file but the claims is written by one worker only, through a temporary name."""

    POLL = 0.1        # seconds between looks at the folder while waiting
    HEARTBEAT = 1.0   # seconds between heartbeats

    def __init__(self, folder: str, rank: int, size: int, timeout: float,
                 overwrite: bool) -> None:
        self.folder, self.rank, self.size = os.path.abspath(folder), rank, size
        self.timeout, self.overwrite = timeout, overwrite
        self.token: str | None = None
        self.run = ""
        self.step = 0
        self._claimed: dict[int, set[int]] = {}
        self._beat: threading.Event | None = None
        self.remote_scores_seen = 0  # how many other workers' scores the median rule counted

    def _where(self) -> str:
        return (f"{self.folder} (every worker must run this search with the same "
                f"directory/project_name, on a folder all of them see: a shared filesystem "
                f"across hosts)")

    # ---- meeting ----
    def join(self) -> int:
        """Meets the other workers; returns the seed that worker 0 drew for them all."""
        os.makedirs(self.folder, exist_ok=True)
        launch = os.path.join(self.folder, "launch.json")
        deadline = time.monotonic() + self.timeout
        if self.rank == 0:
            token, seed = secrets.token_hex(8), secrets.randbits(62)
            if self.overwrite:
                for name in os.listdir(self.folder):
                    if name.startswith("run-"):
                        shutil.rmtree(os.path.join(self.folder, name), ignore_errors=True)
            run = os.path.join(self.folder, f"run-{token}")
            os.makedirs(run)
            head = {"token": token, "seed": seed, "workers": self.size}
            _write_atomic(launch, {**head, "members": None})
            members: dict[str, str] = {}
            while True:
                for r in range(1, self.size):
                    hello = _read(os.path.join(run, f"hello-{r}.json"))
                    if hello is not None:
                        members[str(r)] = hello["nonce"]
                missing = [r for r in range(1, self.size) if str(r) not in members]
                if not missing:
                    break
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"dlrt.tune: worker(s) {', '.join(map(str, missing))} of {self.size} did "
                        f"not join the search within worker_timeout={self.timeout:g} s at "
                        f"{self._where()}")
                time.sleep(self.POLL)
            _write_atomic(launch, {**head, "members": members})
        else:
            nonce, answered = secrets.token_hex(8), None
            while True:
                d = _read(launch)
                if d is not None and (d.get("members") or {}).get(str(self.rank)) == nonce:
                    token, seed = d["token"], d["seed"]
                    break
                if d is not None and d.get("token") != answered:
                    # A launch.json of an earlier run never names this nonce: answered there,
                    # the answer is ignored, and this worker answers again when worker 0 writes.
                    try:
                        _write_atomic(os.path.join(self.folder, f"run-{d['token']}",
                                                   f"hello-{self.rank}.json"), {"nonce": nonce})
                        answered = d.get("token")
                    except OSError:
                        pass  # that run's folder is gone (overwrite): wait for the new one
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"dlrt.tune: worker 0 did not open the search (and name worker "
                        f"{self.rank} in its launch.json) within worker_timeout="
                        f"{self.timeout:g} s at {self._where()}")
                time.sleep(self.POLL)
        self.token = token
        self.run = os.path.join(self.folder, f"run-{token}")
        return int(seed)

    def heartbeat(self, on: bool) -> None:
        if not on:
            if self._beat is not None:
                self._beat.set()
                self._beat = None
            return
        stop = self._beat = threading.Event()
        path = os.path.join(self.run, f"alive-{self.rank}")

        def beat() -> None:
            n = 0
            while True:
                n += 1
                try:
                    _write_atomic(path, [os.getpid(), n])
                except OSError:
                    pass
                if stop.wait(self.HEARTBEAT):
                    return

        threading.Thread(target=beat, name="tune:heartbeat", daemon=True).start()

    def fail(self, message: str) -> None:
        if self.run:
            try:
                _write_atomic(os.path.join(self.run, f"failed-{self.rank}.json"),
                              {"worker": self.rank, "error": message})
            except OSError:
                pass

    def check_failures(self) -> None:
        for r in range(self.size):
            if r == self.rank:
                continue
            d = _read(os.path.join(self.run, f"failed-{r}.json"))
            if d is not None:
                raise RuntimeError(f"dlrt.tune: worker {r} failed ({d['error']}); the search "
                                   f"stops on worker {self.rank} too")

    # ---- rounds ----
    def open_step(self, step: int) -> None:
        self.step = step
        os.makedirs(os.path.join(self.run, f"step-{step}"), exist_ok=True)
        self._claimed[step] = set()

    def claim(self, step: int, trial_id: int) -> bool:
        path = os.path.join(self.run, f"step-{step}", f"claim-{trial_id}")
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w") as f:
            f.write(str(self.rank))
        self._claimed[step].add(trial_id)
        return True

    def claimed_here(self, step: int) -> set[int]:
        return set(self._claimed.get(step, ()))

    def weights_path(self, trial_id: int) -> str:
        return os.path.join(self.run, f"trial-{trial_id}.safetensors")

    def write_result(self, step: int, record: dict) -> None:
        _write_atomic(os.path.join(self.run, f"step-{step}", f"result-{record['trial_id']}.json"),
                      record)

    def wait_results(self, step: int, trial_ids: list[int]) -> dict[int, dict]:
        """The other workers' results of this round; an error naming the worker that failed,
        or whose heartbeat stopped for worker_timeout seconds, instead of waiting forever."""
        folder = os.path.join(self.run, f"step-{step}")
        results: dict[int, dict] = {}
        missing = list(trial_ids)
        heard: dict[int, tuple[Any, float]] = {}  # worker -> (its heartbeat, when it changed)
        while True:
            for i in list(missing):
                rec = _read(os.path.join(folder, f"result-{i}.json"))
                if rec is not None:
                    results[i] = rec
                    missing.remove(i)
            if not missing:
                return results
            self.check_failures()
            now = time.monotonic()
            waiting_on: dict[int, list[int]] = {}
            for i in missing:
                try:
                    with open(os.path.join(folder, f"claim-{i}")) as f:
                        owner = int(f.read() or -1)
                except (FileNotFoundError, ValueError):
                    owner = -1  # its claimer has not written its rank (yet)
                waiting_on.setdefault(owner, []).append(i)
            for w, ids in waiting_on.items():
                beat = _read(os.path.join(self.run, f"alive-{w}")) if w >= 0 else None
                if w not in heard or heard[w][0] != beat:
                    heard[w] = (beat, now)
                elif now - heard[w][1] > self.timeout:
                    who = f"worker {w}" if w >= 0 else "a worker that never wrote its rank"
                    raise TimeoutError(
                        f"dlrt.tune: {who} took trial(s) {', '.join(map(str, ids))} of "
                        f"round {step} and has given no sign of life for worker_timeout="
                        f"{self.timeout:g} s (its heartbeat {self.run}/alive-{w} stopped "
                        f"changing): it died or hung, so worker {self.rank} stops here "
                        f"instead of waiting for it")
            time.sleep(self.POLL)

    # ---- the median rule ----
    def publish_scores(self, epoch_scores: dict[int, list[float]]) -> None:
        _write_atomic(os.path.join(self.run, f"scores-{self.rank}.json"),
                      {str(e): v for e, v in epoch_scores.items()})

    def remote_scores(self, epoch: int) -> list[float]:
        seen: list[float] = []
        for r in range(self.size):
            if r != self.rank:
                seen += (_read(os.path.join(self.run, f"scores-{r}.json")) or {}).get(str(epoch),
                                                                                      [])
        self.remote_scores_seen += len(seen)
        return seen
