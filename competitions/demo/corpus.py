"""The fairness checks' corpora: red-team cheats and honest entries, each with the verdict the checks owe it.

Every case is built deterministically from the demo packs (Lite: split "low", size "small") by a builder that
writes one bundle, or two for the cases across teams (the earlier team's first, the case's own last). The red
team assumes what issue 30 assumes: the cheating team holds the answers (``mlebench prepare`` derives them from
public data) and knows our rules. The honest corpus is what a check must never hold: weak to strong models,
some beyond the simulated Kaggle top, the logs and files honest agents leave (notebooks with images, binary
checkpoints, a popular scaffold shared by two teams).

``benchmarks/fairness_corpus.py`` runs every case through the framework-free checks and prints detection and
false-hold rates per family; ``tests/grading/test_redteam_pipeline.py`` uploads them through the pipeline.
Framework-free: nothing here imports Django.

Expected verdicts name flag codes (the constants below). A case no check of the uploaded files can hold says
what does (``Case.beyond_files``): the best 3 of 10 seeds with metadata.json rewritten is three honest runs to
every check, and only a pre-registered number of seeds tells it apart.
"""

from __future__ import annotations

import base64
import gzip
import json
import pickle
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd

from competitions.demo.agent import answers_submission, simulate_submission
from competitions.demo.catalog import competition_facts, rng_for, split_ids
from competitions.demo.csvio import write_csv
from competitions.demo.runs import default_manifest, pack_answers, run_id_for, write_run_bundle, write_run_group
from competitions.demo.specs import spec_for
from competitions.demo.targets import Binary, MultiLabel, OneHot, predicted_columns

# The flag codes that must hold each family (see the module's docstring).
ANSWER_COPY = "answer_copy"
DUPLICATES = "duplicate_submissions"
FEEDBACK = "test_set_feedback"
UNSCANNED = "unscanned_evidence"  # evidence the scanner could not read, a scan cut short, a run without logs
SELECTED_SEEDS = "selected_seeds"  # more runs made than uploaded (metadata.json lists runs the bundle lacks)

LITE = tuple(split_ids("low"))
AUC = tuple(
    cid
    for cid in LITE
    if competition_facts(cid).higher_is_better
    and all(isinstance(t, (Binary, MultiLabel)) for t in spec_for(cid).targets)
)
LOG_LOSS = tuple(
    cid for cid in LITE if not competition_facts(cid).higher_is_better and isinstance(spec_for(cid).targets[0], OneHot)
)
IMBALANCED = "siim-isic-melanoma-classification"  # 2 % positives
SEEDS = (0, 1, 2)
HONEST_BASE_QUALITY = 0.6  # the honest model a cheating team starts from: mediocre, below every medal
HOLDS_ENTRY = "held"
CLEAN = "clean"


@dataclass(frozen=True)
class Expected:
    """The verdict the checks owe a case: ``code`` must be raised and, when ``blocking``, hold the entry for
    review; ``code`` None is a clean entry (no blocking flag; published and comparable)."""

    code: str | None
    blocking: bool = True

    @property
    def clean(self) -> bool:
        return self.code is None

    def __str__(self) -> str:
        if self.code is None:
            return CLEAN
        return f"{self.code} ({'blocking' if self.blocking else 'not comparable'})"


@dataclass(frozen=True)
class Upload:
    """One bundle of a case, uploaded by ``team``; the case is judged on its last upload."""

    team: str
    bundle: Path


