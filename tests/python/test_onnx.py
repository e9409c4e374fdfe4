"""dlrt.onnx.InferenceSession, onnxruntime's call shape, on a model dlrt.keras exported."""

import numpy as np
import pytest

import dlrt as tf
import dlrt.onnx as ort


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    rng = np.random.default_rng(0)
    x = rng.random((256, 12, 12, 1), dtype=np.float32)
    y = rng.integers(0, 4, 256).astype(np.int32)
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(4, 3, activation='relu', input_shape=(12, 12, 1)),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(4)])
    model.compile(optimizer='adam', loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, epochs=1, verbose=0)
    path = str(tmp_path_factory.mktemp("onnx") / "cnn.onnx")
    model.save(path)
    return path, model, x


def test_the_session_answers_as_the_model_predicts(exported):
    path, model, x = exported
    sess = ort.InferenceSession(path)
    inputs, outputs = sess.get_inputs(), sess.get_outputs()
    assert len(inputs) == 1 and len(outputs) == 1
    assert inputs[0].type == "tensor(float)" and inputs[0].shape[1:] == [12, 12, 1]
    (got,) = sess.run(None, {inputs[0].name: x[:8]})
    np.testing.assert_allclose(got, model.predict(x[:8], verbose=0), rtol=1e-4, atol=1e-5)
    # Batch 1, by output name, and a second shape compiled beside the first.
    (one,) = sess.run([outputs[0].name], {inputs[0].name: x[:1]})
    np.testing.assert_allclose(one, got[:1], rtol=1e-4, atol=1e-5)
    assert "CPUExecutionProvider" in sess.get_providers()


def test_feeds_of_any_layout_and_outputs_the_caller_owns(exported):
    path, model, x = exported
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    (want,) = sess.run(None, {name: np.ascontiguousarray(x[:4])})
    # A C-ordered view (used in place), a Fortran-ordered copy (copied) and a dlrt.Tensor feed
    # the same numbers; float64 is refused, as onnxruntime refuses a wrong element type.
    for feed in (x[:4], np.asfortranarray(x[:4]), x[:4].astype(np.float64), tf.constant(x[:4])):
        if isinstance(feed, np.ndarray) and feed.dtype == np.float64:
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(None, {name: feed})  # the model takes float32, as onnxruntime says
            continue
        (got,) = sess.run(None, {name: feed})
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    strided = np.repeat(x[:4], 2, axis=0)[::2]
    assert not strided.flags.c_contiguous
    np.testing.assert_allclose(sess.run(None, {name: strided})[0], want, rtol=1e-5, atol=1e-6)
    # Each run's outputs are new, writable arrays: changing one changes nothing else.
    (a,) = sess.run(None, {name: x[:4]})
    (b,) = sess.run(None, {name: x[:4]})
    assert a.flags.writeable and a.flags.c_contiguous and a.dtype == np.float32
    a[:] = 0
    np.testing.assert_allclose(b, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sess.run(None, {name: x[:4]})[0], want, rtol=1e-5, atol=1e-6)


def test_bad_feeds_and_files_are_errors(exported, tmp_path):
    path, _, x = exported
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    with pytest.raises(tf.errors.InvalidArgumentError, match="no input 'nope'"):
        sess.run(None, {"nope": x[:1]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="is not given"):
        sess.run(None, {})
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(None, {name: x[:1, :5]})  # wrong image size
    with pytest.raises(ValueError, match="no output"):
        sess.run(["nope"], {name: x[:1]})
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(tf.errors.OpError):
        ort.InferenceSession(str(bad))
    with pytest.raises(tf.errors.OpError):
        ort.InferenceSession(str(tmp_path / "missing.onnx"))
    with pytest.raises(ValueError):
        ort.InferenceSession(path, providers=["TensorrtExecutionProvider"])
