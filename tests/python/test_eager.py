"""Eager tensors and the ops generated from the schema, against NumPy."""

import numpy as np
import pytest

import dlrt as tf


def test_constant_round_trips_through_numpy():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = tf.constant(a)
    assert t.shape == (3, 4) and t.shape.as_list() == [3, 4]
    assert t.dtype == tf.float32 and t.dtype == np.float32
    np.testing.assert_array_equal(t.numpy(), a)
    # A constant is a copy: changing the array later does not change it.
    a[0, 0] = 100
    assert t.numpy()[0, 0] == 0


def test_python_numbers_take_tensorflows_default_dtypes():
    assert tf.constant(1.5).dtype == tf.float32
    assert tf.constant(3).dtype == tf.int32
    assert tf.constant([1.0, 2.0]).dtype == tf.float32
    assert tf.constant(np.float64(1.0)).dtype == tf.float64
    assert tf.constant([1, 2], dtype=tf.float32).dtype == tf.float32


@pytest.mark.parametrize("op,fn", [
    (lambda a, b: a + b, np.add), (lambda a, b: a - b, np.subtract),
    (lambda a, b: a * b, np.multiply), (lambda a, b: a / b, np.divide),
    (lambda a, b: tf.maximum(a, b), np.maximum), (lambda a, b: a @ b.numpy().T, None),
])
def test_operators_match_numpy(op, fn):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 5)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32) + 3
    got = op(tf.constant(a), tf.constant(b)).numpy()
    want = fn(a, b) if fn is not None else a @ b.T
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_scalars_and_arrays_mix_with_tensors():
    x = tf.constant([1.0, 2.0, 3.0])
    np.testing.assert_allclose((x * 2 + 1).numpy(), [3, 5, 7])
    np.testing.assert_allclose((10 - x).numpy(), [9, 8, 7])
    np.testing.assert_allclose((np.ones(3, np.float32) + x).numpy(), [2, 3, 4])
    np.testing.assert_array_equal((x > 1.5).numpy(), [False, True, True])
    assert (x * 2).dtype == tf.float32


