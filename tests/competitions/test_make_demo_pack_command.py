import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from competitions.models import Competition
from competitions.services import competitions_load


def test_it_writes_packs_and_an_agents_run_group_that_grade_for_real(db, tmp_path):
    competitions_load()
    out = tmp_path / "packs"
    call_command(
        "make_demo_pack",
        "--split",
        "low",
        "--out",
        str(out),
        "--size",
        "small",
        "--teams",
        "40",
        "--competition",
        "spooky-author-identification",
        "--competition",
        "denoising-dirty-documents",
        "--quality",
        "0.95",
        "--seeds",
        "2",
        stdout=StringIO(),
    )
    assert json.loads((out / "spooky-author-identification" / "pack.json").read_text())["synthetic"] is True
    call_command("import_competition_pack", str(out), stdout=StringIO())
    spooky = Competition.objects.get(slug="spooky-author-identification")
    assert spooky.leaderboard_source == "simulated" and len(spooky.leaderboard_scores) == 40

    group = next((out / "runs").iterdir())
    runs = sorted(p for p in group.iterdir() if p.is_dir())
    assert len(runs) == 4 and (group / "metadata.json").is_file()
    for run in runs:
        competition = run.name.rsplit("_", 1)[0]
        stdout = StringIO()
        call_command(
            "grade",
            "--competition",
            competition,
            str(run / "submission" / "submission.csv"),
            stdout=stdout,
            stderr=StringIO(),
        )
        report = json.loads(stdout.getvalue())
        assert report["valid_submission"] and report["above_median"], (competition, report)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--size", "huge"], "use small, full or a number of rows"),
        (["--quality", "1.5"], "--quality must be between 0 and 1"),
        (["--competition", "no-such-competition"], "no-such-competition"),
    ],
)
def test_bad_options_get_a_clear_error(tmp_path, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("make_demo_pack", "--out", str(tmp_path), *args, stdout=StringIO())
