"""The text examples (examples/, docs/examples.md), each run as a user runs it in its quick form
and held to its stated quality. Their data comes from the install step (tools/install-deps.sh,
tools/python/setup-venv.sh); a missing data package fails with its name."""

from __future__ import annotations

from examples_util import number, run_example


def test_sentiment_beats_the_majority_class_with_both_models():
    line = run_example("sentiment.py", "--quick")
    majority = number(line, "majority class")
    assert number(line, "BiLSTM accuracy") >= majority + 0.05, line
    assert number(line, "logistic regression") >= majority + 0.05, line


def test_tagging_finds_entities_in_tweets_and_parts_of_speech():
    line = run_example("tagging.py", "--quick")  # both corpora; the last line has every figure
    assert number(line, "entity F1") >= 0.1, line  # 0.22-0.23 for seeds 0 and 1
    # POS: the quick run (2 epochs on 3,000 sentences) scored 0.913 against the most frequent
    # tag per word's 0.858; an untrained tagger is far below both.
    baseline = number(line, "most frequent tag per word")
    assert number(line, "tag accuracy") >= baseline + 0.02, line