@dataclass(frozen=True)
class Case:
    family: str
    strength: str
    expected: Expected
    builder: Callable[[Path, Path, tuple[str, ...]], list[Upload]]
    applies_to: tuple[str, ...] = LITE  # the Lite competitions the case can be built on
    honest: bool = False
    settings: dict = field(default_factory=dict)  # CheckSettings overrides the case needs (a small scan budget)
    sees: str = ""  # what evidence the case leaves, and what our checks can see of it
    # What holds the case where no check of the uploaded files can ("registration": only a pre-registered number
    # of seeds tells the best 3 of 10 from 3 honest seeds). Such cases are measured, and counted as misses, but
    # the pipeline tests of the checks leave them out.
    beyond_files: str = ""

    @property
    def name(self) -> str:
        return f"{self.family}/{self.strength}"

    def build(self, *, packs: Path, out_dir: Path, competitions: Sequence[str] | None = None) -> list[Upload]:
        """Write the case's bundles under ``out_dir`` (emptied first) from the packs under ``packs``, on
        ``competitions`` (default: every competition the case applies to) and return them in upload order."""
        chosen = tuple(competitions) if competitions is not None else self.applies_to
        unknown = [cid for cid in chosen if cid not in self.applies_to]
        if unknown:
            raise ValueError(f"{self.name} does not apply to {', '.join(unknown)}")
        if out_dir.exists():
            shutil.rmtree(out_dir)
        out_dir.mkdir(parents=True)
        return self.builder(Path(packs), out_dir, chosen)


# --- what honest runs leave ----------------------------------------------------------------------------

AGENT_LOG = """\
[{t0}] INFO agent: starting {cid} (seed {seed})
[{t0}] INFO agent: drafting a solution; 5-fold cross-validation on train.csv
Epoch 1/3: 100%|##########| 120/120 [00:08<00:00, 14.2it/s, loss=0.6812]
Epoch 3/3: 100%|##########| 120/120 [00:08<00:00, 14.9it/s, loss=0.4127]
fold 0 val_score=0.8312  fold 1 val_score=0.8254  fold 2 val_score=0.8401
[{t1}] INFO agent: best node by validation metric: 0.8322 (cv mean)
[{t1}] INFO agent: /home/validate_submission.sh /home/submission/submission.csv
{{"result":"Submission is valid."}}
[{t1}] INFO agent: wrote /home/submission/submission.csv
"""
FEEDBACK_LINE = "grader says: private_score: 0.98312 gold_medal: True leaderboard_rank: 3"


def agent_log(cid: str, seed: int) -> str:
    start = datetime(2026, 11, 30, 10, 0, tzinfo=UTC) + timedelta(minutes=7 * seed)
    return AGENT_LOG.format(
        cid=cid, seed=seed, t0=f"{start:%Y-%m-%d %H:%M:%S}", t1=f"{start + timedelta(hours=3):%Y-%m-%d %H:%M:%S}"
    )


def honest_group(
    out: Path,
    packs: Path,
    competitions: Sequence[str],
    *,
    quality: float = HONEST_BASE_QUALITY,
    seeds: Sequence[int] = SEEDS,
    style: str = "baseline",
    agent: str = "demo",
) -> Path:
    """An honest run group with an agent log in every run's ``logs/``."""
    group = write_run_group(
        out_dir=out / "runs",
        competition_ids=list(competitions),
        seeds=tuple(seeds),
        quality=quality,
        answers=pack_answers(packs),
        style=style,
        agent=agent,
    )
    for cid in competitions:
        for seed in seeds:
            logs = group / run_id_for(competition_id=cid, seed=seed) / "logs"
            logs.mkdir(parents=True, exist_ok=True)
            (logs / "agent.log").write_text(agent_log(cid, seed))
    return group


def run_dir(group: Path, cid: str, seed: int) -> Path:
    return group / run_id_for(competition_id=cid, seed=seed)


def submission_path(group: Path, cid: str, seed: int) -> Path:
    return run_dir(group, cid, seed) / "submission" / "submission.csv"


def bundle(group: Path, out: Path, *, seeds: int = len(SEEDS), name: str = "bundle.tar.gz") -> Path:
    return write_run_bundle(run_group=group, out_path=out / name, manifest=default_manifest(split="low", seeds=seeds))


def write_frame(cid: str, frame: pd.DataFrame, path: Path) -> None:
    write_csv(frame, path, quoting=spec_for(cid).csv_quoting)


def honest_frame(cid: str, answers: pd.DataFrame, seed: int, quality: float = HONEST_BASE_QUALITY) -> pd.DataFrame:
    return simulate_submission(competition_id=cid, answers=answers, quality=quality, seed=seed)


