"""Keras' custom training loop: a model called on eager tensors inside a GradientTape, a
loss object called on (y, logits), optimizer.apply_gradients (keras/_eager.py)."""

import numpy as np
import pytest

import dlrt as tf
from conftest import have_fashion_mnist

keras = tf.keras


def mlp():
    inputs = keras.Input(shape=(784,), name="digits")
    x1 = keras.layers.Dense(64, activation="relu")(inputs)
    x2 = keras.layers.Dense(64, activation="relu")(x1)
    outputs = keras.layers.Dense(10, name="predictions")(x2)
    return keras.Model(inputs=inputs, outputs=outputs)


def test_an_eager_call_matches_predict_on_the_same_first_weights():
    x = np.random.default_rng(0).random((5, 784), dtype=np.float32)
    for make in (mlp, lambda: keras.Sequential([keras.layers.Dense(32, activation="relu",
                                                                   input_shape=(784,)),
                                                keras.layers.Dense(10)])):
        model = make()
        model.compile(optimizer="adam", loss="mse")
        # Both draw the weights with nn's initializers from the same seed and names.
        np.testing.assert_allclose(model(x).numpy(), model.predict(x, verbose=0),
                                   rtol=1e-5, atol=1e-6)
        assert len(model.trainable_weights) == 2 * len(model.layers)  # a kernel and a bias each


def test_functional_layers_are_the_objects_the_user_holds():
    inputs = keras.Input(shape=(4,))
    dense = keras.layers.Dense(3)
    model = keras.Model(inputs, dense(inputs))
    assert any(layer is dense for layer in model.layers)


@pytest.mark.skipif(not have_fashion_mnist(), reason="needs dataset-fashion-mnist")
def test_the_custom_training_loop_of_kerass_guide():
    (x_train, y_train), _ = keras.datasets.fashion_mnist.load_data()
    x_train = np.reshape(x_train[:6400], (-1, 784)).astype("float32") / 255.0
    y_train = y_train[:6400].astype("int32")
    model = mlp()
    optimizer = keras.optimizers.Adam(learning_rate=1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    before = tf._dlrt.tape_cache_size()
    losses = []
    for epoch in range(2):
        for step in range(0, len(x_train), 64):
            x_batch_train, y_batch_train = x_train[step:step + 64], y_train[step:step + 64]
            with tf.GradientTape() as tape:
                logits = model(x_batch_train, training=True)
                loss_value = loss_fn(y_batch_train, logits)
            grads = tape.gradient(loss_value, model.trainable_weights)
            optimizer.apply_gradients(zip(grads, model.trainable_weights))
            losses.append(float(loss_value))
    assert np.mean(losses[-20:]) < 0.6 * np.mean(losses[:20])
    logits = model(x_train[:1000]).numpy()
    assert (logits.argmax(axis=1) == y_train[:1000]).mean() > 0.75
    # Every step recorded the same calls on the same shapes: one compiled backward.
    assert tf._dlrt.tape_cache_size() - before == 1


def test_batch_norm_updates_its_moving_statistics_in_training_calls():
    bn = keras.layers.BatchNormalization(momentum=0.5)
    x = np.random.default_rng(1).normal(3.0, 2.0, (256, 4)).astype(np.float32)
    bn(x, training=False)
    mean_var = [w for w in bn._eager_weights if "mean" in w.name][0]
    np.testing.assert_allclose(mean_var.numpy(), 0.0)
    bn(x, training=True)
    np.testing.assert_allclose(mean_var.numpy(), 0.5 * x.mean(axis=0), rtol=1e-4)


def test_eager_training_and_fit_train_one_model():
    rng = np.random.default_rng(2)
    x = rng.random((256, 8), dtype=np.float32)
    y = (x.sum(axis=1) > 4).astype(np.int32)
    model = keras.Sequential([keras.layers.Dense(16, activation="relu", input_shape=(8,)),
                              keras.layers.Dense(2)])
    model.compile(optimizer=keras.optimizers.SGD(0.1),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    opt = keras.optimizers.SGD(0.1)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    for _ in range(5):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_weights),
                                model.trainable_weights))
    # predict sees the eagerly trained weights...
    np.testing.assert_allclose(model.predict(x, verbose=0), model(x).numpy(), rtol=1e-5, atol=1e-6)
    # ...and the eager weights see what fit trained.
    model.fit(x, y, epochs=2, batch_size=32, verbose=0)
    np.testing.assert_allclose(model(x).numpy(), model.predict(x, verbose=0), rtol=1e-5, atol=1e-6)


def test_layers_called_eagerly_are_freed():
    # A layer owns its compiled calls; nothing may hold it from C++ in a cycle Python cannot
    # see (nanobind lists what is still alive when the interpreter exits).
    from conftest import run_python
    rc, out, err = run_python("""
        import gc, weakref
        import numpy as np
        import dlrt as tf
        layer = tf.keras.layers.Dense(4)
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(layer(np.ones((2, 3), np.float32)))
        tape.gradient(y, layer._eager_weights)
        ref = weakref.ref(layer)
        del layer, y, tape
        gc.collect()
        print("freed", ref() is None)
    """)
    assert rc == 0, err
    assert out.strip() == "freed True"
    assert "leaked" not in err, err


def test_a_new_layer_or_loss_never_runs_a_freed_ones_graph():
    # Compiled calls are cached by a serial number of the call, not by the layer's address: a
    # layer freed and another made in its place (often at the same address) with another
    # activation, or a loss of another kind, must compute its own function. The process ends
    # without the arena's "still in use" warning (the caches are dropped before the runtime).
    from conftest import run_python
    rc, out, err = run_python("""
        import gc
        import numpy as np
        import dlrt as tf
        x = -np.ones((2, 3), np.float32)
        y_true, y_pred = np.zeros((2, 1), np.float32), np.full((2, 1), 2.0, np.float32)
        for i in range(40):
            relu = i % 2 == 1
            layer = tf.keras.layers.Dense(2, activation="relu" if relu else None,
                                          kernel_initializer="ones")
            out = layer(x).numpy()
            assert (out == 0).all() if relu else (out == -3).all(), (i, out)
            loss = tf.keras.losses.MeanSquaredError() if relu else tf.keras.losses.MeanAbsoluteError()
            value = float(loss(y_true, y_pred))
            assert value == (4.0 if relu else 2.0), (i, value)
            del layer, loss
            gc.collect()
        print("ok")
    """)
    assert rc == 0, err
    assert out.strip() == "ok"
    assert "still in use" not in err, err


def test_a_layers_weights_are_keras_properties():
    layer = tf.keras.layers.Dense(3)
    assert layer.weights == [] and layer.trainable_weights == []  # not built yet
    layer(np.ones((2, 4), np.float32))
    assert [tuple(w.shape) for w in layer.weights] == [(4, 3), (3,)]
    assert layer.trainable_variables == layer.trainable_weights == layer.weights
    layer.trainable = False
    assert layer.trainable_weights == [] and len(layer.non_trainable_weights) == 2
    bn = tf.keras.layers.BatchNormalization()
    bn(np.ones((2, 4), np.float32))
    assert len(bn.trainable_weights) == 2 and len(bn.non_trainable_weights) == 2
