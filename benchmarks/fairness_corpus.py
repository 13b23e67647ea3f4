"""Both error rates of the fairness checks: red-team detection and honest false holds, per family.

    python benchmarks/fairness_corpus.py [--family partial_copy] [--competitions 22] [--teams 300] [--cases]

Builds the corpora of ``competitions/demo/corpus.py`` from Lite demo packs (split "low", size "small", written
once under benchmarks/out/fairness_corpus/, git-ignored) and runs every case the way the checking step does,
framework-free: each bundle is read by the bundle reader (seeds by the seed rule), each submission graded by the
engine with the answer-agreement measure (as grading/services/grade_file.py does), then a CheckContext and
grading.checks.run_checks. A case's earlier bundles of other teams reach its last through
``CheckContext.other_entries``, built from each earlier context's ``duplicate_submissions.entry_index`` the way
the checking step stores it (``other_entries_of`` below is the one place to adapt to another index).

A red-team case is *held* when its expected flag is raised and, for a blocking expectation, is blocking; for a
seed case (not blocking), when the entry also falls short of three complete seeds (``insufficient_seeds`` or
``padded_seeds``: off the comparable board). An honest entry is *falsely held* when any flag is blocking.
Prints per family: cases, held, detection rate; on the honest corpus: entries, false holds, rate, and which
flags held them. No timing is asserted; the figures are the measurement.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out" / "fairness_corpus"
sys.path.insert(0, str(ROOT))

from competitions.demo import corpus as corpora  # noqa: E402
from competitions.demo.packs import make_demo_pack  # noqa: E402
from grading.bundles import read_bundle  # noqa: E402
from grading.checks import answer_copy, run_checks  # noqa: E402
from grading.checks.base import FlagData  # noqa: E402
from grading.checks.context import (  # noqa: E402
    BoardVersion,
    CheckContext,
    CheckSettings,
    CompetitionFacts,
    KnownIssue,
    OtherEntry,
    RunFiles,
)
from grading.checks.duplicate_submissions import entry_index  # noqa: E402
from grading.engine import agreement  # noqa: E402
from grading.engine.csvio import load_answers  # noqa: E402
from grading.engine.medals import read_leaderboard, thresholds_from_leaderboard  # noqa: E402
from grading.engine.registry import GraderRef  # noqa: E402
from grading.engine.report import grade_submission  # noqa: E402

DATA = ROOT / "competitions" / "data" / "mlebench-v1"
SEED_RULE = {"insufficient_seeds", "padded_seeds"}


@dataclass
class Pack:
    slug: str
    answers_path: Path
    answers: object
    scales: dict
    grader: GraderRef
    leaderboard: list[float]
    facts: CompetitionFacts


def packs_at(root: Path, teams: int) -> Path:
    folder = root / f"packs-{teams}"
    if not (folder / "index.json").exists():
        shutil.rmtree(folder, ignore_errors=True)
        print(f"writing Lite packs ({teams} simulated teams) under {folder} ...", flush=True)
        make_demo_pack(out_dir=folder, split="low", size="small", seed=0, n_teams=teams)
    return folder


def load_packs(folder: Path) -> dict[str, Pack]:
    packs = {}
    for slug in corpora.LITE:
        meta = json.loads((folder / slug / "pack.json").read_text())
        answers_path = folder / slug / meta["answers"]
        answers = load_answers(answers_path)
        scores = read_leaderboard(folder / slug / meta["leaderboard"])
        limits = thresholds_from_leaderboard(scores)
        packs[slug] = Pack(
            slug=slug,
            answers_path=answers_path,
            answers=answers,
            scales=agreement.answer_scales(answers),
            grader=GraderRef(meta["grader"]["name"], meta["grader"].get("params") or {}),
            leaderboard=scores,
            facts=CompetitionFacts(
                slug=slug,
                answers_file=meta["answers"],
                higher_is_better=meta["higher_is_better"],
                is_lower_better=limits.is_lower_better,
                gold_threshold=limits.gold,
                median_threshold=limits.median,
                leaderboard_best=scores[0],
                submission_columns=tuple(meta["submission_columns"]),
                id_column=meta["id_column"],
            ),
        )
    return packs


def known_issues() -> tuple[KnownIssue, ...]:
    issues = json.loads((DATA / "known_issues.json").read_text())["issues"]
    return tuple(
        KnownIssue(competition=i["competition"], kind=i["kind"], description=i["description"], data=i.get("data") or {})
        for i in issues
    )


def graded_run(pack: Pack, submission: Path | None) -> tuple[dict, dict | None]:
    measured: list[dict] = []

    def inspect(frame, answers) -> None:
        measured.append(agreement.measure(frame, answers, id_column=pack.facts.id_column, scales=pack.scales or None))

    report = grade_submission(
        competition_id=pack.slug,
        submission_path=submission,
        answers_path=pack.answers_path,
        answers=pack.answers,
        grader=pack.grader,
        leaderboard_scores=pack.leaderboard,
        inspect=inspect,
    )
    return report.to_dict(with_reason=True), (measured[0] if measured else None)


def check_context(
    bundle_path: Path, work: Path, packs: dict[str, Pack], others: tuple[OtherEntry, ...], settings: CheckSettings
) -> CheckContext:
    read = read_bundle(archive=bundle_path, target=work, known_competition_ids=list(packs))
    folders = {(r.run_group, r.run_id): r for r in read.layout.runs}
    runs = []
    for seeded in read.seeds:
        run = folders[(seeded.run_group, seeded.run_id)]
        regraded, measured = graded_run(packs[seeded.competition_id], run.submission)
        runs.append(
            RunFiles(
                competition_id=seeded.competition_id,
                seed=seeded.seed,
                run_path=f"runs/{seeded.run_group}/{seeded.run_id}",
                folder=run.path,
                submission=run.submission,
                regraded=regraded,
                agreement=measured,
            )
        )
    return CheckContext(
        manifest=read.manifest,
        runs=tuple(runs),
        competitions={slug: pack.facts for slug, pack in packs.items()},
        tier_members={"low": list(corpora.LITE)},
        known_issues=known_issues(),
        board=BoardVersion(name="mle-bench", version="v1", commit="783b15af77404fbaffe7255b0c4a934b46153389"),
        other_entries=others,
        settings=settings,
    )


def other_entries_of(earlier: list[tuple[str, int, CheckContext]], team: str) -> tuple[OtherEntry, ...]:
    """Earlier bundles of other teams, as the checking step's index holds them."""
    entries = []
    for other_team, number, context in earlier:
        if other_team == team:
            continue
        index = entry_index(context)
        entries.append(
            OtherEntry(
                submission_id=number,
                team=other_team,
                submissions=index["submissions"],
                code={cid: frozenset(prints) for cid, prints in index["code"].items()},
                logs=index["logs"],
            )
        )
    return tuple(entries)


