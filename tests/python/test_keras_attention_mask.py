"""Keras' attention_mask on dlrt.keras.layers.MultiHeadAttention (nn's fourth tensor) in a
functional model (fit, predict) and called eagerly on NumPy arrays, against NumPy's
attention over the layer's own weights; a bad mask is an exception, not a crash; and
SparseCategoricalCrossentropy(ignore_class=...) as Keras' masked sequence loss."""

import numpy as np
import pytest

import dlrt as tf

keras = tf.keras
B, TQ, TK, D, H, DH = 2, 4, 5, 6, 2, 3


def numpy_mha(layer, q, kv, mask, causal=False):
    """Multi-head attention in NumPy (float64) with the layer's weights; mask (B, 1|Tq, Tk),
    0 = the score becomes -1e9 (what the layer's f32 bias leaves of it)."""
    w = {v.name.split("/", 1)[1].split(":")[0]: v.numpy().astype(np.float64)
         for v in layer.weights}

    def proj(x, name):
        return x @ w[f"{name}/kernel"] + w[f"{name}/bias"]

    def heads(x):  # (B, T, H*dh) -> (B, H, T, dh)
        return x.reshape(x.shape[0], x.shape[1], H, DH).transpose(0, 2, 1, 3)

    qh, kh, vh = heads(proj(q, "query")), heads(proj(kv, "key")), heads(proj(kv, "value"))
    s = qh @ kh.transpose(0, 1, 3, 2) / np.sqrt(DH)
    tq, tk = s.shape[2], s.shape[3]
    allowed = np.ones((tq, tk), bool)
    if causal:
        allowed = np.arange(tk)[None, :] <= np.arange(tq)[:, None] + (tk - tq)
    s = np.where(allowed, s, -np.inf)
    if mask is not None:
        s = np.where(allowed & (mask[:, None] == 0), -1e9, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o = (p @ vh).transpose(0, 2, 1, 3).reshape(q.shape[0], tq, H * DH)
    return proj(o, "attention_output")


def data(seed=0):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((B, TQ, D)).astype(np.float32)
    kv = rng.standard_normal((B, TK, D)).astype(np.float32)
    keys = np.array([[[1, 1, 1, 0, 0]], [[0, 1, 0, 1, 1]]], bool)  # (B, 1, Tk)
    return q, kv, keys


@pytest.mark.parametrize("causal", [False, True])
def test_a_functional_model_takes_the_mask_as_an_input(causal):
    q, kv, keys = data()
    qi, kvi = keras.Input(shape=(TQ, D)), keras.Input(shape=(TK, D))
    mi = keras.Input(shape=(1, TK))
    mha = keras.layers.MultiHeadAttention(H, DH, use_causal_mask=causal)
    model = keras.Model([qi, kvi, mi], mha(qi, kvi, attention_mask=mi))
    model.weights  # the layers' eager Variables: predict runs on them, numpy_mha reads them
    for mask in (keys, keys.astype(np.float32)):  # bool or 0/1 floats
        got = model.predict([q, kv, mask], verbose=0)
        np.testing.assert_allclose(got, numpy_mha(mha, q, kv, keys, causal), atol=1e-4)
    # The padded keys' rows do not matter.
    changed = kv.copy()
    changed[~keys[:, 0]] = 50.0
    np.testing.assert_allclose(model.predict([q, changed, keys], verbose=0), got, atol=1e-5)
    # fit trains through the masked path.
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
    y = np.zeros((B, TQ, D), np.float32)
    history = model.fit([q, kv, keys], y, batch_size=B, epochs=5, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_an_eager_call_on_numpy_arrays_with_a_full_mask():
    q, kv, _ = data(1)
    mask = np.random.default_rng(2).random((B, TQ, TK)) < 0.6
    mask[1, 2] = False  # a query with nothing to attend to: finite, even attention
    mha = keras.layers.MultiHeadAttention(H, DH)
    got = mha(q, kv, attention_mask=mask).numpy()
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, numpy_mha(mha, q, kv, mask), atol=1e-4)
    # Keras' spellings: key given, a list, use_causal_mask repeated at the call.
    np.testing.assert_allclose(mha(q, kv, kv, attention_mask=mask).numpy(), got, atol=1e-6)
    np.testing.assert_allclose(mha([q, kv], use_causal_mask=False).numpy(),
                               numpy_mha(mha, q, kv, None), atol=1e-4)
    # A GradientTape differentiates the masked call.
    x = tf.Variable(q)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(mha(x, kv, attention_mask=mask) ** 2)
    grad = tape.gradient(loss, x).numpy()
    assert grad.shape == q.shape and np.all(np.isfinite(grad))


def test_bad_masks_and_arguments_are_exceptions():
    q, kv, keys = data()
    mha = keras.layers.MultiHeadAttention(H, DH)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"expected \(None, 4, 5\)"):
        mha(q, kv, attention_mask=np.ones((B, 3, TK), bool))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"attention_mask \(None, 5\)"):
        mha(q, kv, attention_mask=np.ones((B, TK), bool))
    qi, kvi = keras.Input(shape=(TQ, D)), keras.Input(shape=(TK, D))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"or \(None, 1, 5\)"):
        keras.layers.MultiHeadAttention(H, DH)(qi, kvi, attention_mask=keras.Input(shape=(TQ, 4)))
    with pytest.raises(TypeError, match="symbolic"):
        keras.layers.MultiHeadAttention(H, DH)(qi, kvi, attention_mask=keys)
    with pytest.raises(ValueError, match="use_causal_mask"):
        mha(q, kv, use_causal_mask=True)
    with pytest.raises(TypeError, match="return_attention_scores"):
        mha(q, kv, return_attention_scores=True)
    with pytest.raises(TypeError, match="value_mask"):
        mha(q, kv, value_mask=keys[:, 0])
    # The layer still works after the refused calls.
    assert np.all(np.isfinite(mha(q, kv, attention_mask=keys).numpy()))


def test_sparse_categorical_crossentropy_ignore_class():
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((3, 4, 6)).astype(np.float32)
    labels = np.array([[2, 5, 0, 0], [0, 0, 0, 0], [1, 2, 3, 4]], np.int32)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0)
    assert loss.ignore_class == 0
    lse = np.log(np.exp(logits.astype(np.float64)).sum(-1))
    ce = lse - np.take_along_axis(logits, labels[..., None], -1)[..., 0]
    kept = labels != 0  # Keras: the mean over the batch's kept labels
    np.testing.assert_allclose(float(loss(labels, logits)), (ce * kept).sum() / kept.sum(),
                               rtol=1e-5)
    # In fit: a model whose targets are padding after a few tokens trains on the tokens only.
    ids = keras.Input(shape=(4,), dtype="int32")
    out = keras.layers.Dense(6)(keras.layers.Embedding(10, 8)(ids))
    model = keras.Model(ids, out)
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss=loss)
    x = rng.integers(1, 10, (32, 4)).astype(np.int32)
    y = np.where(np.arange(4) < 2, x % 5 + 1, 0).astype(np.int32)  # 2 tokens, then padding
    first = model.evaluate(x, y, verbose=0)
    model.fit(x, y, batch_size=8, epochs=20, verbose=0)
    assert model.evaluate(x, y, verbose=0) < 0.5 * first
