"""Models dlrt.keras saves to ONNX, run by onnxruntime: the same outputs as dlrt's predict.

onnxruntime lives in the ONNX suite's venv (build/venv-onnx, made by `make test` from
tools/onnx-suite/requirements.txt), not in the package's: the exported file and the inputs
travel between the two as files.
"""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest

import dlrt as tf

ORT_VENV_PYTHON = os.path.join(os.environ.get("DLRT_BUILD_DIR", "build"), "venv-onnx", "bin",
                               "python")

# Runs the model in onnxruntime on x0.npy, x1.npy, ... (in the file's input order) and writes
# its outputs to y0.npy, y1.npy, ...; prints the input and output names.
RUN_ORT_MANY = """
import sys
import numpy as np
import onnxruntime as ort
model, folder, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
feeds = {i.name: np.load(f"{folder}/x{k}.npy") for k, i in enumerate(s.get_inputs())}
assert len(feeds) == count, [i.name for i in s.get_inputs()]
for k, y in enumerate(s.run(None, feeds)):
    np.save(f"{folder}/y{k}.npy", y)
print(",".join(i.name for i in s.get_inputs()) + ";" + ",".join(o.name for o in s.get_outputs()))
"""


def onnxruntime_outputs(model: str, x: np.ndarray, tmp_path) -> np.ndarray:
    """onnxruntime's first output for the one input x."""
    return onnxruntime_many(model, [x], tmp_path)[0][0]


def unet(interpolation: str, padding: str, output_padding) -> tf.keras.Model:
    """A U-Net's shape: down by pooling, up by a strided Conv2DTranspose and an UpSampling2D,
    the skips concatenated."""
    L = tf.keras.layers
    inputs = tf.keras.Input(shape=(20, 20, 3))
    c1 = L.Conv2D(8, (3, 3), padding="same", activation="relu")(inputs)          # 20x20x8
    c2 = L.Conv2D(16, (3, 3), padding="same", activation="relu")(L.MaxPooling2D((2, 2))(c1))
    bottom = L.Conv2D(16, (3, 3), padding="same", activation="relu")(L.MaxPooling2D((2, 2))(c2))
    up2 = L.Conv2DTranspose(16, (3, 3), strides=(2, 2), padding=padding,
                            output_padding=output_padding)(bottom)
    if up2.shape[1] != 10:  # VALID without output padding gives 11x11: crop by a 2x2 valid conv
        up2 = L.Conv2D(16, (2, 2))(up2)
    d2 = L.Conv2D(16, (3, 3), padding="same", activation="relu")(L.Concatenate()([up2, c2]))
    up1 = L.UpSampling2D((2, 2), interpolation=interpolation)(d2)
    d1 = L.Conv2D(8, (3, 3), padding="same", activation="relu")(L.Concatenate()([up1, c1]))
    return tf.keras.Model(inputs=inputs, outputs=L.Conv2D(4, (1, 1))(d1))


@pytest.mark.parametrize("interpolation,padding,output_padding", [
    ("nearest", "same", None),
    ("bilinear", "same", None),
    ("nearest", "valid", None),
    ("bilinear", "same", (1, 1)),
])
def test_a_unet_with_upsampling_and_transposed_convolutions_matches_onnxruntime(
        tmp_path, interpolation, padding, output_padding):
    tf.keras.utils.set_random_seed(3)
    model = unet(interpolation, padding, output_padding)
    model.compile(optimizer="adam", loss="mse")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 20, 20, 3)).astype(np.float32)
    # One epoch, so the weights are trained ones, not the initializers' symmetric draws.
    model.fit(x, rng.normal(size=(16, 20, 20, 4)).astype(np.float32), epochs=1, batch_size=8,
              verbose=0)
    path = str(tmp_path / "unet.onnx")
    model.save(path)
    ours = model.predict(x[:5], verbose=0)
    theirs = onnxruntime_outputs(path, x[:5], tmp_path)  # a batch size the model never saw
    assert theirs.shape == ours.shape == (5, 20, 20, 4)
    np.testing.assert_allclose(theirs, ours, atol=2e-4, rtol=1e-4)
    # And dlrt's own importer reads its export back.
    sess = tf.onnx.InferenceSession(path)
    np.testing.assert_allclose(sess.run(None, {sess.get_inputs()[0].name: x[:5]})[0], ours,
                               atol=2e-4, rtol=1e-4)


