"""GradientTape over eager ops and Variables, checked against gradients worked by hand and
against finite differences."""

import numpy as np
import pytest

import dlrt as tf


def test_the_square_of_a_watched_constant():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert float(tape.gradient(y, x)) == pytest.approx(6.0)


def test_variables_are_watched_and_a_linear_fit_converges():
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((64, 3)).astype(np.float32)
    true_w = np.array([[1.5], [-2.0], [0.5]], np.float32)
    ys = xs @ true_w + 0.25
    w = tf.Variable(tf.zeros([3, 1]), name="w")
    b = tf.Variable(0.0, name="b")
    before = tf._dlrt.tape_cache_size()
    for _ in range(200):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((tf.matmul(xs, w) + b - ys) ** 2)
        dw, db = tape.gradient(loss, [w, b])
        w.assign_sub(0.1 * dw)
        b.assign_sub(0.1 * db)
    np.testing.assert_allclose(w.numpy(), true_w, atol=1e-3)
    assert float(b) == pytest.approx(0.25, abs=1e-3)
    # Every step recorded the same ops on the same shapes: one compiled graph.
    assert tf._dlrt.tape_cache_size() - before == 1


def test_gradients_match_finite_differences():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 5)).astype(np.float32)
    w = rng.standard_normal((5, 3)).astype(np.float32)

    def f(wv):
        h = tf.nn.relu(tf.matmul(a, wv))
        return tf.reduce_sum(tf.nn.softmax(h) * tf.tanh(h))

    wt = tf.constant(w)
    with tf.GradientTape() as tape:
        tape.watch(wt)
        y = f(wt)
    g = tape.gradient(y, wt).numpy()
    eps = 1e-2
    for (i, j) in [(0, 0), (2, 1), (4, 2)]:
        wp, wm = w.copy(), w.copy()
        wp[i, j] += eps
        wm[i, j] -= eps
        fd = (float(f(tf.constant(wp))) - float(f(tf.constant(wm)))) / (2 * eps)
        assert g[i, j] == pytest.approx(fd, rel=2e-2, abs=2e-3)


def test_unconnected_persistent_and_nonscalar_targets():
    x = tf.Variable([1.0, 2.0])
    z = tf.Variable([5.0])
    with tf.GradientTape(persistent=True) as tape:
        y = x * x            # a non-scalar target: the gradient of its sum
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2.0, 4.0])
    assert tape.gradient(y, z) is None
    np.testing.assert_allclose(tape.gradient(y, z, unconnected_gradients="zero").numpy(), [0.0])
    np.testing.assert_allclose(
        tape.gradient(y, x, output_gradients=tf.constant([1.0, 10.0])).numpy(), [2.0, 40.0])
    with tf.GradientTape() as once:
        y = x * 3.0
    once.gradient(y, x)
    with pytest.raises(RuntimeError):
        once.gradient(y, x)


def test_dropout_gradient_uses_the_forward_mask():
    x = tf.Variable(tf.ones([1000]))
    with tf.GradientTape() as tape:
        y = tf.nn.dropout(x, rate=0.5)
        s = tf.reduce_sum(y)
    g = tape.gradient(s, x).numpy()
    np.testing.assert_array_equal(g, y.numpy())  # d(sum(x*mask))/dx = mask = y for x = 1
    assert 300 < np.count_nonzero(g) < 700


def test_an_op_without_gradient_says_so():
    x = tf.Variable([1.0, 3.0, 2.0])
    with tf.GradientTape() as tape:
        i = tf.cast(tf.argmax(x), tf.float32)
    with pytest.raises(tf.errors.OpError) as e:
        tape.gradient(i, x)
    assert "argmax" in str(e.value) or "cast" in str(e.value)


def test_a_variable_on_either_side_of_an_operator_is_watched():
    # `w * x` and `x * w` (and every other operator, indexing included) record the Variable,
    # so the gradient reaches it from either side.
    w = tf.Variable(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    x = tf.constant(np.array([[0.5, -1.0], [2.0, 1.0]], np.float32))
    cases = {
        "w * x": (lambda: w * x, x.numpy()),
        "w + x": (lambda: w + x, np.ones((2, 2))),
        "w - x": (lambda: w - x, np.ones((2, 2))),
        "x - w": (lambda: x - w, -np.ones((2, 2))),
        "w / 2": (lambda: w / 2.0, np.full((2, 2), 0.5)),
        "-w": (lambda: -w, -np.ones((2, 2))),
        "w ** 2": (lambda: w ** 2, 2 * w.numpy()),
        "w @ x": (lambda: w @ x, np.ones((2, 2)) @ x.numpy().T),
        "w[0]": (lambda: w[0], np.array([[1, 1], [0, 0]])),
        "2.0 * w": (lambda: 2.0 * w, np.full((2, 2), 2.0)),
    }
    for name, (f, want) in cases.items():
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(f())
        g = tape.gradient(y, w)
        assert g is not None, name
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-6, err_msg=name)


def test_functions_that_convert_their_arguments_still_reach_the_variable():
    # convert_to_tensor(variable) under a tape is a recorded read (TensorFlow's
    # ReadVariableOp); it used to copy the value into a constant, cutting the gradient.
    v = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
    cases = {
        "transpose": (lambda: tf.transpose(v), np.full(6, 2.0)),
        "concat": (lambda: tf.concat([v, v], 0), np.full(6, 4.0)),
        "convert_to_tensor": (lambda: tf.convert_to_tensor(v), np.full(6, 2.0)),
        "depth_to_space": (lambda: tf.nn.depth_to_space(tf.reshape(v, [1, 1, 1, 6])[..., :4], 2),
                           np.array([2, 2, 2, 2, 0, 0.0])),
    }
    for name, (f, want) in cases.items():
        with tf.GradientTape() as tape:
            s = tf.reduce_sum(f() * 2.0)
        g = tape.gradient(s, v)
        assert g is not None, name
        np.testing.assert_allclose(g.numpy().ravel(), want, err_msg=name)
    assert tf.convert_to_tensor(v) is v.value()  # outside a tape: the value, no copy
