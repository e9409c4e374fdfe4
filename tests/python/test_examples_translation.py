"""examples/translation.py (docs/examples.md), run as a user runs it in its quick form: a small
encoder-decoder Transformer on trans-de-en's sentence pairs, its key/value-cache decoder
checked against the full model, greedy and beam search, BLEU. The quick run is too small to
translate; its quality is the full run's, recorded in docs/examples.md. What the figures rest
on (BLEU, the word-by-word baseline, the data's filters) is checked here on hand-made input.
The data comes from the install step (Debian's trans-de-en); when it is missing the example
says which package to install."""

from __future__ import annotations

import math
import sys

import pytest

from examples_util import EXAMPLES, number, run_example

sys.path.insert(0, EXAMPLES)
import translation  # noqa: E402  (examples/ is not a package)


def test_translation_trains_decodes_with_a_cache_and_scores_bleu():
    line = run_example("translation.py", "--quick", lines=2)
    # Training lowers the held-out loss clearly (the untrained model is near ln(vocabulary)).
    assert number(line, "after training") <= 0.6 * number(line, "held-out loss untrained"), line
    # The cached decoder step computes what the full model computes for the same prefix.
    assert number(line, "cache check: max |step - predict|") < 1e-4, line
    # Beam search never scores below greedy when greedy's path is among its hypotheses, and
    # scores at least as well on nearly every sentence.
    assert number(line, "greedy's path in the beam but scoring higher:") == 0, line
    assert number(line, "beam >= greedy on") >= 0.9, line
    assert "BLEU greedy" in line and "word-by-word baseline" in line, line


def test_bleu_is_corpus_bleu_4_with_the_brevity_penalty():
    ref = "the cat sat on a mat".split()
    assert translation.bleu([ref], [ref]) == pytest.approx(100.0)
    # Clipped matches 5/6, 3/5, 2/4, 1/3 (the second "the" is clipped); same length: no penalty.
    hyp = "the cat sat on the mat".split()
    assert translation.bleu([hyp], [ref]) == pytest.approx(100 * (5 / 6 * 3 / 5 * 2 / 4 * 1 / 3) ** 0.25)
    # A hypothesis shorter than its reference pays exp(1 - 6/4).
    short = "the cat sat on".split()
    assert translation.bleu([short], [ref]) == pytest.approx(100 * math.exp(1 - 6 / 4))
    # Counts are summed over the corpus before the precisions are taken (not averaged per
    # sentence): two sentences, one perfect, one with no match at all of any order.
    two = translation.bleu([ref, "x y z w".split()], [ref, "a b c d".split()])
    assert two == pytest.approx(100 * (6 / 10 * 5 / 8 * 4 / 6 * 3 / 4) ** 0.25)
    # An order with no match is smoothed as sacreBLEU's "exp": 1/2 match, then 1/4, ...
    none4 = translation.bleu(["a b c x".split()], ["a b c d".split()])
    assert none4 == pytest.approx(100 * (3 / 4 * 2 / 3 * 1 / 2 * 0.5 / 1) ** 0.25)
    # Too short for a 4-gram anywhere: 0.
    assert translation.bleu([["a", "b"]], [["a", "b"]]) == 0.0


def test_the_baseline_translates_word_by_word_by_the_dice_coefficient():
    train = [(("das", "haus"), ("the", "house")), (("das", "auto"), ("the", "car")),
             (("ein", "haus"), ("a", "house"))]
    test = [(("das", "haus", "brennt"), ("the", "house", "burns"))]
    # das: the (Dice 2*2/(2+2) = 1); haus: house (1); brennt was never seen: copied.
    assert translation.word_by_word(train, test) == [["the", "house", "brennt"]]


def test_the_dictionary_lines_become_sentence_pairs_and_entries(tmp_path):
    dictionary = tmp_path / "de-en"
    dictionary.write_text(
        "# a comment\n"
        "Haus {n}; Gebäude {n} | Das Haus ist sehr alt. :: house; building | The house is very old.\n"
        "bei bester Gesundheit sein :: to be in the best of health\n"
        "Er kommt morgen. | Sie kam nicht. :: He is coming tomorrow.\n"   # senses do not pair up
        "Wir sind müde/erschöpft. :: We are tired.\n", encoding="utf-8")  # a/b alternative
    # One sentence pair survives the filters (in train or test, as the hash falls).
    train, test = translation.load(0, str(dictionary))
    assert train + test == [(("das", "haus", "ist", "sehr", "alt", "."),
                             ("the", "house", "is", "very", "old", "."))]
    # Entries: every German word known from the training sentences, annotations removed.
    entries = translation.lexicon(train + test, path=str(dictionary))
    assert (("haus",), ("house",)) in entries
    assert not any(g == ("gebäude",) for g, _ in entries)  # not a training sentence's word
    assert not any(g[0] == "bei" for g, _ in entries)      # a phrase of unknown words


def test_a_missing_dictionary_names_the_debian_package(tmp_path):
    with pytest.raises(FileNotFoundError, match="trans-de-en"):
        translation.load(0, str(tmp_path / "de-en"))