def layer_models():
    """(name, a model of one or two layers, its input) for each layer dlrt.keras has: each is
    saved and run by onnxruntime below."""
    L = tf.keras.layers
    rng = np.random.default_rng(7)
    image = rng.normal(size=(3, 8, 8, 4)).astype(np.float32)
    seq = rng.normal(size=(3, 6, 8)).astype(np.float32)
    vec = rng.normal(size=(3, 6)).astype(np.float32) * 3

    def seq_model(*layers, shape=(6, 8)):
        return tf.keras.Sequential([tf.keras.Input(shape=shape), *layers])

    def attention(causal: bool):
        i = tf.keras.Input(shape=(6, 8))
        return tf.keras.Model(i, L.MultiHeadAttention(2, 4, use_causal_mask=causal)(i, i))

    def residual():
        i = tf.keras.Input(shape=(6,))
        return tf.keras.Model(i, L.Add()([L.Dense(6)(i), i]))

    cases = [
        ("Conv2D + BatchNormalization + ReLU", lambda: seq_model(
            L.Conv2D(5, (3, 3)), L.BatchNormalization(), L.ReLU(), shape=(8, 8, 4)), image),
        ("DepthwiseConv2D", lambda: seq_model(L.DepthwiseConv2D((3, 3), padding="same"),
                                              shape=(8, 8, 4)), image),
        ("ZeroPadding2D", lambda: seq_model(L.ZeroPadding2D((1, 2)), shape=(8, 8, 4)), image),
        ("AveragePooling2D + GlobalMaxPooling2D", lambda: seq_model(
            L.AveragePooling2D((2, 2)), L.GlobalMaxPooling2D(), shape=(8, 8, 4)), image),
        ("Embedding", lambda: seq_model(L.Embedding(20, 4), L.Flatten(), shape=(6,)),
         rng.integers(0, 20, (3, 6)).astype(np.int64)),
        ("LSTM", lambda: seq_model(L.LSTM(5)), seq),
        ("LSTM(return_sequences=True)", lambda: seq_model(L.LSTM(5, return_sequences=True)), seq),
        ("GRU", lambda: seq_model(L.GRU(5, return_sequences=True)), seq),
        ("LayerNormalization", lambda: seq_model(L.LayerNormalization()), seq),
        ("MultiHeadAttention", lambda: attention(False), seq),
        ("MultiHeadAttention(use_causal_mask=True)", lambda: attention(True), seq),
        ("Dropout + Reshape + Softmax", lambda: seq_model(L.Dropout(0.5), L.Reshape((8, 6)),
                                                          L.Softmax()), seq),
        ("LeakyReLU", lambda: seq_model(L.LeakyReLU(0.2), shape=(6,)), vec),
        ("Add", residual, vec),
    ]
    for act in ("gelu", "swish", "silu", "mish", "elu", "softplus", "sigmoid", "tanh", "softmax"):
        cases.append((f"Activation('{act}')", (lambda a: lambda: seq_model(
            L.Activation(a), shape=(6,)))(act), vec))
    return cases


@pytest.mark.parametrize("name,make,x", layer_models(), ids=[c[0] for c in layer_models()])
def test_every_layer_saves_to_onnx_and_matches_onnxruntime(tmp_path, name, make, x):
    tf.keras.utils.set_random_seed(5)
    model = make()
    path = str(tmp_path / "layer.onnx")
    model.save(path)
    ours = model.predict(x, verbose=0)
    theirs = onnxruntime_outputs(path, x, tmp_path)
    assert theirs.shape == ours.shape, name
    np.testing.assert_allclose(theirs, ours, atol=2e-5, rtol=1e-4, err_msg=name)


