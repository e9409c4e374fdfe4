"""dlrt.distribute: tf.distribute's MirroredStrategy and MultiWorkerMirroredStrategy.

    strategy = dlrt.distribute.MirroredStrategy()      # every GPU, else every CPU device
    print('Number of devices:', strategy.num_replicas_in_sync)
    with strategy.scope():
        model = dlrt.keras.Sequential([...])
        model.compile(...)
    model.fit(x, y, batch_size=64 * strategy.num_replicas_in_sync)

A model compiled inside the scope trains data-parallel (nn's strategies, docs/design.md
section 7): a replica per device (and per worker of an mpirun job), gradients summed every
step, identical weights. The batch given to fit is the global batch. On a CPU-only machine,
split the CPU into logical devices first (dlrt.config.set_logical_device_configuration) to
get several replicas.

Workers: MultiWorkerMirroredStrategy joins the processes that mpirun (or srun) started; their
rank and size come from the launcher's variables, or TensorFlow's TF_CONFIG, which must then
agree with the launcher's (cluster_resolver() shows what was found). Workers talk over MPI.
A resolver given to the strategy (cluster_resolver.TFConfigClusterResolver(),
SlurmClusterResolver()) is checked against that: it must describe the same place in the job.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Iterator, Sequence

from . import _dlrt
from .errors import InvalidArgumentError

_k = _dlrt.keras


def _spec(d: object) -> str:
    return d if isinstance(d, str) else getattr(d, "name", str(d))


class Strategy:
    def __init__(self, handle: object) -> None:
        self._s = handle

    @property
    def num_replicas_in_sync(self) -> int:
        return self._s.num_replicas_in_sync

    @property
    def extended(self) -> "Strategy":
        return self

    @property
    def worker_devices(self) -> list[str]:
        return list(self._s.devices)

    @property
    def cluster_resolver(self) -> "ClusterResolver":
        """This worker's place in the job the strategy joined (one worker for Mirrored)."""
        return ClusterResolver("worker", self._s.rank, self._s.rank, self._s.num_workers)

    @contextlib.contextmanager
    def scope(self) -> Iterator["Strategy"]:
        """Models compiled inside train under this strategy."""
        previous = self._s.enter_scope()
        try:
            yield self
        finally:
            _k.Strategy.exit_scope(previous)


class MirroredStrategy(Strategy):
    def __init__(self, devices: Sequence[object] | None = None,
                 cross_device_ops: object = None) -> None:
        super().__init__(_k.Strategy.mirrored([_spec(d) for d in devices or []], 0))


class MultiWorkerMirroredStrategy(Strategy):
    def __init__(self, cluster_resolver: "ClusterResolver | None" = None,
                 communication_options: object = None) -> None:
        if cluster_resolver is not None:
            _check_resolver(cluster_resolver)
        super().__init__(_k.Strategy.multi_worker([], 0))


class ClusterResolver:
    """A worker's place in a multi-worker job as one source describes it, with TensorFlow's
    ClusterResolver attributes: task_type ("worker" or "chief") and task_id (the index within
    that type, as TensorFlow counts it), cluster_spec() (the addresses, where the source names
    them), plus dlrt's rank (the chief first, then the workers) and num_workers."""

    def __init__(self, task_type: str, task_id: int, rank: int, num_workers: int,
                 cluster: dict | None = None, source: str = "") -> None:
        self.task_type = task_type
        self.task_id = task_id
        self.rank = rank
        self.num_workers = num_workers
        self.source = source
        self._cluster = dict(cluster or {})

    def cluster_spec(self) -> dict[str, list[str]]:
        """{task type: [address, ...]}: TF_CONFIG's "cluster"; empty where the source has no
        addresses (Slurm, mpirun: dlrt's workers talk over MPI, not to these addresses)."""
        return {k: list(v) for k, v in self._cluster.items()}

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(task_type={self.task_type!r}, task_id={self.task_id}, "
                f"rank={self.rank}, num_workers={self.num_workers})")


class TFConfigClusterResolver(ClusterResolver):
    """TensorFlow's TF_CONFIG, as the core reads it (the chief is rank 0); without TF_CONFIG,
    one worker, as TensorFlow's resolver gives an empty cluster."""

    def __init__(self) -> None:
        raw = os.environ.get("TF_CONFIG", "")
        if not raw:
            super().__init__("worker", 0, 0, 1, {}, "TF_CONFIG")
            return
        info = _k.worker_info()  # the core parses and checks TF_CONFIG (and its launcher)
        config = json.loads(raw)
        task = config.get("task", {})
        super().__init__(str(task.get("type", "worker")), int(task.get("index", 0)),
                         info["task_id"], info["num_workers"], config.get("cluster", {}),
                         "TF_CONFIG")


class SlurmClusterResolver(ClusterResolver):
    """Slurm's SLURM_PROCID and SLURM_NTASKS (srun); RuntimeError outside a Slurm job step."""

    def __init__(self) -> None:
        try:
            rank, size = int(os.environ["SLURM_PROCID"]), int(os.environ["SLURM_NTASKS"])
        except (KeyError, ValueError) as e:
            raise RuntimeError("SlurmClusterResolver: not in a Slurm job step (SLURM_PROCID and "
                               "SLURM_NTASKS, set by srun, are missing or not numbers)") from e
        super().__init__("worker", rank, rank, size, {}, "SLURM_PROCID/NTASKS")


def _check_resolver(resolver: object) -> None:
    """A resolver given to MultiWorkerMirroredStrategy must say what the launcher says."""
    if not isinstance(resolver, ClusterResolver):
        raise TypeError(f"cluster_resolver: expected a dlrt.distribute.cluster_resolver resolver "
                        f"(TFConfigClusterResolver, SlurmClusterResolver), got "
                        f"{type(resolver).__name__}")
    found = _k.worker_info()
    if (resolver.rank, resolver.num_workers) != (found["task_id"], found["num_workers"]):
        launcher = found["source"] or "the environment (no launcher)"
        raise InvalidArgumentError(
            f"cluster_resolver: {type(resolver).__name__} says worker {resolver.rank} of "
            f"{resolver.num_workers}, {launcher} says worker {found['task_id']} of "
            f"{found['num_workers']}; dlrt's workers are the processes the launcher started")


class _ClusterResolvers:
    """dlrt.distribute.cluster_resolver: called, what a MultiWorkerMirroredStrategy made now
    would join, read by the core as the strategy reads it (dlrt_worker_info_get): a dict of
    task_id (rank), num_workers, local_rank and source, the variables it came from
    ("OMPI_COMM_WORLD_*" for mpirun, "RANK/WORLD_SIZE" for torchrun, "SLURM_PROCID/NTASKS" for
    srun, "TF_CONFIG"; "" when this process is the only worker). Two sources that disagree
    (TF_CONFIG against mpirun's) raise InvalidArgumentError. Its attributes are TensorFlow's
    resolver classes (tf.distribute.cluster_resolver.TFConfigClusterResolver, ...)."""

    ClusterResolver = ClusterResolver
    TFConfigClusterResolver = TFConfigClusterResolver
    SlurmClusterResolver = SlurmClusterResolver

    def __call__(self) -> dict:
        return _k.worker_info()


cluster_resolver = _ClusterResolvers()