def row_mask(cid: str, seed: int, n: int, share: float, purpose: str) -> np.ndarray:
    """A fixed share of rows (exactly round(share * n)), chosen per (competition, seed)."""
    rng = rng_for(seed=seed, competition_id=cid, purpose=purpose)
    mask = np.zeros(n, dtype=bool)
    mask[rng.permutation(n)[: round(share * n)]] = True
    return mask


def mixed(first: pd.DataFrame, second: pd.DataFrame, take_second: np.ndarray) -> pd.DataFrame:
    """Rows of ``second`` where ``take_second``, else of ``first`` (both in the public format's row order)."""
    out = first.copy()
    for column in first.columns:
        values = first[column].to_numpy(dtype=object).copy()
        values[take_second] = second[column].to_numpy(dtype=object)[take_second]
        out[column] = pd.Series(values).infer_objects()
    return out


# --- red team: answers, disguised --------------------------------------------------------------------


def _rewrite_runs(
    packs: Path,
    out: Path,
    competitions: Sequence[str],
    rewrite: Callable[[str, int, pd.DataFrame], pd.DataFrame | None],
) -> list[Upload]:
    """An honest group whose submissions ``rewrite(cid, seed, answers)`` replaces (None keeps the honest one)."""
    group = honest_group(out, packs, competitions)
    answers_of = pack_answers(packs)
    for cid in competitions:
        answers = answers_of(cid)
        for seed in SEEDS:
            frame = rewrite(cid, seed, answers)
            if frame is not None:
                write_frame(cid, frame, submission_path(group, cid, seed))
    return [Upload("cheater", bundle(group, out))]


def partial_copy(share: float) -> Callable[[Path, Path, tuple[str, ...]], list[Upload]]:
    def rewrite(cid: str, seed: int, answers: pd.DataFrame) -> pd.DataFrame:
        honest = honest_frame(cid, answers, seed)
        copied = answers_submission(competition_id=cid, answers=answers)
        return mixed(honest, copied, row_mask(cid, seed, len(honest), share, "corpus-copy"))

    return lambda packs, out, competitions: _rewrite_runs(packs, out, competitions, rewrite)


def _probability_columns(cid: str) -> list[str]:
    return [
        c for t in spec_for(cid).targets if isinstance(t, (Binary, MultiLabel, OneHot)) for c in predicted_columns(t)
    ]


def order_keeping(kind: str) -> Callable[[Path, Path, tuple[str, ...]], list[Upload]]:
    """The answers through an increasing map: AUC sees the answers, an equality test sees probabilities."""

    def rewrite(cid: str, seed: int, answers: pd.DataFrame) -> pd.DataFrame:
        frame = answers_submission(competition_id=cid, answers=answers)
        rng = rng_for(seed=seed, competition_id=cid, purpose="corpus-order")
        for column in _probability_columns(cid):
            y = frame[column].to_numpy(dtype=float)
            scored = y >= 0  # Jigsaw's unscored rows (-1) get any probability
            u = rng.random(len(y))
            if kind == "affine":
                p = 0.3 + 0.4 * y
            elif kind == "jitter":  # ties broken at random, every positive still above every negative
                p = 0.2 + 0.5 * y + 0.1 * u
            else:  # "squashed": a logistic of the label plus noise that keeps the classes apart
                p = 1.0 / (1.0 + np.exp(-(3.0 * (y - 0.5) + 0.9 * (u - 0.5))))
            frame[column] = np.round(np.where(scored, p, u), 6)
        return frame

    return lambda packs, out, competitions: _rewrite_runs(packs, out, competitions, rewrite)


