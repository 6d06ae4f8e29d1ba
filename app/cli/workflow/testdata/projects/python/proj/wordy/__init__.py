from tinydep import double


def count_words(text):
    return len(text.split())


def doubled_count(text):
    return double(count_words(text))
