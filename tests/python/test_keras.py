"""dlrt.keras on real data: the article's CNN on Fashion-MNIST (a slice of it, to stay
quick), evaluate/predict, checkpoints, callbacks, Ctrl-C, and bad inputs."""

import os
import signal
import struct
import threading

import numpy as np
import pytest

import dlrt as tf
from conftest import have_fashion_mnist

keras = tf.keras
pytestmark = pytest.mark.skipif(not have_fashion_mnist(),
                                reason="needs dataset-fashion-mnist (make installs it)")


@pytest.fixture(scope="module")
def data():
    (x_train, y_train), (x_test, y_test) = keras.datasets.fashion_mnist.load_data()
    assert x_train.shape == (60000, 28, 28) and y_train.shape == (60000,)
    assert x_test.shape == (10000, 28, 28) and x_train.dtype == np.uint8
    x_train = (x_train[:4096] / 255.0).reshape(-1, 28, 28, 1)
    x_test = (x_test[:1024] / 255.0).reshape(-1, 28, 28, 1)
    return (x_train, y_train[:4096]), (x_test, y_test[:1024])


def small_cnn(logits=True):
    """Logits out (for from_logits=True), or probabilities (for the losses named by string,
    whose from_logits is False as in Keras)."""
    return keras.Sequential([
        keras.layers.Conv2D(16, (3, 3), activation='relu', input_shape=(28, 28, 1)),
        keras.layers.MaxPooling2D((2, 2)),
        keras.layers.Flatten(),
        keras.layers.Dense(32, activation='relu'),
        keras.layers.Dense(10, activation=None if logits else 'softmax'),
    ])


def test_the_cnn_trains_evaluates_and_predicts(data, capsys):
    (x, y), (xt, yt) = data
    model = small_cnn()
    model.compile(optimizer='adam',
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=['accuracy'])
    history = model.fit(x, y, epochs=2, batch_size=64, validation_data=(xt, yt), verbose=2)
    out = capsys.readouterr().out
    assert "Epoch 1/2" in out and "Epoch 2/2" in out  # Keras' progress, through sys.stdout
    h = history.history
    assert set(h) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert history.epoch == [0, 1]
    assert h["loss"][1] < h["loss"][0]
    assert h["val_accuracy"][1] > 0.7
    loss, acc = model.evaluate(xt, yt, verbose=0)
    assert abs(acc - h["val_accuracy"][1]) < 1e-6
    probs = model.predict(xt[:10], verbose=0)
    assert probs.shape == (10, 10) and probs.dtype == np.float32
    assert [layer.name for layer in model.layers] == ["conv2d", "max_pooling2d", "flatten",
                                                      "dense", "dense_1"]
    model.summary(print_fn=lambda s: None)


def test_weights_save_and_load_exactly(data, tmp_path):
    (x, y), (xt, _) = data
    model = small_cnn(logits=False)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss='sparse_categorical_crossentropy')
    model.fit(x[:512], y[:512], epochs=1, verbose=0)
    path = str(tmp_path / "w.safetensors")
    model.save_weights(path)
    other = small_cnn(logits=False)
    other.compile(optimizer='adam', loss='sparse_categorical_crossentropy')
    other.load_weights(path)
    np.testing.assert_array_equal(model.predict(xt[:32], verbose=0), other.predict(xt[:32], verbose=0))
    with pytest.raises(tf.errors.OpError):
        other.load_weights(str(tmp_path / "missing.safetensors"))


def test_functional_model_matches_keras_api(data):
    (x, y), _ = data
    inputs = keras.Input(shape=(28, 28, 1))
    h = keras.layers.Conv2D(8, 3, activation='relu')(inputs)
    h = keras.layers.GlobalAveragePooling2D()(h)
    outputs = keras.layers.Dense(10)(h)
    model = keras.Model(inputs, outputs)
    assert outputs.shape == (None, 10)
    model.compile(optimizer='sgd', loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=['accuracy'])
    history = model.fit(x[:1024], y[:1024], epochs=1, batch_size=128, verbose=0)
    assert np.isfinite(history.history["loss"][0])


