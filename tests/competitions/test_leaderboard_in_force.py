"""Which leaderboard judges a competition's answers after each import, and who says so.

The demo's packs bring leaderboards simulated for their synthetic answers; MLE-bench's prepared data
brings real answers and no leaderboard, so the shipped Kaggle leaderboard must take over again."""

import json
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from competitions.demo import make_demo_pack
from competitions.models import Competition
from competitions.services import competitions_load
from grading.engine.medals import read_leaderboard, thresholds_from_leaderboard
from tests.competitions.builders import SPOOKY, write_portal_pack

DATA = Path(__file__).resolve().parents[2] / "competitions" / "data" / "mlebench-v1"
AERIAL = "aerial-cactus-identification"
PIZZA = "random-acts-of-pizza"
MELANOMA = "siim-isic-melanoma-classification"  # Low tier, and no Kaggle leaderboard in our data


@pytest.fixture
def registry(db):
    competitions_load()


def demo_packs(out: Path, ids: list[str]) -> Path:
    make_demo_pack(out_dir=out, competition_ids=ids, size="small", n_teams=40, workers=1)
    return out


def mlebench_data(out: Path, ids: list[str]) -> Path:
    """MLE-bench's prepared data directory: <data>/<id>/prepared/{public,private}, and no leaderboard.csv."""
    make_demo_pack(out_dir=out, competition_ids=ids, size="small", n_teams=5, layout="mlebench", workers=1)
    for competition_id in ids:
        (out / competition_id / "leaderboard.csv").unlink()
    (out / "index.json").unlink()
    return out


def imported(path: Path) -> dict[str, str]:
    """The import command's line for each competition."""
    out = StringIO()
    call_command("import_competition_pack", str(path), stdout=out)
    return {line.split(":", 1)[0]: line for line in out.getvalue().splitlines() if ": answers " in line}


def thresholds(competition: Competition) -> tuple:
    return (
        competition.gold_threshold,
        competition.silver_threshold,
        competition.bronze_threshold,
        competition.median_threshold,
        competition.is_lower_better,
    )


def kaggle(competition_id: str) -> tuple:
    t = thresholds_from_leaderboard(read_leaderboard(DATA / "leaderboards" / f"{competition_id}.csv"))
    return (t.gold, t.silver, t.bronze, t.median, t.is_lower_better)


def test_importing_mlebench_prepared_data_over_a_demo_pack_puts_the_shipped_kaggle_thresholds_back(registry, tmp_path):
    lines = imported(demo_packs(tmp_path / "demo", [AERIAL, PIZZA]))
    aerial = Competition.objects.get(slug=AERIAL)
    assert aerial.leaderboard_source == "simulated" and len(aerial.leaderboard_scores) == 40
    assert "leaderboard: simulated for the synthetic answers, 40 teams" in lines[AERIAL]

    lines = imported(mlebench_data(tmp_path / "data", [AERIAL, PIZZA]))
    aerial, pizza = Competition.objects.get(slug=AERIAL), Competition.objects.get(slug=PIZZA)
    assert not aerial.pack.synthetic and aerial.pack.source_layout == "mlebench"
    # Kaggle's gold for aerial-cactus needs a perfect 1.0, which the official grader reports too.
    assert thresholds(aerial) == kaggle(AERIAL) == (1.0, 1.0, 1.0, 0.9991, False)
    assert aerial.leaderboard_source == "kaggle" and aerial.thresholds_from_official_report
    assert thresholds(pizza) == kaggle(PIZZA) and pizza.leaderboard_source == "kaggle"
    assert pizza.leaderboard_scores == read_leaderboard(DATA / "leaderboards" / f"{PIZZA}.csv")
    assert lines[PIZZA].endswith(f"leaderboard: kaggle (shipped), {len(pizza.leaderboard_scores)} teams")
    assert "leaderboard: official thresholds (with the shipped kaggle leaderboard)" in lines[AERIAL]


