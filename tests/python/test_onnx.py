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
