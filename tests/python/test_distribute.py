"""dlrt.distribute: where a worker's place in the job comes from (mpirun, torchrun, srun,
TF_CONFIG), as the core reads it, and a clear error when two sources disagree."""

import json

from conftest import run_python

TF_CONFIG = json.dumps({"cluster": {"chief": ["a:1"], "worker": ["b:1"]},
                        "task": {"type": "worker", "index": 0}})
CLEAN = {"OMPI_COMM_WORLD_RANK": "", "OMPI_COMM_WORLD_SIZE": "", "RANK": "", "WORLD_SIZE": "",
         "SLURM_PROCID": "", "SLURM_NTASKS": "", "TF_CONFIG": ""}


def resolve(env: dict) -> str:
    rc, out, err = run_python("""
        import dlrt as tf
        try:
            r = tf.distribute.cluster_resolver()
            print(r["source"], r["task_id"], r["num_workers"])
        except tf.errors.InvalidArgumentError as e:
            print("InvalidArgumentError:", e)
    """, env={**CLEAN, **env})
    assert rc == 0, err
    return out.strip()


def test_alone_is_worker_zero_of_one():
    assert resolve({}) == "0 1"


def test_tf_config_numbers_the_chief_first():
    assert resolve({"TF_CONFIG": TF_CONFIG}) == "TF_CONFIG 1 2"


def test_slurm_and_mpirun():
    assert resolve({"SLURM_PROCID": "3", "SLURM_NTASKS": "4"}) == "SLURM_PROCID/NTASKS 3 4"
    # mpirun inside a Slurm job: mpirun's own variables win over the inherited ones.
    assert resolve({"SLURM_PROCID": "0", "SLURM_NTASKS": "8", "OMPI_COMM_WORLD_RANK": "1",
                    "OMPI_COMM_WORLD_SIZE": "2"}) == "OMPI_COMM_WORLD_* 1 2"


def test_disagreeing_sources_are_an_error_that_names_both():
    out = resolve({"TF_CONFIG": TF_CONFIG, "OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2"})
    assert out.startswith("InvalidArgumentError: the worker sources disagree")
    assert "OMPI_COMM_WORLD_* says worker 0 of 2, TF_CONFIG says worker 1 of 2" in out
    assert resolve({"TF_CONFIG": "{not json"}).startswith("InvalidArgumentError: TF_CONFIG")


def strategy_with(resolver: str, env: dict) -> str:
    rc, out, err = run_python(f"""
        import dlrt as tf
        try:
            r = {resolver}
            print(repr(r), r.cluster_spec())
            s = tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver=r)
            print("replicas", s.num_replicas_in_sync, s.cluster_resolver.task_id)
        except (tf.errors.InvalidArgumentError, RuntimeError, TypeError) as e:
            print(type(e).__name__ + ":", e)
    """, env={**CLEAN, **env})
    assert rc == 0, err
    return out.strip()


def test_tensorflows_resolvers_describe_the_job_and_are_checked_against_the_launcher():
    cr = "tf.distribute.cluster_resolver"
    # Alone, TF_CONFIG unset: TensorFlow's empty cluster, one worker; the strategy takes it.
    out = strategy_with(f"{cr}.TFConfigClusterResolver()", {})
    assert "task_type='worker', task_id=0, rank=0, num_workers=1) {}" in out
    assert out.endswith("replicas 1 0")
    # TF_CONFIG's numbering (the chief first) and its addresses.
    out = strategy_with(f"{cr}.TFConfigClusterResolver()", {"TF_CONFIG": TF_CONFIG})
    assert "task_type='worker', task_id=0, rank=1, num_workers=2)" in out
    assert "{'chief': ['a:1'], 'worker': ['b:1']}" in out
    # ... but no mpirun started this process as worker 1 of 2: the transport says so.
    assert "InvalidArgumentError:" in out and "MPI_COMM_WORLD has this process as rank 0 of 1" in out
    # A Slurm resolver in a process no launcher started as worker 3 of 4: refused by name.
    out = strategy_with(f"{cr}.SlurmClusterResolver()", {"SLURM_PROCID": "", "SLURM_NTASKS": ""})
    assert out.startswith("RuntimeError: SlurmClusterResolver: not in a Slurm job step")
    rc, out, err = run_python("""
        import dlrt as tf
        r = tf.distribute.cluster_resolver.ClusterResolver("worker", 3, 3, 4)
        try:
            tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver=r)
        except tf.errors.InvalidArgumentError as e:
            print(e)
        try:
            tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver="grpc://x")
        except TypeError as e:
            print("TypeError", e)
    """, env=CLEAN)
    assert rc == 0, err
    assert "ClusterResolver says worker 3 of 4, the environment (no launcher) says worker 0 of 1" in out
    assert "TypeError cluster_resolver: expected" in out
