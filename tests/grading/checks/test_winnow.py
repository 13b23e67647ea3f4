"""Token-level winnowed fingerprints of code (grading/checks/winnow.py)."""

from grading.checks import winnow

CODE = "\n".join(f"feature_{i} = frame['c{i}'].rolling({i + 2}).mean() * weight_{i}" for i in range(30))


def test_tokens_drop_comments_and_blur_literals():
    assert winnow.tokens("x = f(3.5, 'a')  # why\ny //= 2") == [
        "x",
        "=",
        "f",
        "(",
        "0",
        ",",
        '""',
        ")",
        "y",
        "//=",
        "0",
    ]


def test_comments_spacing_and_other_literals_keep_the_fingerprints():
    other = "# header\n" + CODE.replace(" = ", "=").replace("'c", '"d').replace("']", '"]') + "\n\n\n"
    assert winnow.fingerprints(other) == winnow.fingerprints(CODE)


def test_a_copied_block_inside_other_code_shares_its_fingerprints():
    ours = winnow.fingerprints(CODE)
    mixed = winnow.fingerprints("import os\n" + CODE + "\nresult = train(model, data, epochs=10)\n")
    assert winnow.shared(ours, frozenset(mixed)) == 1.0
    assert winnow.shared(ours, frozenset(winnow.fingerprints("print('hello world')\n" * 40))) == 0.0


def test_every_window_keeps_its_smallest_hash():
    assert winnow.winnow([5, 3, 9, 7, 1, 8], window=3) == {3, 1}
    assert winnow.winnow([4, 2], window=3) == {4, 2}
    assert winnow.fingerprints("x = 1") == set()  # fewer tokens than one k-gram


def test_fingerprints_are_signed_64_bit_integers():
    assert all(-(2**63) <= value < 2**63 for value in winnow.fingerprints(CODE))
