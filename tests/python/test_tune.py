"""dlrt.tune: KerasTuner's RandomSearch and Hyperband, trials concurrent over devices."""

import random

import numpy as np
import pytest

import dlrt as tf
from conftest import run_python


def blobs(n=240, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n).astype(np.int32)
    centres = np.array([[2, 0, 0, 2], [0, 2, 2, 0], [-2, -2, 0, 0]], np.float32)
    return centres[y] + rng.normal(0, 0.7, (n, 4)).astype(np.float32), y


def build(hp):
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(hp.Int("units", 4, 32, step=4), activation="relu", input_shape=(4,)),
        tf.keras.layers.Dense(3)])
    model.compile(optimizer=tf.keras.optimizers.Adam(hp.Float("lr", 1e-4, 1e-1, sampling="log")),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def test_hyperparameters_draw_within_their_ranges_and_repeat_with_the_seed():
    draws = []
    for _ in range(2):
        hp = tf.tune.HyperParameters(random.Random(7))
        draws.append((hp.Int("n", 8, 64, step=8), hp.Float("lr", 1e-4, 1e-1, sampling="log"),
                      hp.Choice("act", ["relu", "tanh"]), hp.Boolean("bn")))
    assert draws[0] == draws[1]
    n, lr, act, bn = draws[0]
    assert n in range(8, 65, 8) and 1e-4 <= lr <= 1e-1 and act in ("relu", "tanh")
    assert isinstance(bn, bool)
    defaults = tf.tune.HyperParameters()
    assert defaults.Int("n", 8, 64) == 8 and defaults.Choice("act", ["tanh", "relu"]) == "tanh"
    assert set(defaults.space) == {"n", "act"}
    with pytest.raises(ValueError):
        defaults.Float("x", 0.0, 1.0, sampling="log")


def test_random_search_ranks_its_trials_and_keeps_the_best_model():
    x, y = blobs()
    tuner = tf.tune.RandomSearch(build, objective="val_accuracy", max_trials=4, seed=3,
                                 devices=["/CPU:0"], early_stopping=False)
    tuner.search(x, y, epochs=3, batch_size=32, validation_split=0.25)
    assert len(tuner.trials) == 4 and all(t.error is None for t in tuner.trials)
    scores = [t.score for t in tuner.trials]
    best_hp = tuner.get_best_hyperparameters(1)[0]
    best = tuner.get_best_models(1)[0]
    assert max(scores) == next(t.score for t in tuner.trials if t.hyperparameters is best_hp)
    _, acc = best.evaluate(x[180:], y[180:], verbose=0)
    assert acc == pytest.approx(max(scores), abs=1e-6)  # the model as the trial left it


def test_median_rule_stops_bad_trials_and_a_failing_configuration_fails_its_trial():
    x, y = blobs()

    def hypermodel(hp):
        if hp.Choice("broken", [False, True]):
            raise ValueError("this configuration cannot be built")
        return build(hp)

    tuner = tf.tune.RandomSearch(hypermodel, objective="val_loss", max_trials=10, seed=5,
                                 devices=["/CPU:0"])
    tuner.search(x, y, epochs=4, batch_size=32, validation_split=0.25)
    broken = [t for t in tuner.trials if t.hyperparameters.values["broken"]]
    assert broken and all(t.error and "cannot be built" in t.error for t in broken)
    assert any(t.stopped_early and t.epochs < 4 for t in tuner.trials)
    assert tuner.get_best_hyperparameters(1)[0].values["broken"] is False


def test_hyperband_runs_its_brackets_and_trains_the_survivors_longest():
    x, y = blobs()
    tuner = tf.tune.Hyperband(build, objective="val_accuracy", max_epochs=9, factor=3, seed=1,
                              devices=["/CPU:0"])
    tuner.search(x, y, batch_size=32, validation_split=0.25)
    assert len(tuner.trials) == 9 + 5 + 3  # brackets s = 2, 1, 0 of max_epochs 9, factor 3
    assert max(t.epochs for t in tuner.trials) == 9
    assert min(t.epochs for t in tuner.trials) == 1


def test_trials_run_concurrently_on_logical_devices():
    rc, out, err = run_python("""
        import numpy as np, dlrt as tf
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])
        rng = np.random.default_rng(0)
        x = rng.normal(size=(200, 4)).astype(np.float32)
        y = (x[:, 0] > 0).astype(np.int32)
        def build(hp):
            m = tf.keras.Sequential([tf.keras.layers.Dense(hp.Int("u", 4, 16, step=4),
                                                           activation="relu", input_shape=(4,)),
                                     tf.keras.layers.Dense(2)])
            m.compile(optimizer="adam",
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
            return m
        t = tf.tune.RandomSearch(build, objective="val_accuracy", max_trials=6, seed=0)
        t.search(x, y, epochs=2, validation_split=0.2)
        print(sorted({r.device for r in t.trials}), [r.error for r in t.trials if r.error])
    """)
    assert rc == 0, err
    assert out.strip() == "['/device:CPU:0', '/device:CPU:1'] []"
