"""The fast CSV writer gives pandas' bytes, and the same values where it formats numbers itself."""

import numpy as np
import pandas as pd
import pytest

from competitions.demo import csvio
from competitions.demo.csvio import write_csv


def mixed_frame(rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "id": [f"row_{i}" for i in range(rows)],
            "count": rng.integers(-50, 5000, rows),
            "level": rng.integers(0, 256, rows) / 255,
            "flag": rng.random(rows) < 0.5,
            "text": rng.choice(
                np.array(["plain", "with, comma", 'say "hi"', "ёлка", "two\nlines"], dtype=object), rows
            ),
            "maybe": np.where(rng.random(rows) < 0.2, np.nan, rng.integers(0, 9, rows) / 4),
        }
    )


@pytest.mark.parametrize("quoting", ["minimal", "nonnumeric"])
def test_it_writes_the_bytes_pandas_writes(tmp_path, quoting):
    frame = mixed_frame(500)
    if quoting == "nonnumeric":
        frame = frame.drop(columns="maybe")  # pandas quotes a NaN in a float column there
    write_csv(frame, tmp_path / "pandas.csv", quoting=quoting)
    write_csv(frame, tmp_path / "fast.csv", quoting=quoting, fast_min_rows=0)
    assert (tmp_path / "fast.csv").read_bytes() == (tmp_path / "pandas.csv").read_bytes()


def test_high_cardinality_floats_read_back_to_the_same_values(tmp_path, monkeypatch):
    monkeypatch.setattr(csvio, "_MAX_LOOKUP", 10)
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {
            "a": np.round(rng.normal(0, 300, 5000), 6),
            "b": rng.random(5000),
            "c": np.round(rng.random(5000) - 0.5, 2),
        }
    )
    write_csv(frame, tmp_path / "fast.csv", fast_min_rows=0)
    back = pd.read_csv(tmp_path / "fast.csv")
    assert np.array_equal(back["a"], frame["a"]) and np.array_equal(back["c"], frame["c"])
    assert np.allclose(back["b"], frame["b"], rtol=0, atol=1e-10)


def test_fixed_point_floats_keep_one_decimal_and_no_negative_zero(tmp_path, monkeypatch):
    monkeypatch.setattr(csvio, "_MAX_LOOKUP", 1)
    frame = pd.DataFrame({"x": [3.0, -1e-12, 0.25, -2.5, 12345678.125]})
    write_csv(frame, tmp_path / "fast.csv", fast_min_rows=0)
    assert (tmp_path / "fast.csv").read_text().split() == ["x", "3.0", "0.0", "0.25", "-2.5", "12345678.125"]