def onnxruntime_many(model: str, xs, tmp_path):
    """onnxruntime's outputs for inputs xs, and the file's input and output names."""
    assert os.path.isfile(ORT_VENV_PYTHON), (
        f"{ORT_VENV_PYTHON} is missing: `make test` makes it (tools/onnx-suite/setup-venv.sh)")
    for k, x in enumerate(xs):
        np.save(tmp_path / f"x{k}.npy", x)
    p = subprocess.run([ORT_VENV_PYTHON, "-c", RUN_ORT_MANY, model, str(tmp_path), str(len(xs))],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    ins, outs = p.stdout.strip().splitlines()[-1].split(";")
    return ([np.load(tmp_path / f"y{k}.npy") for k in range(len(outs.split(",")))],
            ins.split(","), outs.split(","))


def test_several_inputs_and_outputs_with_an_attention_mask_match_onnxruntime(tmp_path):
    """A functional model of three inputs (token ids an Embedding reads, float features, a key
    padding mask as MultiHeadAttention's attention_mask) and two outputs, as the translation
    example's models are: the ids default to int64 in the file, the rest to float32."""
    L = tf.keras.layers
    tf.keras.utils.set_random_seed(3)
    ids_in, feats_in = tf.keras.Input(shape=(5,)), tf.keras.Input(shape=(4, 6))
    mask_in = tf.keras.Input(shape=(1, 5))
    keys = L.Embedding(12, 6)(ids_in)
    attended = L.MultiHeadAttention(2, 3)(feats_in, keys, attention_mask=mask_in)
    summary = L.Dense(3)(L.Flatten()(feats_in))
    model = tf.keras.Model([ids_in, feats_in, mask_in], [attended, summary])
    rng = np.random.default_rng(4)
    ids = rng.integers(0, 12, (3, 5))
    feats = rng.normal(size=(3, 4, 6)).astype(np.float32)
    mask = np.array([[[1, 1, 1, 0, 0]], [[1, 0, 1, 0, 1]], [[1, 1, 1, 1, 1]]], np.float32)
    path = str(tmp_path / "masked.onnx")
    model.save(path)
    ours = model.predict([ids, feats, mask], verbose=0)
    theirs, in_names, out_names = onnxruntime_many(
        path, [ids.astype(np.int64), feats, mask], tmp_path)
    assert in_names == ["input", "input_1", "input_2"]
    assert out_names == ["output", "output_1"]
    for a, b in zip(theirs, ours):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, atol=2e-5, rtol=1e-4)
    # The mask is in the file: changing the first sentence's masked keys (3 and 4) changes
    # nothing of its output; changing an unmasked one (0) does.
    masked, unmasked = ids.copy(), ids.copy()
    masked[0, 3:] = (masked[0, 3:] + 1) % 12
    unmasked[0, 0] = (unmasked[0, 0] + 1) % 12
    same, _, _ = onnxruntime_many(path, [masked.astype(np.int64), feats, mask], tmp_path)
    changed, _, _ = onnxruntime_many(path, [unmasked.astype(np.int64), feats, mask], tmp_path)
    np.testing.assert_allclose(same[0][0], theirs[0][0], atol=1e-6)
    assert np.abs(changed[0][0] - theirs[0][0]).max() > 1e-4


def test_input_dtypes_are_one_per_input_or_one_for_all(tmp_path):
    L = tf.keras.layers
    a, b = tf.keras.Input(shape=(3,)), tf.keras.Input(shape=(3,))
    model = tf.keras.Model([a, b], L.Add()([L.Dense(2)(a), L.Dense(2)(b)]))
    x = np.ones((2, 3), np.float32)
    model.save(str(tmp_path / "two.onnx"), input_dtype=["float32", "uint8"])
    theirs, _, _ = onnxruntime_many(str(tmp_path / "two.onnx"),
                                    [x, np.full((2, 3), 255, np.uint8)], tmp_path)
    # uint8 images are scaled by 1/255 inside, as fit and predict do: 255 reads as 1.
    np.testing.assert_allclose(theirs[0], model.predict([x, x], verbose=0), atol=1e-5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="2 input.*3 input dtypes"):
        model.save(str(tmp_path / "bad.onnx"), input_dtype=["float32"] * 3)
