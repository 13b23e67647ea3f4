"""The example agent, run as a process with python3 on real data files, as the process backend runs it."""

import csv
import os
import subprocess
import sys
from pathlib import Path

AGENT = Path(__file__).resolve().parents[3] / "runners" / "agents" / "example-agent"


def run_agent(tmp_path: Path, files: dict[str, str], **env: str) -> subprocess.CompletedProcess:
    data = tmp_path / "data"
    data.mkdir(parents=True)
    for name, text in files.items():
        (data / name).write_text(text)
    full_env = {
        "PATH": os.environ["PATH"],
        "DATA_DIR": str(data),
        "SUBMISSION_DIR": str(tmp_path / "submission"),
        "LOGS_DIR": str(tmp_path / "logs"),
        "CODE_DIR": str(tmp_path / "code"),
        "VALIDATE_SUBMISSION": str(tmp_path / "no-such-script.sh"),
        "TIME_LIMIT_SECS": "60",
        "COMPETITION_ID": "demo-comp",
        **env,
    }
    return subprocess.run(["bash", str(AGENT / "start.sh")], env=full_env, capture_output=True, text=True, timeout=60)


def submission(tmp_path: Path) -> list[list[str]]:
    with open(tmp_path / "submission" / "submission.csv", newline="") as source:
        return list(csv.reader(source))


def test_it_predicts_the_train_mean_for_numbers_and_the_mode_otherwise(tmp_path: Path) -> None:
    done = run_agent(
        tmp_path,
        {
            "sample_submission.csv": "PassengerId,Age,Transported\n7,0,False\n8,0,False\n",
            "train.csv": "PassengerId,Age,Transported,Name\n1,20,True,a\n2,40,True,b\n3,,False,c\n",
        },
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert submission(tmp_path) == [["PassengerId", "Age", "Transported"], ["7", "30.0", "True"], ["8", "30.0", "True"]]
    log = (tmp_path / "logs" / "agent.log").read_text()
    assert "trained on 3 rows" in log
    assert "no format check script" in log
    assert sorted(os.listdir(tmp_path / "code")) == ["agent.py", "start.sh"]


def test_without_train_csv_it_submits_the_samples_own_values(tmp_path: Path) -> None:
    done = run_agent(tmp_path, {"sample_submission.csv": "id,a,b\nx,0.5,cat\ny,0.5,dog\n"})

    assert done.returncode == 0
    assert submission(tmp_path) == [["id", "a", "b"], ["x", "0.5", "cat"], ["y", "0.5", "dog"]]
    assert "no train.csv" in done.stdout


def test_without_a_sample_submission_it_says_so_and_fails(tmp_path: Path) -> None:
    done = run_agent(tmp_path, {"train.csv": "id,a\n1,2\n", "submission_format.txt": "id,a"})

    assert done.returncode == 1
    assert "no sample submission (a CSV named like sample_submission.csv)" in done.stdout
    assert "'submission_format.txt', 'train.csv'" in done.stdout  # what it did find


def test_it_finds_a_sample_named_otherwise_and_keeps_id_columns_wherever_they_are(tmp_path: Path) -> None:
    """detecting-insults names it sample_submission_null.csv and puts the target first, with two id columns
    (Date, Comment) after it: only the placeholder column is predicted, the ids are kept as they are."""
    done = run_agent(
        tmp_path,
        {
            "sample_submission_null.csv": 'Insult,Date,Comment\n0,20120618,"you are"\n0,,"a, b"\n',
            "train.csv": 'Insult,Date,Comment\n1,20120101,"x"\n1,20120102,"y"\n0,,"z"\n',
        },
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert submission(tmp_path) == [["Insult", "Date", "Comment"], ["0.6666666666666666", "20120618", "you are"],
                                    ["0.6666666666666666", "", "a, b"]]  # fmt: skip
    assert "sample_submission_null.csv: 3 columns; predicting Insult" in done.stdout


def test_every_lite_demo_competition_gets_a_valid_submission(registry_with_packs, lite_packs, tmp_path: Path) -> None:
    """The example agent on the public data of every Lite (low split) demo competition, as a hosted run gives
    it, graded by the portal's own graders: every one is valid (four had no sample_submission.csv by that
    name: denoising, insults, pizza, whale)."""
    from competitions.models import Competition
    from grading.services.grade_file import grade_file

    competitions = [c for c in Competition.objects.select_related("pack").order_by("slug") if "low" in c.splits]
    assert len(competitions) == 22
    invalid = {}
    for competition in competitions:
        home = tmp_path / competition.slug
        done = run_agent(home, {}, DATA_DIR=str(lite_packs / competition.slug / "public"))
        if done.returncode != 0:
            invalid[competition.slug] = done.stdout[-500:]
            continue
        report = grade_file(competition=competition, submission_path=home / "submission" / "submission.csv")
        if not report.valid_submission:
            invalid[competition.slug] = report.reason
    assert invalid == {}


def test_it_runs_on_the_python_it_is_given(tmp_path: Path) -> None:
    """Standard library only: the same file runs under this interpreter directly."""
    done = subprocess.run(
        [sys.executable, "-I", str(AGENT / "agent.py")],
        env={"DATA_DIR": str(tmp_path), "LOGS_DIR": str(tmp_path / "logs")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "no sample submission" in done.stdout
