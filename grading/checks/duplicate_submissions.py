"""duplicate_submissions: identical submission files across seeds of one entry or across teams, and
near-identical code across teams (difflib's ratio, Python's standard library)."""

from __future__ import annotations

import difflib
import re

from grading.checks.base import FlagData
from grading.checks.context import CheckContext, RunFiles
from grading.checks.fingerprint import HOW_WORDS, NUMBER_DIGITS

CODE_SUFFIXES = (".py", ".ipynb", ".sh", ".r", ".jl")
_COMMENT = re.compile(r"#[^\n]*|\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''")
_SPACE = re.compile(r"[ \t]+")


def run_key(run: RunFiles) -> str:
    return f"{run.competition_id}/seed-{run.seed}"


def normalised_code(run: RunFiles, *, limit: int) -> str:
    """The run's code files, comments and blank lines dropped, at most ``limit`` characters."""
    parts, size = [], 0
    for path in run.code_files():
        if path.suffix.lower() not in CODE_SUFFIXES:
            continue
        with path.open("rb") as f:
            text = f.read(limit - size).decode("utf-8", errors="replace")
        text = _COMMENT.sub("", text)
        lines = [_SPACE.sub(" ", line).strip() for line in text.splitlines()]
        parts.append("\n".join(line for line in lines if line))
        size += len(parts[-1])
        if size >= limit:
            break
    return "\n".join(parts)[:limit]


def submission_hashes(context: CheckContext) -> dict[str, str]:
    """run key -> sha256 of its submission file (computed once per context)."""
    return context.submission_hashes()


def codes(context: CheckContext) -> dict[str, str]:
    """run key -> its normalised code (computed once per context)."""
    if "codes" not in context.cache:
        limit = context.settings.code_compare_chars
        context.cache["codes"] = {run_key(run): normalised_code(run, limit=limit) for run in context.runs}
    return context.cache["codes"]


def entry_index(context: CheckContext) -> dict:
    """What later checks of other teams compare against (stored beside the bundle by the checking step)."""
    return {
        "submission_hashes": {digest: key for key, digest in sorted(submission_hashes(context).items())},
        "code": {key: code for key, code in codes(context).items() if code},
    }


def check(context: CheckContext) -> list[FlagData]:
    hashes = submission_hashes(context)
    by_run = {run_key(run): run for run in context.runs}
    flags = seed_copy_flags(context, by_run)
    for other in context.other_entries:
        same = sorted(
            (key, other.submission_hashes[digest])
            for key, digest in hashes.items()
            if digest in other.submission_hashes
        )
        if same:
            competitions = sorted({key.split("/")[0] for key, _ in same})
            flags.append(
                FlagData(
                    code="duplicate_submissions",
                    severity="blocking",
                    key=f"team/{other.submission_id}",
                    tiers=context.tiers_of_all(competitions),
                    message=f"{len(same)} submission file(s) are identical to those of submission "
                    f"{other.submission_id} "
                    f"of team {other.team}, e.g. {same[0][0]}.",
                    evidence={
                        "other_submission": other.submission_id,
                        "other_team": other.team,
                        "total": len(same),
                        "files": [
                            {"file": f"{by_run[k].run_path}/submission/submission.csv", "sha256": hashes[k], "other": o}
                            for k, o in same[:10]
                        ],
                    },
                )
            )
    flags += _similar_code(context, by_run)
    return flags


def seed_copy_flags(context: CheckContext, by_run: dict[str, RunFiles]) -> list[FlagData]:
    """One warning per group of seeds of a competition whose files are one file once normalised: the
    group counts as one seed (insufficient_seeds, padded_seeds, the aggregation)."""
    hashes, keys, copies = submission_hashes(context), context.copy_keys(), context.seed_copies()
    groups: dict[tuple[str, str], list[str]] = {}
    for key in sorted(keys, key=lambda k: by_run[k].seed):
        groups.setdefault((by_run[key].competition_id, keys[key]), []).append(key)
    flags = []
    for (competition, digest), members in sorted(groups.items()):
        if len(members) < 2:
            continue
        files: list[dict] = []
        for key in members:
            run = by_run[key]
            item: dict = {"file": f"{run.run_path}/submission/submission.csv", "sha256": hashes[key]}
            copy = copies.get(key)
            if copy is not None:
                item.update(seed=run.seed, copy_of_seed=copy.of, how=copy.how)
                if copy.rows is not None:
                    item.update(rows_equal=copy.rows_equal, rows=copy.rows)
            else:
                item["seed"] = run.seed
            files.append(item)
        hows = {copies[k].how for k in members if k in copies}
        if hows == {"identical"}:
            message = (
                f"{competition}: {len(members)} seeds submitted the same file (sha256 {digest[:12]}…), "
                "so they are not independent runs."
            )
        else:
            first = by_run[members[0]].seed
            described = "; ".join(
                f"seed {copies[k].seed} is {HOW_WORDS[copies[k].how]}"
                + (f" ({copies[k].rows_equal} of {copies[k].rows} rows equal)" if copies[k].rows else "")
                for k in members[1:]
            )
            message = (
                f"{competition}: seeds {', '.join(str(by_run[k].seed) for k in members)} submitted one file up to "
                f"cosmetic edits ({described} to seed {first}'s, compared parsed, sorted by id, numbers to "
                f"{NUMBER_DIGITS} significant digits, text stripped), so they count as one seed."
            )
        flags.append(
            FlagData(
                code="duplicate_submissions",
                severity="warning",
                key=f"{competition}/{digest[:12]}",
                tiers=context.tiers_of(competition),
                message=message,
                evidence={"files": files},
            )
        )
    return flags


def _similar_code(context: CheckContext, by_run: dict[str, RunFiles]) -> list[FlagData]:
    if not context.other_entries:
        return []
    threshold = context.settings.code_similarity
    ours = codes(context)
    flags = []
    for other in context.other_entries:
        pairs: list[dict[str, str | float]] = []
        for key, code in sorted(ours.items()):
            if not code:
                continue
            competition = key.split("/")[0]
            for other_key, other_code in other.code.items():
                if other_key.split("/")[0] != competition or not other_code:
                    continue
                matcher = difflib.SequenceMatcher(None, code, other_code, autojunk=False)
                if matcher.real_quick_ratio() < threshold or matcher.quick_ratio() < threshold:
                    continue
                ratio = matcher.ratio()
                if ratio >= threshold:
                    pairs.append(
                        {"run": by_run[key].run_path + "/code", "other": other_key, "similarity": round(ratio, 3)}
                    )
                    break
        if pairs:
            competitions = sorted({str(p["other"]).split("/")[0] for p in pairs})
            flags.append(
                FlagData(
                    code="duplicate_submissions",
                    severity="warning",
                    key=f"code/{other.submission_id}",
                    tiers=context.tiers_of_all(competitions),
                    message=f"The code of {len(pairs)} run(s) is near-identical (difflib ratio ≥ {threshold}) "
                    "to that of "
                    f"submission {other.submission_id} of team {other.team}, e.g. {pairs[0]['run']}.",
                    evidence={
                        "other_submission": other.submission_id,
                        "other_team": other.team,
                        "threshold": threshold,
                        "total": len(pairs),
                        "pairs": pairs[:10],
                    },
                )
            )
    return flags
