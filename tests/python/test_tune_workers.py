"""dlrt.tune under `mpirun -np 2`: the trials are shared out between the workers through the
tuner's folder, every worker ends knowing every result, and a worker that fails or dies makes
the other stop with an error naming it (never a hang)."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import dlrt as tf

MPIRUN = shutil.which("mpirun")

# Each rank writes what it saw to <out>/rank-<r>.json; errors are caught and written there too
# (and the rank exits 0) so that mpirun never aborts the other rank before it reports.
SCRIPT = textwrap.dedent("""
    import contextlib, io, json, os, sys, time
    import numpy as np
    import dlrt as tf

    folder, mode, out = sys.argv[1], sys.argv[2], sys.argv[3]
    rank = tf.distribute.cluster_resolver()["task_id"]
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 4)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int32)
    (x, y), (xv, yv) = (x[:300], y[:300]), (x[300:], y[300:])
    built = []

    def build(hp):
        model = tf.keras.Sequential([
            tf.keras.layers.Dense(hp.Int("units", 4, 32, step=4), activation="relu",
                                  input_shape=(4,)),
            tf.keras.layers.Dense(2)])
        model.compile(optimizer=tf.keras.optimizers.Adam(hp.Float("lr", 1e-3, 1e-1,
                                                                  sampling="log")),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
        if mode == "dies" and rank == 1:
            os._exit(0)  # gone without a word (exit status 0: mpirun lets the other run on)
        if mode == "raises" and rank == 1:
            raise KeyboardInterrupt("interrupted on worker 1")
        built.append(dict(hp.values))
        # Trials long enough that both workers take some, whatever the machine's load (where
        # worker 1 fails, worker 0's first trial waits until worker 1 has taken one).
        time.sleep(0.3 if mode not in ("dies", "raises") else 1.5 if len(built) == 1 else 0)
        return model

    report = {"rank": rank}
    try:
        if mode == "absent" and rank == 1:
            raise SystemExit(0)  # never comes to the search
        seed = rank if mode == "seeds" else None  # None: every worker takes worker 0's seed
        # Seconds of silence before a worker gives up on another: short where one fails.
        timeout = 3 if mode in ("dies", "raises", "absent") else 60
        tuner = tf.tune.RandomSearch(build, objective="val_accuracy", max_trials=6, seed=seed,
                                     devices=["/CPU:0"], directory=folder, project_name="rs",
                                     worker_timeout=timeout)
        tuner.search(x, y, epochs=3, batch_size=32, validation_data=(xv, yv))
        report["built"] = list(built)
        summary = io.StringIO()
        with contextlib.redirect_stdout(summary):
            tuner.results_summary(6)
        best = tuner.trials.index(tuner._ranked()[0])
        report.update(
            trials=[dict(id=t.trial_id, worker=t.worker, values=t.hyperparameters.values,
                         score=t.score, epochs=t.epochs, error=t.error,
                         last=t.history["val_accuracy"][-1]) for t in tuner.trials],
            best=best, best_values=tuner.get_best_hyperparameters(1)[0].values,
            summary=summary.getvalue(), remote_scores=tuner._exchange.remote_scores_seen,
            evaluate=tuner.get_best_models(1)[0].evaluate(xv, yv, verbose=0))

        band = tf.tune.Hyperband(build, objective="val_accuracy", max_epochs=4, factor=2,
                                 seed=1, devices=["/CPU:0"], directory=folder,
                                 project_name="hb", worker_timeout=timeout)
        band.search(x, y, batch_size=32, validation_data=(xv, yv))
        report["hyperband"] = dict(
            trials=[(t.trial_id, t.worker, t.epochs, len(t.history["loss"]))
                    for t in band.trials],
            best=band.get_best_hyperparameters(1)[0].values,
            evaluate=band.get_best_models(1)[0].evaluate(xv, yv, verbose=0))

        alone = tf.tune.RandomSearch(build, objective="val_accuracy", max_trials=2, seed=0,
                                     devices=["/CPU:0"], over_workers=False)
        alone.search(x, y, epochs=1, batch_size=32, validation_data=(xv, yv))
        report["alone"] = [t.worker for t in alone.trials if t.error is None]
    except BaseException as e:
        report["error"] = f"{type(e).__name__}: {e}"
    with open(os.path.join(out, f"rank-{rank}.json"), "w") as f:
        json.dump(report, f)
""")


def launch(tmp_path, mode):
    """Runs SCRIPT's `mode` under mpirun -np 2; returns {rank: its report} and mpirun's log."""
    base = tmp_path / mode
    base.mkdir()
    script = base / "search.py"
    script.write_text(SCRIPT)
    out = base / "out"
    out.mkdir()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.run([MPIRUN, "-np", "2", "--oversubscribe", "--mca",
                        "btl_vader_single_copy_mechanism", "none", "-x", "PYTHONPATH",
                        sys.executable, str(script), str(base / "tuner"), mode, str(out)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    reports = {}
    for rank in (0, 1):
        path = out / f"rank-{rank}.json"
        if path.exists():
            reports[rank] = json.loads(path.read_text())
    return reports, p.stdout + p.stderr


needs_mpirun = pytest.mark.skipif(MPIRUN is None, reason="needs mpirun (openmpi-bin)")


@needs_mpirun
def test_two_workers_share_the_trials_and_agree_on_the_best(tmp_path):
    reports, log = launch(tmp_path, "ok")
    assert set(reports) == {0, 1}, log
    r0, r1 = reports[0], reports[1]
    assert "error" not in r0 and "error" not in r1, (r0.get("error"), r1.get("error"))
    # Both drew the same six configurations (seed=None: worker 0's seed) and know every result.
    assert r0["trials"] == r1["trials"]
    trials = r0["trials"]
    assert all(t["error"] is None for t in trials)
    # Split: each worker ran some, every trial ran once, on the worker its result names.
    ran = {0: [t["values"] for t in trials if t["worker"] == 0],
           1: [t["values"] for t in trials if t["worker"] == 1]}
    assert ran[0] and ran[1] and len(ran[0]) + len(ran[1]) == 6
    assert sorted(map(str, r0["built"])) == sorted(map(str, ran[0]))
    assert sorted(map(str, r1["built"])) == sorted(map(str, ran[1]))
    # The same best trial, score and summary on both; the best model, loaded from its weights
    # on the worker that did not train it, evaluates as the trial left it.
    assert r0["best"] == r1["best"] and r0["best_values"] == r1["best_values"]
    assert r0["summary"] == r1["summary"] and "on worker" in r0["summary"]
    best = trials[r0["best"]]
    assert best["score"] == max(t["score"] for t in trials)
    assert r0["evaluate"] == pytest.approx(r1["evaluate"], abs=1e-6)
    assert r0["evaluate"][1] == pytest.approx(best["last"], abs=1e-6)
    # The median rule counted the other worker's epochs.
    assert r0["remote_scores"] + r1["remote_scores"] > 0
    # Hyperband: the same brackets and survivors on both; a trial continued on the other
    # worker kept its epochs (its history is as long as its epochs).
    h0, h1 = r0["hyperband"], r1["hyperband"]
    assert h0 == h1
    assert len(h0["trials"]) == 10 and max(t[2] for t in h0["trials"]) == 4
    assert all(t[2] == t[3] for t in h0["trials"])
    assert {t[1] for t in h0["trials"]} == {0, 1}
    # over_workers=False: each worker searched on its own.
    assert r0["alone"] == [0, 0] and r1["alone"] == [1, 1]


@needs_mpirun
def test_a_worker_that_dies_makes_the_other_stop_naming_it(tmp_path):
    reports, log = launch(tmp_path, "dies")
    assert set(reports) == {0}, log  # worker 1 is gone without a report
    error = reports[0]["error"]
    assert error.startswith("TimeoutError: dlrt.tune: worker 1 took trial"), error
    assert "no sign of life for worker_timeout=3 s" in error


@needs_mpirun
def test_a_worker_that_raises_makes_the_other_stop_naming_it(tmp_path):
    reports, log = launch(tmp_path, "raises")
    assert reports[1]["error"] == "KeyboardInterrupt: interrupted on worker 1", reports
    error = reports[0]["error"]
    assert error.startswith("RuntimeError: dlrt.tune: worker 1 failed (KeyboardInterrupt: "
                            "interrupted on worker 1)"), error


@needs_mpirun
def test_a_worker_that_never_joins_or_draws_other_trials_is_an_error(tmp_path):
    reports, log = launch(tmp_path, "absent")
    error = reports[0]["error"]
    assert error.startswith("TimeoutError: dlrt.tune: worker(s) 1 of 2 did not join"), error
    assert "a folder all of them see" in error
    reports, log = launch(tmp_path, "seeds")
    errors = [reports[r]["error"] for r in (0, 1)]
    assert any("every worker must run the same search" in e for e in errors), errors


def test_one_process_writes_no_files(tmp_path):
    import numpy as np
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int32)

    def build(hp):
        m = tf.keras.Sequential([tf.keras.layers.Dense(hp.Int("u", 2, 8, step=2),
                                                       input_shape=(4,)),
                                 tf.keras.layers.Dense(2)])
        m.compile(optimizer="adam",
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        return m

    tuner = tf.tune.RandomSearch(build, max_trials=2, seed=0, devices=["/CPU:0"],
                                 directory=str(tmp_path), project_name="p")
    tuner.search(x, y, epochs=1, validation_split=0.25)
    assert tuner.num_workers == 1 and all(t.worker == 0 for t in tuner.trials)
    assert list(tmp_path.iterdir()) == []