def test_reductions_matmul_and_activations():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 6)).astype(np.float32)
    np.testing.assert_allclose(tf.reduce_sum(a).numpy(), a.sum(), rtol=1e-5)
    np.testing.assert_allclose(tf.reduce_mean(a, axis=1).numpy(), a.mean(axis=1), rtol=1e-5)
    np.testing.assert_allclose(tf.math.reduce_max(a, axis=0, keepdims=True).numpy(),
                               a.max(axis=0, keepdims=True))
    np.testing.assert_allclose(tf.matmul(a, a, transpose_b=True).numpy(), a @ a.T, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(tf.nn.relu(a).numpy(), np.maximum(a, 0))
    sm = tf.nn.softmax(a).numpy()
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(sm, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    batched = rng.standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose((tf.constant(batched) @ batched.transpose(0, 2, 1)).numpy(),
                               batched @ batched.transpose(0, 2, 1), rtol=1e-4, atol=1e-5)


def test_random_normal_reduce_sum_of_the_speed_benchmark():
    x = tf.random.normal([1000, 1000])
    assert x.shape == (1000, 1000)
    s = tf.reduce_sum(x).numpy()
    assert abs(float(s)) < 5 * 1000  # a sum of 1e6 N(0,1) draws: sd 1000
    assert abs(float(np.std(x.numpy())) - 1.0) < 0.01
    # Two calls draw different numbers.
    assert not np.array_equal(tf.random.normal([4]).numpy(), tf.random.normal([4]).numpy())


def test_indexing_by_integers_and_slices():
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    t = tf.constant(a)
    for key in [1, -1, (0, 2), (slice(None), 1), (slice(1, 3), slice(None), slice(0, 5, 2)),
                (Ellipsis, 3), (slice(None, None, -1),), (1, slice(None), None)]:
        np.testing.assert_array_equal(t[key].numpy(), a[key], err_msg=str(key))
    with pytest.raises(IndexError):
        t[3]


def test_every_op_of_the_schema_is_a_function():
    names = tf.raw_ops.op_names()
    assert len(names) == len(tf._dlrt.op_signatures()) > 100
    for name in names:
        assert callable(getattr(tf.raw_ops, name)), name
    import inspect
    sig = inspect.signature(tf.raw_ops.conv2d)
    assert list(sig.parameters)[:2] == ["x", "w"]
    assert sig.parameters["padding"].default == "VALID"
    y = tf.raw_ops.concat([tf.constant([1.0]), tf.constant([2.0, 3.0])], axis=0)
    np.testing.assert_array_equal(y.numpy(), [1, 2, 3])
    parts = tf.split(tf.constant(np.arange(6, dtype=np.float32)), 3)
    assert [p.numpy().tolist() for p in parts] == [[0, 1], [2, 3], [4, 5]]


def test_dtypes_and_casts():
    x = tf.constant([1.7, -2.2])
    assert tf.cast(x, tf.int32).numpy().tolist() == [1, -2]
    b = tf.cast(x, tf.bfloat16)
    assert b.dtype == tf.bfloat16
    np.testing.assert_allclose(b.numpy(), [1.7, -2.2], rtol=1e-2)  # bf16 reads as float32
    assert b.numpy().dtype == np.float32


def test_non_contiguous_and_other_layouts_are_copied_correctly():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    np.testing.assert_array_equal(tf.identity(a[:, ::2]).numpy(), a[:, ::2])
    np.testing.assert_array_equal(tf.identity(a.T).numpy(), a.T)
    f = np.asfortranarray(a)
    np.testing.assert_array_equal((tf.constant(f) + 0).numpy(), a)


def test_bad_inputs_raise_and_never_crash():
    with pytest.raises(TypeError):
        tf.constant(np.array(["a", "b"]))
    with pytest.raises(TypeError):
        tf.constant(np.array([object(), object()]))
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        tf.constant(np.zeros((0, 3), np.float32))
    assert "empty dimension" in str(e.value)
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        tf.matmul(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))
    assert isinstance(e.value, ValueError) and "matmul" in str(e.value)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.reshape(tf.constant([1.0, 2.0, 3.0]), [2, 2])
    with pytest.raises(TypeError):
        tf.raw_ops.relu(tf.constant([1.0]), not_an_attr=[object()])
    with pytest.raises(TypeError, match="attribute 'axis': cannot use 'x' as a value of type int"):
        tf.raw_ops.softmax(tf.constant([1.0]), axis="x")
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        tf.raw_ops.softmax(tf.constant([1.0]), no_such_attr=1)
    assert "no_such_attr" in str(e.value)
    with pytest.raises(tf.errors.NotFoundError):
        tf._dlrt.run_op("no_such_op", [], None, None)
    with pytest.raises(TypeError):
        tf.Tensor(3)


def test_gradient_free_ops_say_why_in_their_docs():
    assert "no gradient" in tf.raw_ops.argmax.__doc__


def test_add_n_sums_a_list_and_its_gradient_reaches_each_term():
    a, b = tf.Variable([1.0, 2.0]), tf.Variable([3.0, 4.0])
    with tf.GradientTape() as tape:
        s = tf.reduce_sum(tf.add_n([a, 2.0 * b, np.ones(2, np.float32)]))
    ga, gb = tape.gradient(s, [a, b])
    np.testing.assert_allclose(ga.numpy(), [1, 1])
    np.testing.assert_allclose(gb.numpy(), [2, 2])
    assert float(s) == 1 + 2 + 6 + 8 + 2
    np.testing.assert_allclose(tf.math.add_n([tf.constant([5.0])]).numpy(), [5.0])
    with pytest.raises(ValueError):
        tf.add_n([])


def test_depth_to_space_is_tensorflows_and_differentiable():
    x = np.arange(2 * 2 * 3 * 8, dtype=np.float32).reshape(2, 2, 3, 8)
    r, c = 2, 2
    want = np.zeros((2, 4, 6, 2), np.float32)
    for b in range(2):
        for h in range(2):
            for w in range(3):
                for i in range(r):
                    for j in range(r):
                        want[b, h * r + i, w * r + j] = x[b, h, w, (i * r + j) * c:(i * r + j + 1) * c]
    np.testing.assert_array_equal(tf.nn.depth_to_space(x, 2).numpy(), want)
    np.testing.assert_array_equal(tf.nn.space_to_depth(want, 2).numpy(), x)
    v = tf.Variable(x)
    weights = np.random.default_rng(0).random(want.shape).astype(np.float32)
    with tf.GradientTape() as tape:
        s = tf.reduce_sum(tf.nn.depth_to_space(v, 2) * weights)
    np.testing.assert_allclose(tape.gradient(s, v).numpy(), tf.nn.space_to_depth(weights, 2).numpy())
    with pytest.raises(ValueError):
        tf.nn.depth_to_space(np.zeros((1, 2, 2, 6), np.float32), 2)
