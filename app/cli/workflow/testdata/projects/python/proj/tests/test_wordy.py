import wordy


def test_count_words():
    assert wordy.count_words("a b c") == 3


def test_doubled_count():
    assert wordy.doubled_count("a b") == 4
