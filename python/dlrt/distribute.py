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
"""

from __future__ import annotations

import contextlib
from typing import Iterator, Sequence

from . import _dlrt

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
    def cluster_resolver(self) -> dict:
        return {"task_type": "worker", "task_id": self._s.rank, "num_workers": self._s.num_workers}

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
    def __init__(self, cluster_resolver: object = None, communication_options: object = None) -> None:
        if cluster_resolver is not None:
            raise NotImplementedError("dlrt's workers come from mpirun; cluster_resolver is not "
                                      "supported yet")
        super().__init__(_k.Strategy.multi_worker([], 0))


def cluster_resolver() -> dict:
    """What a MultiWorkerMirroredStrategy made now would join, read by the core as the strategy
    reads it (dlrt_worker_info_get): task_id (rank), num_workers, local_rank and source, the
    variables it came from ("OMPI_COMM_WORLD_*" for mpirun, "RANK/WORLD_SIZE" for torchrun,
    "SLURM_PROCID/NTASKS" for srun, "TF_CONFIG"; "" when this process is the only worker).
    Two sources that disagree (TF_CONFIG against mpirun's) raise InvalidArgumentError."""
    return _k.worker_info()