def test_real_answers_without_any_leaderboard_have_medals_unknown_and_the_import_says_so(registry, tmp_path):
    imported(demo_packs(tmp_path / "demo", [MELANOMA]))
    assert Competition.objects.get(slug=MELANOMA).leaderboard_source == "simulated"
    lines = imported(mlebench_data(tmp_path / "data", [MELANOMA]))
    melanoma = Competition.objects.get(slug=MELANOMA)
    assert melanoma.leaderboard_source == "" and not melanoma.has_thresholds and melanoma.leaderboard_scores == []
    assert lines[MELANOMA].endswith("leaderboard: none: medals unknown")


def test_a_simulated_leaderboard_is_never_used_with_other_answers(registry, tmp_path):
    made_for_other_answers = {"synthetic": True, "leaderboard_answers_sha256": "0" * 64}
    write_portal_pack(tmp_path / "spooky", leaderboard=[0.1, 0.2, 0.3, 0.4], extra=made_for_other_answers)
    lines = imported(tmp_path / "spooky")
    spooky = Competition.objects.get(slug=SPOOKY)
    assert spooky.leaderboard_source == "" and not spooky.has_thresholds
    assert "none: medals unknown (the pack's leaderboard was made for other answers" in lines[SPOOKY]


def test_a_demo_pack_records_the_answers_its_leaderboard_was_simulated_for(registry, tmp_path):
    out = demo_packs(tmp_path / "demo", [PIZZA])
    manifest = json.loads((out / PIZZA / "pack.json").read_text())
    imported(out)
    pack = Competition.objects.get(slug=PIZZA).pack
    assert manifest["leaderboard_answers_sha256"] == pack.answers_sha256 == pack.leaderboard_answers_sha256

    # The same folder with other answers (an operator copied real ones in): the simulated teams no longer apply.
    shutil.copy(out / PIZZA / manifest["answers"], tmp_path / "answers.csv")
    (out / PIZZA / manifest["answers"]).write_text((tmp_path / "answers.csv").read_text().replace(",0\n", ",1\n", 1))
    imported(out)
    assert Competition.objects.get(slug=PIZZA).leaderboard_source == ""


def test_reloading_the_registry_keeps_the_leaderboard_in_force(registry, tmp_path):
    imported(demo_packs(tmp_path / "demo", [AERIAL]))
    assert competitions_load()[1:] == (0, 0)
    assert Competition.objects.get(slug=AERIAL).leaderboard_source == "simulated"
    imported(mlebench_data(tmp_path / "data", [AERIAL]))
    assert competitions_load()[1:] == (0, 0)
    assert thresholds(Competition.objects.get(slug=AERIAL)) == kaggle(AERIAL)


def test_the_page_and_the_api_say_which_leaderboard_is_in_force(registry, tmp_path, client):
    imported(demo_packs(tmp_path / "demo", [PIZZA]))
    imported(mlebench_data(tmp_path / "data", [MELANOMA]))
    api = APIClient()

    pizza = api.get(f"/api/v1/competitions/{PIZZA}/").json()
    assert pizza["leaderboard_source"] == "simulated" and pizza["thresholds"]["source"] == "simulated"
    assert pizza["leaderboard"] == "simulated for the synthetic answers" and pizza["medals_known"] is True
    assert "Leaderboard in force: <strong>simulated for the synthetic answers</strong>, 40 teams" in (
        client.get(f"/competitions/{PIZZA}/").content.decode()
    )

    melanoma = api.get(f"/api/v1/competitions/{MELANOMA}/").json()
    assert (melanoma["leaderboard_source"], melanoma["thresholds"], melanoma["medals_known"]) == ("none", None, False)
    assert melanoma["gradable"] is True  # graded all the same, its medals reported as unknown
    page = client.get(f"/competitions/{MELANOMA}/").content.decode()
    assert "Leaderboard in force: <strong>none: medals unknown</strong>" in page

    aerial = api.get(f"/api/v1/competitions/{AERIAL}/").json()
    assert aerial["leaderboard_source"] == "kaggle" and aerial["thresholds"]["from_official_report"] is True
    assert aerial["leaderboard"] == "official thresholds (with the shipped kaggle leaderboard)"
