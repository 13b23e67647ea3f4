"""Submission content once normalised (grading/checks/fingerprint.py), and seeds that copy one another's
content counting as one seed (CheckContext.copy_keys, insufficient_seeds, duplicate_submissions)."""

import csv
import io

import pytest

from grading.checks import duplicate_submissions, insufficient_seeds
from grading.checks.fingerprint import UnreadableSubmission, content_of, content_of_rows, normalised_cell
from tests.grading.checks.builders import PIZZA, SPOOKY, check_context, run_files

ROWS = [(f"t3_{i:03d}", f"{(i * 37 % 101) / 101:.17g}") for i in range(200)]


def text(rows=ROWS, *, header="request_id,requester_received_pizza", end="\n", fmt="{}") -> str:
    return header + end + "".join(f"{rid},{fmt.format(float(p)) if fmt != '{}' else p}{end}" for rid, p in rows)


def content(body: str, id_column: str = ""):
    return content_of_rows(csv.reader(io.StringIO(body)), id_column=id_column)


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        (" 0.5 ", "0.5"),
        ("0.50000000", "0.5"),
        ("5e-1", "0.5"),
        ("1", "1"),
        ("1.0", "1"),
        ("-0.0", "0"),
        ("0.123456789", "0.123457"),
        ("1.234567e-12", "1.23457e-12"),
        ("  cat ", "cat"),
        ("NaN", "nan"),
        ("1_000", "1_000"),
        ("", ""),
    ],
)
def test_a_cell_is_stripped_and_a_number_kept_to_six_significant_digits(cell, expected):
    assert normalised_cell(cell) == expected


def test_cosmetic_edits_leave_the_fingerprint_unchanged():
    first = content(text())
    assert content(text() + "\n\n").fingerprint == first.fingerprint
    assert content(text(list(reversed(ROWS)))).fingerprint == first.fingerprint
    assert content(text(fmt="{:.9e}")).fingerprint == first.fingerprint
    assert content(text(end="\r\n")).fingerprint == first.fingerprint
    quoted = "".join(f'"{rid}","{p}"\n' for rid, p in ROWS)
    assert content('"request_id","requester_received_pizza"\n' + quoted).fingerprint == first.fingerprint


def test_other_predictions_or_another_header_change_the_fingerprint():
    first = content(text())
    other = [(rid, str(float(p) + 0.001)) for rid, p in ROWS]
    assert content(text(other)).fingerprint != first.fingerprint
    assert content(text(header="id,p")).fingerprint != first.fingerprint
    assert not content(text(header="id,p")).near_duplicate_of(first)


def test_one_changed_row_in_two_hundred_is_a_near_duplicate_and_three_are_not():
    first = content(text())
    one = [(rid, "0.999") if i == 5 else (rid, p) for i, (rid, p) in enumerate(ROWS)]
    three = [(rid, "0.999") if i in (5, 6, 7) else (rid, p) for i, (rid, p) in enumerate(ROWS)]
    assert content(text(one)).near_duplicate_of(first) and content(text(one)).equal_rows(first) == 199
    assert not content(text(three)).near_duplicate_of(first)


def test_a_small_file_is_a_near_duplicate_only_when_its_content_is_the_same():
    rows = ROWS[:3]
    changed = [rows[0], rows[1], (rows[2][0], "0.999")]
    assert not content(text(changed)).near_duplicate_of(content(text(rows)))


def test_rows_are_keyed_by_the_named_id_column():
    body = "p,id\n0.5,b\n0.25,a\n"
    swapped = "p,id\n0.25,a\n0.5,b\n"
    assert content(body, "id").fingerprint == content(swapped, "id").fingerprint
    assert content(body, "id").rows != content(body).rows  # keyed by p when the id column is not named


def test_repeated_ids_are_all_kept():
    assert len(content("id,p\na,1\na,2\n").rows) == 2


def test_a_file_without_a_header_has_no_content(tmp_path):
    with pytest.raises(UnreadableSubmission, match="no header"):
        content("\n\n")
    empty = tmp_path / "submission.csv"
    empty.write_bytes(b"")
    with pytest.raises(UnreadableSubmission):
        content_of(empty)


# Seeds of one entry


TIERS = {"low": [PIZZA, SPOOKY]}


def entry(tmp_path, bodies: dict):
    runs = [run_files(tmp_path, cid, seed, submission=body) for (cid, seed), body in bodies.items()]
    return check_context(runs=runs, tiers=TIERS)


def test_seeds_with_one_content_in_other_bytes_count_once(tmp_path):
    context = entry(
        tmp_path,
        {
            (PIZZA, 0): text(),
            (PIZZA, 1): text(list(reversed(ROWS))),
            (PIZZA, 2): text(fmt="{:.9e}"),
            (SPOOKY, 0): "id,EAP\n1,0.5\n",
        },
    )
    keys = context.copy_keys()
    assert keys[f"{PIZZA}/seed-0"] == keys[f"{PIZZA}/seed-1"] == keys[f"{PIZZA}/seed-2"]
    graded = [run.submission_sha256 for run in context.graded if run.competition_id == PIZZA]
    assert graded == [keys[f"{PIZZA}/seed-0"]] * 3
    counted, copies = insufficient_seeds.distinct_runs(context.graded)
    assert sorted(run.seed for run in copies) == [1, 2]
    (flag,) = duplicate_submissions.check(context)
    assert flag.severity == "warning" and "count as one seed" in flag.message
    assert "seed 1 is identical once parsed and normalised" in flag.message
    assert [f.get("how") for f in flag.evidence["files"]] == [None, "normalised", "normalised"]


def test_a_near_duplicate_seed_names_the_rows_that_agree(tmp_path):
    one = [(rid, "0.999") if i == 9 else (rid, p) for i, (rid, p) in enumerate(ROWS)]
    context = entry(tmp_path, {(PIZZA, 0): text(), (PIZZA, 1): text(one), (PIZZA, 2): text(ROWS[:150])})
    (flag,) = duplicate_submissions.check(context)
    assert flag.evidence["files"][1] | {"file": "", "sha256": ""} == {
        "file": "",
        "sha256": "",
        "seed": 1,
        "copy_of_seed": 0,
        "how": "near",
        "rows_equal": 199,
        "rows": 200,
    }
    assert "(199 of 200 rows equal)" in flag.message and len(flag.evidence["files"]) == 2


def test_honest_seeds_stay_distinct_and_an_unreadable_file_counts_by_its_bytes(tmp_path):
    other = [(rid, f"{(i * 53 % 97) / 97:.6f}") for i, (rid, _) in enumerate(ROWS)]
    context = entry(
        tmp_path,
        {(PIZZA, 0): text(), (PIZZA, 1): text(other), (SPOOKY, 0): "\n", (SPOOKY, 1): "\n"},
    )
    keys = context.copy_keys()
    assert keys[f"{PIZZA}/seed-0"] != keys[f"{PIZZA}/seed-1"]
    assert keys[f"{SPOOKY}/seed-0"] == keys[f"{SPOOKY}/seed-1"]  # byte-identical
    assert f"{SPOOKY}/seed-0" not in context.content_fingerprints()