def smoothed(epsilon: float) -> Callable[[Path, Path, tuple[str, ...]], list[Upload]]:
    """Label smoothing of the answers for log loss: (1 - e) one-hot + e / K, with a little noise."""

    def rewrite(cid: str, seed: int, answers: pd.DataFrame) -> pd.DataFrame:
        frame = answers_submission(competition_id=cid, answers=answers)
        columns = _probability_columns(cid)
        rng = rng_for(seed=seed, competition_id=cid, purpose="corpus-smooth")
        onehot = frame[columns].to_numpy(dtype=float)
        probs = (1 - epsilon) * onehot + epsilon / len(columns)
        probs *= 1.0 + 0.02 * rng.random(probs.shape)
        probs /= probs.sum(axis=1, keepdims=True)
        return frame.assign(**{c: probs[:, j] for j, c in enumerate(columns)})

    return lambda packs, out, competitions: _rewrite_runs(packs, out, competitions, rewrite)


def half_and_sample(packs: Path, out: Path, competitions: tuple[str, ...]) -> list[Upload]:
    """Half the rows from the answers, half from the sample submission."""

    def rewrite(cid: str, seed: int, answers: pd.DataFrame) -> pd.DataFrame:
        copied = answers_submission(competition_id=cid, answers=answers)
        sample_file = packs / cid / json.loads((packs / cid / "pack.json").read_text())["sample_submission"]
        sample = pd.read_csv(sample_file, keep_default_na=False, na_values=[""])
        assert len(sample) == len(copied)  # both in the sample submission's row order
        return mixed(sample, copied, row_mask(cid, seed, len(copied), 0.5, "corpus-half"))

    return _rewrite_runs(packs, out, competitions, rewrite)