def test_callbacks_run_with_kerass_arguments(data, tmp_path):
    (x, y), (xt, yt) = data

    class Recorder(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.epochs, self.batches = [], 0

        def on_train_batch_end(self, batch, logs=None):
            self.batches += 1

        def on_epoch_end(self, epoch, logs=None):
            assert self.model is not None
            self.epochs.append((epoch, sorted(logs)))

    rec = Recorder()
    rates = []
    sched = keras.callbacks.LearningRateScheduler(lambda epoch, lr: rates.append(lr) or 1e-3 * 0.5 ** epoch)
    csv = str(tmp_path / "log.csv")
    model = small_cnn(logits=False)
    model.compile(optimizer='adam', loss='sparse_categorical_crossentropy', metrics=['accuracy'])
    model.fit(x[:640], y[:640], epochs=3, batch_size=64, verbose=0, validation_split=0.25,
              callbacks=[rec, sched, keras.callbacks.CSVLogger(csv),
                         keras.callbacks.ModelCheckpoint(str(tmp_path / "ck-{epoch:02d}.safetensors"))])
    assert rec.batches == 3 * 8  # 480 training samples after the split, batch 64
    assert [e for e, _ in rec.epochs] == [0, 1, 2]
    assert rec.epochs[0][1] == ["accuracy", "loss", "val_accuracy", "val_loss"]
    assert rates[0] == pytest.approx(1e-3) and rates[2] == pytest.approx(0.5e-3)
    assert model._m.learning_rate == pytest.approx(0.25e-3)
    lines = open(csv).read().splitlines()
    assert lines[0] == "epoch,accuracy,loss,val_accuracy,val_loss" and len(lines) == 4
    assert sorted(os.listdir(tmp_path)) == ["ck-01.safetensors", "ck-02.safetensors",
                                            "ck-03.safetensors", "log.csv"]


def test_early_stopping_stops_and_restores(data):
    (x, y), _ = data
    model = small_cnn()
    model.compile(optimizer=keras.optimizers.SGD(1e-9),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    stop = keras.callbacks.EarlyStopping(monitor='loss', patience=1, min_delta=10.0)
    history = model.fit(x[:256], y[:256], epochs=20, verbose=0, callbacks=[stop])
    assert len(history.epoch) == 2 and stop.stopped_epoch == 1
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        model.fit(x[:256], y[:256], epochs=2, verbose=0,
                  callbacks=[keras.callbacks.EarlyStopping(monitor='val_los')])
    assert "val_los" in str(e.value) and "loss" in str(e.value)


def test_an_exception_in_a_callback_stops_fit_and_the_model_stays_usable(data):
    (x, y), (xt, yt) = data

    class Boom(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if batch == 2:
                raise RuntimeError("boom")

    model = small_cnn(logits=False)
    model.compile(optimizer='adam', loss='sparse_categorical_crossentropy')
    with pytest.raises(RuntimeError, match="boom"):
        model.fit(x[:1024], y[:1024], epochs=1, verbose=0, callbacks=[Boom()])
    assert np.isfinite(model.evaluate(xt[:64], yt[:64], verbose=0))
    model.fit(x[:256], y[:256], epochs=1, verbose=0)


def test_ctrl_c_stops_fit_between_steps(data):
    (x, y), (xt, yt) = data
    big_x = np.concatenate([x] * 8)
    big_y = np.concatenate([y] * 8)
    model = small_cnn(logits=False)
    model.compile(optimizer='adam', loss='sparse_categorical_crossentropy')
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            model.fit(big_x, big_y, epochs=50, batch_size=32, verbose=0)
    finally:
        timer.cancel()
    assert np.isfinite(model.evaluate(xt[:64], yt[:64], verbose=0))


def test_bad_inputs_are_exceptions(data):
    (x, y), _ = data
    model = small_cnn(logits=False)
    with pytest.raises(RuntimeError, match="compile"):
        model.fit(x[:64], y[:64])
    model.compile(optimizer='adam', loss='sparse_categorical_crossentropy')
    with pytest.raises(tf.errors.InvalidArgumentError):
        model.fit(x[:64, :20], y[:64], verbose=0)  # wrong image size
    with pytest.raises(tf.errors.InvalidArgumentError):
        model.fit(x[:64], y[:32], verbose=0)  # x and y of different lengths
    with pytest.raises(TypeError):
        model.fit(np.array([["a"]] * 64), y[:64], verbose=0)
    with pytest.raises(TypeError):
        keras.layers.Dense(10, not_an_argument=1)
    with pytest.raises(ValueError):
        model.compile(optimizer='adagrad', loss='mse')
    with pytest.raises(ValueError):
        model.save("model.keras")


def test_save_before_compile(tmp_path):
    # An uncompiled model with an input shape saves for inference, as Keras' does; one without
    # is a clear error, not a crash of the interpreter.
    model = keras.Sequential([keras.layers.Dense(3, input_shape=(4,))])
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    model.save(str(tmp_path / "dense.onnx"))
    import dlrt.onnx
    sess = dlrt.onnx.InferenceSession(str(tmp_path / "dense.onnx"))
    np.testing.assert_allclose(sess.run(None, {sess.get_inputs()[0].name: x})[0],
                               model.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
    with pytest.raises(tf.errors.FailedPreconditionError, match="Input"):
        keras.Sequential([keras.layers.Dense(3)]).save(str(tmp_path / "no_input.onnx"))


def test_mnist_says_where_to_put_the_file(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        keras.datasets.mnist.load_data(str(tmp_path / "mnist.npz"))
    assert ".keras/datasets/mnist.npz" in str(e.value)
    np.savez(tmp_path / "m.npz", x_train=np.zeros((2, 28, 28), np.uint8), y_train=np.zeros(2, np.uint8),
             x_test=np.zeros((1, 28, 28), np.uint8), y_test=np.zeros(1, np.uint8))
    (xtr, ytr), (xte, yte) = keras.datasets.mnist.load_data(str(tmp_path / "m.npz"))
    assert xtr.shape == (2, 28, 28) and yte.shape == (1,)


def test_mixed_precision_policy_reaches_the_layers(data):
    (x, y), _ = data
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        assert keras.mixed_precision.global_policy().name == "mixed_bfloat16"
        assert keras.mixed_precision.global_policy().compute_dtype == "bfloat16"
        model = small_cnn()
        assert all(layer.dtype_policy == "mixed_bfloat16" for layer in model.layers)
        model.compile(optimizer='adam',
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(x[:512], y[:512], epochs=2, batch_size=64, verbose=0)
        assert history.history["loss"][1] < history.history["loss"][0]
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert small_cnn().layers[0].dtype_policy == "float32"
    with pytest.raises(ValueError):
        keras.mixed_precision.set_global_policy("float8")


def test_binary_crossentropy_takes_flat_labels_and_accuracy_is_binary():
    # Keras' usual binary classifier: Dense(1, sigmoid), labels of shape (N,), 'accuracy'
    # (binary accuracy at 0.5; at 0 on logits). 250 samples in batches of 32: the last batch is
    # padded, and its padding must not count.
    rng = np.random.default_rng(0)
    x = rng.normal(size=(250, 4)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.float32)
    model = keras.Sequential([keras.layers.Dense(1, activation="sigmoid", input_shape=(4,))])
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="binary_crossentropy",
                  metrics=["accuracy"])
    history = model.fit(x, y, epochs=15, batch_size=32, verbose=0)
    assert history.history["accuracy"][-1] > 0.9
    loss, accuracy = model.evaluate(x, y, batch_size=32, verbose=0)
    p = model.predict(x, verbose=0)[:, 0]
    assert accuracy == pytest.approx(float(((p > 0.5) == y).mean()), abs=1e-6)
    assert 0 < loss < 0.5
    logits = keras.Sequential([keras.layers.Dense(1, input_shape=(4,))])
    logits.compile(optimizer=keras.optimizers.Adam(0.05),
                   loss=keras.losses.BinaryCrossentropy(from_logits=True),
                   metrics=["binary_accuracy"])
    history = logits.fit(x, y[:, None], epochs=15, batch_size=32, verbose=0)
    assert "binary_accuracy" in history.history
    _, accuracy = logits.evaluate(x, y, batch_size=32, verbose=0)
    z = logits.predict(x, verbose=0)[:, 0]
    assert accuracy == pytest.approx(float(((z > 0) == y).mean()), abs=1e-6)


def test_save_img_writes_a_png_of_the_arrays_size_and_channels(tmp_path):
    cases = {"rgb.png": (np.random.default_rng(0).random((20, 30, 3)), 2),
             "grey.png": ((np.arange(600).reshape(20, 30) % 256).astype(np.uint8), 0),
             "rgba.png": (np.zeros((20, 30, 4), np.uint8), 6)}
    for name, (image, color_type) in cases.items():
        keras.utils.save_img(str(tmp_path / name), image)
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", name
        width, height, depth, color = struct.unpack(">IIBB", data[16:26])
        assert (width, height, depth, color) == (30, 20, 8, color_type), name
    with pytest.raises(ValueError, match="PNG and JPEG"):
        keras.utils.save_img(str(tmp_path / "x.gif"), cases["grey.png"][0])
    with pytest.raises(ValueError, match="channels"):
        keras.utils.save_img(str(tmp_path / "x.png"), np.zeros((4, 4, 5)))
    with pytest.raises(tf.errors.OpError):
        keras.utils.save_img(str(tmp_path / "no" / "dir" / "x.png"), cases["grey.png"][0])


def test_load_img_reads_back_what_save_img_wrote(tmp_path):
    rng = np.random.default_rng(1)
    rgb = rng.integers(0, 256, (20, 30, 3), dtype=np.uint8)
    keras.utils.save_img(str(tmp_path / "rgb.png"), rgb)
    back = keras.utils.load_img(str(tmp_path / "rgb.png"))
    assert back.dtype == np.uint8 and back.shape == (20, 30, 3) and (back == rgb).all()
    rgba = keras.utils.load_img(str(tmp_path / "rgb.png"), color_mode="rgba")
    assert rgba.shape == (20, 30, 4) and (rgba[..., :3] == rgb).all() and (rgba[..., 3] == 255).all()
    grey = keras.utils.img_to_array(keras.utils.load_img(str(tmp_path / "rgb.png"),
                                                         color_mode="grayscale"))
    assert grey.shape == (20, 30, 1) and grey.dtype == np.float32
    with pytest.raises(tf.errors.NotFoundError):
        keras.utils.load_img(str(tmp_path / "missing.png"))
    (tmp_path / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a PNG"):
        keras.utils.load_img(str(tmp_path / "bad.png"))
    with pytest.raises(ValueError):
        keras.utils.load_img(str(tmp_path / "rgb.png"), color_mode="cmyk")


def tiff_bytes(a: np.ndarray, sample_format: int) -> bytes:
    """A minimal little-endian baseline TIFF of `a` (H, W, samples): one uncompressed strip."""
    h, w, spp = a.shape
    pixels = np.ascontiguousarray(a).tobytes()
    entries = [(256, 4, w), (257, 4, h), (258, 3, a.dtype.itemsize * 8), (259, 3, 1),
               (262, 3, 2 if spp == 3 else 1), (273, 4, 0), (277, 3, spp), (278, 4, h),
               (279, 4, len(pixels)), (284, 3, 1), (339, 3, sample_format)]
    ifd_at = 8 + len(pixels)
    entries = [(t, k, 8 if t == 273 else v) for t, k, v in entries]
    ifd = struct.pack("<H", len(entries)) + b"".join(
        struct.pack("<HHII", t, k, 1, v) if k == 4 else struct.pack("<HHIHH", t, k, 1, v, 0)
        for t, k, v in entries) + struct.pack("<I", 0)
    return b"II*\x00" + struct.pack("<I", ifd_at) + pixels + ifd


def test_tiff_files_keep_their_sample_type(tmp_path):
    # 16-bit labels above 255 (a mask of many objects) come back exact, not cut to 8 bits.
    labels = (np.arange(6 * 5, dtype=np.uint16).reshape(6, 5, 1) * 997)
    (tmp_path / "mask.tif").write_bytes(tiff_bytes(labels, 1))
    back = keras.utils.load_img(str(tmp_path / "mask.tif"), color_mode="grayscale")
    assert back.dtype == np.uint16 and back.shape == (6, 5, 1) and (back == labels).all()
    rgb = keras.utils.load_img(str(tmp_path / "mask.tif"))  # 'rgb' repeats the grey, as PIL
    assert rgb.shape == (6, 5, 3) and (rgb == labels).all()
    floats = np.random.default_rng(0).normal(size=(4, 3, 3)).astype(np.float32)
    (tmp_path / "f.tiff").write_bytes(tiff_bytes(floats, 3))
    assert (keras.utils.load_img(str(tmp_path / "f.tiff")) == floats).all()
    rgba = keras.utils.load_img(str(tmp_path / "f.tiff"), color_mode="rgba")
    assert rgba.shape == (4, 3, 4) and (rgba[..., 3] == 1.0).all()
    with pytest.raises(ValueError, match="3 samples per pixel"):
        keras.utils.load_img(str(tmp_path / "f.tiff"), color_mode="grayscale")
    # Truncated pixels and unknown sample kinds are errors with the reason.
    data = tiff_bytes(labels, 1)
    (tmp_path / "cut.tif").write_bytes(data[:8] + b"\x00" * 4)
    with pytest.raises(tf.errors.InvalidArgumentError, match="TIFF"):
        keras.utils.load_img(str(tmp_path / "cut.tif"), color_mode="grayscale")
    (tmp_path / "complex.tif").write_bytes(tiff_bytes(labels, 6))
    with pytest.raises(tf.errors.InvalidArgumentError, match="samples of format 6"):
        keras.utils.load_img(str(tmp_path / "complex.tif"), color_mode="grayscale")


def test_tiled_tiffs_are_put_together_with_their_edge_tiles_clipped(tmp_path):
    # 20 x 36 uint16 pixels in 16 x 16 tiles: 2 rows of 3 tiles, the last row and column cut.
    h, w, t = 20, 36, 16
    image = np.arange(h * w, dtype=np.uint16).reshape(h, w)
    tiles = []
    for r in range(0, h, t):
        for c in range(0, w, t):
            tile = np.zeros((t, t), np.uint16)
            part = image[r:r + t, c:c + t]
            tile[:part.shape[0], :part.shape[1]] = part
            tiles.append(tile.tobytes())
    body = b"".join(tiles)
    offsets_at = 8 + len(body)
    counts_at = offsets_at + 4 * len(tiles)
    arrays = (struct.pack(f"<{len(tiles)}I", *[8 + i * len(tiles[0]) for i in range(len(tiles))]) +
              struct.pack(f"<{len(tiles)}I", *[len(x) for x in tiles]))
    short = lambda tag, v: struct.pack("<HHIHH", tag, 3, 1, v, 0)  # noqa: E731
    entries = [struct.pack("<HHII", 256, 4, 1, w), struct.pack("<HHII", 257, 4, 1, h),
               short(258, 16), short(259, 1), short(262, 1), short(277, 1),
               struct.pack("<HHII", 322, 4, 1, t), struct.pack("<HHII", 323, 4, 1, t),
               struct.pack("<HHII", 324, 4, len(tiles), offsets_at),
               struct.pack("<HHII", 325, 4, len(tiles), counts_at)]
    ifd_at = counts_at + 4 * len(tiles)
    data = (b"II*\x00" + struct.pack("<I", ifd_at) + body + arrays +
            struct.pack("<H", len(entries)) + b"".join(entries) + struct.pack("<I", 0))
    (tmp_path / "tiled.tif").write_bytes(data)
    back = keras.utils.load_img(str(tmp_path / "tiled.tif"), color_mode="grayscale")
    assert back.shape == (h, w, 1) and (back[..., 0] == image).all()


def test_jpeg_files_round_trip_within_the_codecs_loss(tmp_path):
    # A smooth picture (JPEG's case): the decoded pixels stay within a few levels of it.
    y, x = np.mgrid[0:48, 0:64]
    rgb = np.stack([x * 4, y * 5, (x + y) * 2], axis=-1).astype(np.uint8)
    keras.utils.save_img(str(tmp_path / "smooth.jpg"), rgb)
    assert (tmp_path / "smooth.jpg").read_bytes()[:3] == b"\xff\xd8\xff"
    back = keras.utils.load_img(str(tmp_path / "smooth.jpg"))
    assert back.dtype == np.uint8 and back.shape == (48, 64, 3)
    assert np.abs(back.astype(int) - rgb).mean() < 3.0
    # The format comes from the file's bytes, not its name; grey and RGBA are converted.
    (tmp_path / "smooth.png").write_bytes((tmp_path / "smooth.jpg").read_bytes())
    assert (keras.utils.load_img(str(tmp_path / "smooth.png")) == back).all()
    assert keras.utils.load_img(str(tmp_path / "smooth.jpg"), color_mode="grayscale").shape == (48, 64, 1)
    rgba = keras.utils.load_img(str(tmp_path / "smooth.jpg"), color_mode="rgba")
    assert rgba.shape == (48, 64, 4) and (rgba[..., 3] == 255).all()
    # Grey floats, scaled as Keras scales them, through file_format rather than the name.
    keras.utils.save_img(str(tmp_path / "grey.img"), rgb[..., :1].astype(np.float32),
                         file_format="jpeg", quality=90)
    assert keras.utils.load_img(str(tmp_path / "grey.img"), color_mode="grayscale").shape == (48, 64, 1)
    # A cut-off or garbled file is an error with the reason, never a crash.
    data = (tmp_path / "smooth.jpg").read_bytes()
    (tmp_path / "garbled.jpg").write_bytes(data[:4] + b"\x00" * 64)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a JPEG"):
        keras.utils.load_img(str(tmp_path / "garbled.jpg"))
    with pytest.raises(ValueError, match="PNG and JPEG"):
        keras.utils.save_img(str(tmp_path / "x.bmp"), rgb)
    with pytest.raises(tf.errors.InvalidArgumentError, match="channels"):
        keras.utils.save_img(str(tmp_path / "rgba.jpg"), np.zeros((4, 4, 4), np.uint8))
    with pytest.raises(tf.errors.OpError, match="cannot create"):
        keras.utils.save_img(str(tmp_path / "no" / "dir" / "x.jpg"), rgb)
    assert not list(tmp_path.glob("*.partial"))