def judge(
    case: corpora.Case, packs_root: Path, packs: dict[str, Pack], limit: int | None
) -> tuple[list[FlagData], CheckContext]:
    competitions = case.applies_to[:limit] if limit else case.applies_to
    settings = CheckSettings(**case.settings)
    with tempfile.TemporaryDirectory() as tmp:
        uploads = case.build(packs=packs_root, out_dir=Path(tmp) / "built", competitions=competitions)
        earlier: list[tuple[str, int, CheckContext]] = []
        flags: list[FlagData] = []
        context = None
        for number, upload in enumerate(uploads, start=1):
            context = check_context(
                upload.bundle, Path(tmp) / f"unpacked-{number}", packs, other_entries_of(earlier, upload.team), settings
            )
            flags = run_checks(context)
            earlier.append((upload.team, number, context))
        assert context is not None
        return flags, context  # the last upload's: the case's own


def held_as_expected(case: corpora.Case, flags: list[FlagData]) -> bool:
    expected = case.expected
    raised = {f.code for f in flags if f.severity == "blocking" or not expected.blocking}
    if expected.code not in raised:
        return False
    return expected.blocking or bool(SEED_RULE & {f.code for f in flags})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", action="append", help="only these families (repeatable)")
    parser.add_argument("--competitions", type=int, default=None, help="at most this many competitions per case")
    parser.add_argument("--teams", type=int, default=300, help="simulated Kaggle teams per leaderboard")
    parser.add_argument("--cases", action="store_true", help="print every case's verdict and flags")
    args = parser.parse_args()

    OUT.mkdir(parents=True, exist_ok=True)
    packs_root = packs_at(OUT, args.teams)
    packs = load_packs(packs_root)
    cases = [c for c in corpora.corpus() if not args.family or c.family in args.family]

    red: dict[str, list[bool]] = defaultdict(list)
    # answer_copy's statistics: the red-team cases each one holds, the honest entries it holds, the honest
    # corpus's closest approach to each limit.
    by_statistic: dict[str, list[str]] = defaultdict(list)
    honest_by_statistic: dict[str, list[str]] = defaultdict(list)
    closest: dict[str, tuple[float, str]] = {}
    red_z: dict[str, float] = {}
    honest: dict[str, list[list[str]]] = defaultdict(list)
    beyond: list[str] = []  # misses no check of the files can see, by design
    for case in cases:
        flags, context = judge(case, packs_root, packs, args.competitions)
        blocking = sorted({f.code for f in flags if f.severity == "blocking"})
        statistics = sorted({name for f in flags if f.code == "answer_copy" for name in f.evidence["statistics"]})
        for name in statistics:
            (honest_by_statistic if case.honest else by_statistic)[name].append(case.name)
        if case.expected.code == corpora.ANSWER_COPY and "auc_z" in answer_copy.margins(context):
            red_z[case.name] = answer_copy.margins(context)["auc_z"]
        if case.honest:
            for name, value in answer_copy.margins(context).items():
                larger = name != "error_share_of_forecast"
                if name not in closest or (value > closest[name][0] if larger else value < closest[name][0]):
                    closest[name] = (value, case.name)
        if case.honest:
            honest[case.family].append(blocking)
            verdict = "FALSE HOLD" if blocking else "clean"
        else:
            ok = held_as_expected(case, flags)
            red[case.family].append(ok)
            verdict = "held" if ok else "MISSED"
            if case.beyond_files and not ok:
                beyond.append(f"{case.name} (held only by: {case.beyond_files})")
        if args.cases:
            codes = sorted({f"{f.code}:{f.severity[0]}" for f in flags})
            print(f"  {case.name:<48} expect {case.expected!s:<40} {verdict:<10} {' '.join(codes)}", flush=True)

    if red:
        print("\nred team (expected flag raised; blocking, or off the comparable board for seeds)")
        print(f"{'family':<20} {'cases':>5} {'held':>5} {'detection':>10}")
        total = held = 0
        for family, results in red.items():
            total, held = total + len(results), held + sum(results)
            print(f"{family:<20} {len(results):>5} {sum(results):>5} {sum(results) / len(results):>10.0%}")
        print(f"{'all':<20} {total:>5} {held:>5} {held / total:>10.0%}")
        for name in beyond:
            print(f"  missed by design, nothing in the files shows it: {name}")
    if honest:
        print("\nhonest corpus (any blocking flag is a false hold)")
        print(f"{'family':<20} {'entries':>7} {'false holds':>11} {'rate':>6}  flags")
        total = false = 0
        for family, entries in honest.items():
            holds = [r for r in entries if r]
            total, false = total + len(entries), false + len(holds)
            which = sorted({code for r in holds for code in r})
            print(
                f"{family:<20} {len(entries):>7} {len(holds):>11} {len(holds) / len(entries):>6.0%}  {' '.join(which)}"
            )
        print(f"{'all':<20} {total:>7} {false:>11} {false / total:>6.0%}")
    if by_statistic or honest_by_statistic or closest:
        s = CheckSettings()
        limits = {
            "exact_low": f"> {s.answer_copy_exact:g}",
            "exact_01_low": f"> {s.answer_copy_exact:g}",
            "error_share_of_forecast": "0 and forecast large enough",
            "auc_z": f">= {answer_copy.z_of(s.answer_copy_confidence):.2f}",
        }
        print("\nanswer_copy by statistic (red-team cases it holds; honest entries it holds)")
        for name in answer_copy.STATISTICS:
            print(f"  {name:<12} red {len(by_statistic[name]):>3}   honest {len(honest_by_statistic[name]):>3}")
        if red_z:
            shown = ", ".join(f"{name} {value:.2f}" for name, value in red_z.items())
            print(f"  red-team AUC z against Kaggle's best (Hanley-McNeil): {shown}")
        print("honest corpus, closest to each limit")
        for name, (value, case_name) in sorted(closest.items()):
            print(f"  {name:<24} {value:>9.4f}  (limit {limits.get(name, '?')})  {case_name}")


if __name__ == "__main__":
    main()