def copies_on_runs(k: int) -> Callable[[Path, Path, tuple[str, ...]], list[Upload]]:
    """Exact answer copies on ``k`` runs (of 66 on Lite), spread over competitions and seeds; the rest honest."""

    def build(packs: Path, out: Path, competitions: tuple[str, ...]) -> list[Upload]:
        runs = [(cid, seed) for seed in SEEDS for cid in competitions]
        chosen = set(runs[:: max(1, len(runs) // k)][:k])

        def rewrite(cid: str, seed: int, answers: pd.DataFrame) -> pd.DataFrame | None:
            return answers_submission(competition_id=cid, answers=answers) if (cid, seed) in chosen else None

        return _rewrite_runs(packs, out, competitions, rewrite)

    return build


def imbalanced_copy(packs: Path, out: Path, competitions: tuple[str, ...]) -> list[Upload]:
    """An exact copy on siim-isic (2 % positives), every seed; the other competitions honest."""

    def rewrite(cid: str, seed: int, answers: pd.DataFrame) -> pd.DataFrame | None:
        return answers_submission(competition_id=cid, answers=answers) if cid == IMBALANCED else None

    return _rewrite_runs(
        packs, out, (*competitions, *((IMBALANCED,) if IMBALANCED not in competitions else ())), rewrite
    )


# --- red team: seeds and other teams' work -----------------------------------------------------------


def cosmetic_seeds(edit: str) -> Callable[[Path, Path, tuple[str, ...]], list[Upload]]:
    """Seeds 1 and 2 are seed 0's file with a cosmetic edit: one real seed counted three times."""

    def build(packs: Path, out: Path, competitions: tuple[str, ...]) -> list[Upload]:
        group = honest_group(out, packs, competitions)
        for cid in competitions:
            original = submission_path(group, cid, 0)
            frame = pd.read_csv(original, keep_default_na=False, na_values=[""])
            for seed in (1, 2):
                target = submission_path(group, cid, seed)
                if edit == "trailing_newline":  # one newline on seed 1, two on seed 2: no two files the same
                    target.write_bytes(original.read_bytes() + b"\n" * seed)
                elif edit == "rows_reordered":
                    order = rng_for(seed=seed, competition_id=cid, purpose="corpus-reorder").permutation(len(frame))
                    write_frame(cid, frame.iloc[order], target)
                elif edit == "float_format":  # another format per seed; every cell quoted where nothing is a float
                    floats = frame.select_dtypes("float").columns
                    shape = "{:.9e}" if seed == 1 else "{:.15g}"
                    if len(floats):
                        write_frame(cid, frame.assign(**{c: frame[c].map(shape.format) for c in floats}), target)
                    else:
                        frame.to_csv(target, index=False, quoting=1 if seed == 1 else 0, lineterminator="\r\n")
                else:  # "one_cell": one prediction changed, another row on each seed
                    changed = frame.copy()
                    column = changed.columns[-1]
                    values = changed[column].to_numpy(dtype=object).copy()
                    if pd.api.types.is_numeric_dtype(changed[column]):
                        values[seed] = values[seed] + 1
                    else:
                        values[seed] = f"{values[seed]}x"
                    changed[column] = pd.Series(values).infer_objects()
                    write_frame(cid, changed, target)
        return [Upload("cheater", bundle(group, out))]

    return build


def reuploaded(packs: Path, out: Path, competitions: tuple[str, ...]) -> list[Upload]:
    """Another team's published bundle, downloaded, a newline added to every file, uploaded as one's own."""
    original = honest_group(out / "original", packs, competitions, quality=0.8, style="ensemble", agent="origin")
    first = bundle(original, out / "original")
    copy_root = out / "copy" / "runs" / original.name
    shutil.copytree(original, copy_root)
    for path in sorted(copy_root.rglob("*")):
        if path.is_file():
            path.write_bytes(path.read_bytes() + b"\n")
    return [Upload("origin", first), Upload("cheater", bundle(copy_root, out / "copy"))]


# --- red team: evidence hidden or missing ------------------------------------------------------------


def no_logs(packs: Path, out: Path, competitions: tuple[str, ...]) -> list[Upload]:
    group = honest_group(out, packs, competitions)
    for cid in competitions:
        for seed in SEEDS:
            folder = run_dir(group, cid, seed)
            shutil.rmtree(folder / "logs")
            (folder / "run.log").unlink()
    return [Upload("cheater", bundle(group, out))]


def _notebook(outputs: list[dict]) -> str:
    cell = {
        "cell_type": "code",
        "execution_count": 1,
        "metadata": {},
        "source": ["model.fit(X, y)\n"],
        "outputs": outputs,
    }
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def _hidden(how: str) -> dict[str, bytes]:
    """Files (path relative to the run folder -> bytes) that carry the feedback line in the way named."""
    line = FEEDBACK_LINE
    if how == "plain":
        return {"logs/feedback.log": f"{line}\n".encode()}
    if how == "json_keys":
        return {
            "logs/state.json": json.dumps(
                {"step": 12, "grader": {"private_score": 0.98312, "gold_medal": True, "leaderboard_rank": 3}}
            ).encode()
        }
    if how == "base64":
        return {"logs/agent.log.b64": base64.b64encode(line.encode()) + b"\n"}
    if how == "split_lines":
        return {
            "logs/feedback.log": b"grader says: private_sco\nre: 0.98312 gold_\nmedal: True leaderboard_\nrank: 3\n"
        }
    if how == "notebook":
        return {
            "logs/explore.ipynb": _notebook(
                [{"output_type": "stream", "name": "stdout", "text": [f"{line}\n"]}]
            ).encode()
        }
    if how == "pickle":
        return {"logs/state.pkl": pickle.dumps({"feedback": line, "step": 12})}
    if how == "outside_logs":
        return {"notes/feedback.txt": f"{line}\n".encode()}
    if how == "nul_byte":
        return {"logs/feedback.log": b"\x00" + f"progress\n{line}\n".encode()}
    if how == "gzip":
        return {"logs/feedback.log.gz": gzip.compress(f"{line}\n".encode(), mtime=0)}
    if how == "utf16":
        return {"logs/feedback.log": f"{line}\n".encode("utf-16")}
    if how == "path_concat":
        code = (
            'import os\nroot = "/home/" + "pre" + "pared/" + "priv" + "ate"\n'
            'answers = open(os.path.join(root, "test" + ".csv")).read()\n'
        )
        return {"code/helpers.py": code.encode()}
    if how == "remote_eval":
        code = (
            "import requests\n\nbest = None\nfor step in range(50):\n    candidate = improve(best)\n"
            '    result = requests.post("https://eval.example.org/remote_eval", files={"f": candidate}).json()\n'
            '    if best is None or result["score"] > best["score"]:\n        best = result\n'
        )
        return {"code/search.py": code.encode()}
    raise ValueError(f"unknown hiding place {how!r}")


HIDING_PLACES = (
    "plain", "json_keys", "base64", "split_lines", "notebook", "pickle", "outside_logs", "nul_byte", "gzip",
    "utf16", "path_concat", "remote_eval",
)  # fmt: skip


def hidden_feedback(how: str) -> Callable[[Path, Path, tuple[str, ...]], list[Upload]]:
    """Feedback from the test set in one run per competition (seed 0), hidden as ``how`` says."""

    def build(packs: Path, out: Path, competitions: tuple[str, ...]) -> list[Upload]:
        group = honest_group(out, packs, competitions)
        for cid in competitions:
            for rel, body in _hidden(how).items():
                path = run_dir(group, cid, 0) / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(body)
        return [Upload("cheater", bundle(group, out))]

    return build


# The scan budget the budget case runs under (the portal reads twice what a bundle may unpack to).
SCAN_BUDGET = 256 * 1024


def exhausted_budget(packs: Path, out: Path, competitions: tuple[str, ...]) -> list[Upload]:
    """A log larger than the scan budget, the feedback after it."""
    group = honest_group(out, packs, competitions)
    filler = ("train_loss=0.4812 val_loss=0.5011 step=%06d\n" * 1).encode()
    lines = b"".join(filler.replace(b"%06d", f"{i:06d}".encode()) for i in range(SCAN_BUDGET // len(filler) + 2000))
    for cid in competitions:
        path = run_dir(group, cid, 0) / "logs" / "train.log"
        path.write_bytes(lines + f"{FEEDBACK_LINE}\n".encode())
    return [Upload("cheater", bundle(group, out))]


def best_of_ten(careful: bool) -> Callable[[Path, Path, tuple[str, ...]], list[Upload]]:
    """Ten seeds run, the three best per competition uploaded. Careless: the run ids and metadata.json of all
    ten stay (seeds 0, 4, 7 ...; metadata lists runs the bundle lacks). Careful: the three renumbered 0, 1, 2 and
    metadata.json rewritten; every file is then an honest run, which no check of files can tell apart."""

    def build(packs: Path, out: Path, competitions: tuple[str, ...]) -> list[Upload]:
        ten = tuple(range(10))
        group = honest_group(out, packs, competitions, seeds=ten)
        answers_of = pack_answers(packs)
        from competitions.demo.leaderboard import grade  # the real grader, as a cheating team's local copy

        metadata = json.loads((group / "metadata.json").read_text())
        for cid in competitions:
            answers = answers_of(cid)
            sign = 1 if competition_facts(cid).higher_is_better else -1
            scores = {
                seed: sign
                * grade(competition_id=cid, submission=pd.read_csv(submission_path(group, cid, seed)), answers=answers)
                for seed in ten
            }
            best = sorted(sorted(ten, key=lambda s: -scores[s])[:3])
            for seed in ten:
                if seed not in best:
                    shutil.rmtree(run_dir(group, cid, seed))
                    if careful:
                        del metadata["runs"][run_id_for(competition_id=cid, seed=seed)]
            if careful:
                moved = {seed: out / "moved" / f"{cid}-{seed}" for seed in best}
                for seed, place in moved.items():
                    shutil.move(run_dir(group, cid, seed), place)
                for new, (seed, place) in enumerate(moved.items()):
                    del metadata["runs"][run_id_for(competition_id=cid, seed=seed)]
                    target = run_dir(group, cid, new)
                    shutil.move(place, target)
                    metadata["runs"][target.name] = {"success": True}
        (group / "metadata.json").write_text(json.dumps(metadata, indent=4) + "\n")
        return [Upload("cheater", bundle(group, out))]

    return build


# --- honest corpus ------------------------------------------------------------------------------------


def honest_entry(
    quality: float, style: str, seeds: Sequence[int]
) -> Callable[[Path, Path, tuple[str, ...]], list[Upload]]:
    def build(packs: Path, out: Path, competitions: tuple[str, ...]) -> list[Upload]:
        group = honest_group(out, packs, competitions, quality=quality, style=style, seeds=seeds)
        return [Upload("honest", bundle(group, out))]

    return build


SCAFFOLD = '''"""A popular open-source agent scaffold: the search loop over drafts, debugs and improvements."""
import json
import subprocess


class Journal:
    def __init__(self):
        self.nodes = []

    def best(self):
        good = [n for n in self.nodes if n["valid"]]
        return max(good, key=lambda n: n["cv_metric"]) if good else None


def run_step(journal, plan):
    result = subprocess.run(["python", "runfile.py"], capture_output=True, text=True, timeout=32400)
    metric = float(result.stdout.strip().splitlines()[-1].split("=")[-1])
    journal.nodes.append({"plan": plan, "valid": result.returncode == 0, "cv_metric": metric})
    return journal.best()


def save(journal, path):
    with open(path, "w") as f:
        json.dump(journal.nodes, f)
'''


def shared_scaffold(packs: Path, out: Path, competitions: tuple[str, ...]) -> list[Upload]:
    """Two honest teams whose code carries the same open-source scaffold beside their own models."""
    uploads = []
    for team, quality, style in (("scaffold-a", 0.7, "boosting"), ("honest", 0.75, "ensemble")):
        group = honest_group(out / team, packs, competitions, quality=quality, style=style, agent=team)
        for cid in competitions:
            for seed in SEEDS:
                (run_dir(group, cid, seed) / "code" / "scaffold.py").write_text(SCAFFOLD)
        uploads.append(Upload(team, bundle(group, out / team)))
    return uploads


PNG_1PX = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
    b"\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7V\xbd\xfa\x00\x00\x00\x00IEND\xaeB`\x82"
)


def honest_notebooks(packs: Path, out: Path, competitions: tuple[str, ...]) -> list[Upload]:
    """Notebooks with training curves as base64 PNGs and ordinary printed output."""
    group = honest_group(out, packs, competitions, quality=0.85, style="boosting")
    image = base64.b64encode(PNG_1PX * 400).decode()
    outputs: list[dict] = [
        {"output_type": "stream", "name": "stdout", "text": ["fold 0 val_auc=0.8312\n", "Submission is valid.\n"]},
        {
            "output_type": "display_data",
            "data": {"image/png": image, "text/plain": ["<Figure size 640x480>"]},
            "metadata": {},
        },
    ]
    for cid in competitions:
        for seed in SEEDS:
            (run_dir(group, cid, seed) / "logs" / "explore.ipynb").write_text(_notebook(outputs))
    return [Upload("honest", bundle(group, out))]


def honest_checkpoints(packs: Path, out: Path, competitions: tuple[str, ...]) -> list[Upload]:
    """Binary checkpoints beside the code and the logs (model weights, a numpy cache)."""
    group = honest_group(out, packs, competitions, quality=0.85, style="ensemble")
    for cid in competitions:
        for seed in SEEDS:
            rng = rng_for(seed=seed, competition_id=cid, purpose="corpus-weights")
            weights = rng.standard_normal(16_384).astype(np.float32).tobytes()
            folder = run_dir(group, cid, seed)
            (folder / "code" / "model.pt").write_bytes(b"PK\x03\x04" + weights)
            (folder / "logs" / "oof_cache.npy").write_bytes(b"\x93NUMPY\x01\x00" + weights[:4096])
    return [Upload("honest", bundle(group, out))]


# --- the corpora ----------------------------------------------------------------------------------------

_COPY = Expected(ANSWER_COPY)


def red_team() -> list[Case]:
    cases = [
        Case(
            "partial_copy",
            f"{round(share * 100)}%",
            _COPY,
            partial_copy(share),
            sees="the copied rows are the answers at full precision",
        )
        for share in (0.2, 0.4, 0.6, 0.8, 1.0)
    ]
    cases += [
        Case(
            "order_keeping",
            kind,
            _COPY,
            order_keeping(kind),
            applies_to=AUC,
            sees="every positive above every negative: separation beyond any Kaggle team",
        )
        for kind in ("affine", "jitter", "squashed")
    ]
    cases += [
        Case(
            "smoothed",
            f"eps={eps}",
            _COPY,
            smoothed(eps),
            applies_to=LOG_LOSS,
            sees="the answers' class always the most probable, never wrong",
        )
        for eps in (0.05, 0.2, 0.4)
    ]
    cases.append(Case("half_sample", "50%", _COPY, half_and_sample, sees="half the rows the answers, exactly"))
    cases += [
        Case(
            "copied_runs",
            f"{k}/66",
            _COPY,
            copies_on_runs(k),
            sees="a few runs exact copies; the entry's other runs honest",
        )
        for k in (1, 3, 6)
    ]
    cases.append(
        Case(
            "imbalanced",
            "siim-isic",
            _COPY,
            imbalanced_copy,
            applies_to=LITE,
            sees="an exact copy on a 98 %/2 % target",
        )
    )
    cases += [
        Case(
            "cosmetic_seeds",
            edit,
            Expected(DUPLICATES, blocking=False),
            cosmetic_seeds(edit),
            sees="seeds 1 and 2 are seed 0 once parsed",
        )
        for edit in ("trailing_newline", "rows_reordered", "float_format", "one_cell")
    ]
    cases.append(
        Case(
            "reupload",
            "newline",
            Expected(DUPLICATES),
            reuploaded,
            sees="another team's bundle, every file plus a newline",
        )
    )
    cases.append(
        Case("no_logs", "all runs", Expected(UNSCANNED), no_logs, sees="no run.log, no logs/: nothing to scan")
    )
    cases += [
        Case(
            "hidden_feedback",
            how,
            Expected(FEEDBACK),
            hidden_feedback(how),
            sees=f"the feedback line as {how}",
        )
        for how in HIDING_PLACES
    ]
    cases.append(
        Case(
            "scan_budget",
            "past the budget",
            Expected(UNSCANNED),
            exhausted_budget,
            settings={"scan_max_bytes": SCAN_BUDGET},
            sees="feedback after the scan budget is spent",
        )
    )
    cases.append(
        Case(
            "best_of_ten",
            "careless",
            Expected(SELECTED_SEEDS),
            best_of_ten(careful=False),
            sees="metadata.json lists 10 runs per competition, the bundle holds 3; run ids of seeds 0-9 (e.g. 0, 4, 7)",
        )
    )
    cases.append(
        Case(
            "best_of_ten",
            "careful",
            Expected(SELECTED_SEEDS),
            best_of_ten(careful=True),
            sees="renumbered 0, 1, 2 and metadata.json rewritten: every file an honest run; no check of the files "
            "can see it (the scores are only the best of 10, above the mean)",
            beyond_files="registration",
        )
    )
    return cases


def honest() -> list[Case]:
    clean = Expected(None)
    cases = [
        Case(
            "honest_model",
            f"q={quality} {style} seeds {seeds[0]}-{seeds[-1]}",
            clean,
            honest_entry(quality, style, seeds),
            honest=True,
        )
        for quality, style, seeds in (
            (0.2, "starter", (0, 1, 2)),
            (0.4, "starter", (3, 4, 5)),
            (0.6, "baseline", (0, 1, 2)),
            (0.8, "boosting", (6, 7, 8)),
            (0.9, "ensemble", (0, 1, 2)),
            (0.93, "boosting", (3, 4, 5)),
            (0.95, "ensemble", (9, 10, 11)),
            (0.97, "ensemble", (0, 1, 2)),
        )
    ]  # fmt: skip
    cases.append(Case("shared_scaffold", "two teams", clean, shared_scaffold, honest=True))
    cases.append(Case("notebook_images", "base64 PNGs", clean, honest_notebooks, honest=True))
    cases.append(Case("binary_checkpoints", "weights", clean, honest_checkpoints, honest=True))
    return cases


def corpus() -> list[Case]:
    return red_team() + honest()
