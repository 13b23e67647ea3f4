"""duplicate_submissions: seeds of one entry that are copies of each other (submissions once normalised, logs,
code), and an entry's files that copy an earlier entry of another team.

Across seeds (warnings; a copied submission also counts as one seed, CheckContext.copy_keys):
``<competition>/<sha256>`` names seeds whose submissions are one file up to cosmetic edits;
``logs/<competition>`` and ``code/<competition>`` seeds whose logs or code are the same once whitespace and
comments are dropped.

Across teams, against every earlier entry of another team the index holds (published or not):
``other_team`` (blocking): a submission file the same as one of theirs once normalised (a constant file, such
as a sample submission, or one that does not parse, is no one's own work and is not compared);
``other_team_code`` (warning): the code of a
competition shares at least ``code_similarity`` of its winnowed fingerprints (grading/checks/winnow.py) with
theirs for the same competition; ``other_team_logs`` (warning): a log file the same as theirs once whitespace
is dropped. Code and logs alone never block: teams share open-source scaffolds, and only a result that is
someone else's is cause to hold an entry. The public message and evidence name only this entry's files;
which entry and team they match is maintainer-only (FlagData.private).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from grading.checks import winnow
from grading.checks.base import FlagData
from grading.checks.context import CheckContext, RunFiles
from grading.checks.fingerprint import HOW_WORDS, NUMBER_DIGITS

CODE_SUFFIXES = (".py", ".ipynb", ".sh", ".r", ".jl")
LOG_MIN_CHARS = 200  # shorter logs ("done") are alike by nature
SHOWN = 10  # items of each list shown in a flag's evidence; the total is always counted
_COMMENT = re.compile(r"#[^\n]*|\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''")
_SPACE = re.compile(r"[ \t]+")


def run_key(run: RunFiles) -> str:
    return f"{run.competition_id}/seed-{run.seed}"


def _code_texts(run: RunFiles, *, limit: int) -> list[str]:
    """The run's code files, each at most ``limit`` characters and all together at most ``limit``."""
    texts, size = [], 0
    for path in run.code_files():
        if path.suffix.lower() not in CODE_SUFFIXES or size >= limit:
            continue
        with path.open("rb") as f:
            texts.append(f.read(limit - size).decode("utf-8", errors="replace"))
        size += len(texts[-1])
    return texts


def normalised_code(run: RunFiles, *, limit: int) -> str:
    """The run's code files, comments and blank lines dropped, at most ``limit`` characters."""
    parts = []
    for text in _code_texts(run, limit=limit):
        text = _COMMENT.sub("", text)
        lines = [_SPACE.sub(" ", line).strip() for line in text.splitlines()]
        parts.append("\n".join(line for line in lines if line))
    return "\n".join(parts)[:limit]


def log_hash(path: Path) -> str | None:
    """SHA-256 of a log file with every line stripped and blank lines dropped; None for a short log."""
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as f:
        for raw in f:
            line = raw.strip()
            if line:
                digest.update(line + b"\n")
                size += len(line)
    return digest.hexdigest() if size >= LOG_MIN_CHARS else None


def submission_hashes(context: CheckContext) -> dict[str, str]:
    """run key -> sha256 of its submission file (computed once per context)."""
    return context.submission_hashes()


def codes(context: CheckContext) -> dict[str, str]:
    """run key -> its normalised code (computed once per context)."""
    if "codes" not in context.cache:
        limit = context.settings.code_compare_chars
        context.cache["codes"] = {run_key(run): normalised_code(run, limit=limit) for run in context.runs}
    return context.cache["codes"]


def code_prints(context: CheckContext) -> dict[str, frozenset[int]]:
    """competition -> the winnowed fingerprints of its runs' code, all seeds together (computed once)."""
    if "code_prints" not in context.cache:
        limit = context.settings.code_compare_chars
        found: dict[str, set[int]] = {}
        for run in context.runs:
            found.setdefault(run.competition_id, set()).update(winnow.fingerprints_of(_code_texts(run, limit=limit)))
        context.cache["code_prints"] = {cid: frozenset(prints) for cid, prints in found.items() if prints}
    return context.cache["code_prints"]


def log_hashes(context: CheckContext) -> dict[str, dict[str, str]]:
    """run key -> {log hash: the log's path in the bundle} (computed once; short logs left out)."""
    if "log_hashes" not in context.cache:
        found: dict[str, dict[str, str]] = {}
        for run in context.runs:
            for path in run.log_files():
                digest = log_hash(path)
                if digest is not None and run.folder is not None:
                    label = f"{run.run_path}/{path.relative_to(run.folder).as_posix()}"
                    found.setdefault(run.key, {}).setdefault(digest, label)
        context.cache["log_hashes"] = found
    return context.cache["log_hashes"]


def submission_prints(context: CheckContext) -> dict[str, str]:
    """run key -> what other teams' entries are compared by: the normalised fingerprint of its submission.
    A file that does not parse as CSV, or predicts one value everywhere, is left out: it earns no score of
    its own, and two teams may well submit the same empty or sample file."""
    return dict(context.content_fingerprints())


def entry_index(context: CheckContext) -> dict:
    """What later checks of other teams compare against (stored in the index by the checking step)."""
    return {
        "submissions": {digest: key for key, digest in sorted(submission_prints(context).items())},
        "code": {cid: sorted(prints) for cid, prints in sorted(code_prints(context).items())},
        "logs": {digest: key for key, found in sorted(log_hashes(context).items()) for digest in found},
    }


def check(context: CheckContext) -> list[FlagData]:
    by_run = {run_key(run): run for run in context.runs}
    flags = seed_copy_flags(context, by_run)
    flags += _seed_evidence_copies(context, by_run)
    flags += _other_team_submissions(context, by_run)
    flags += _other_team_code(context)
    flags += _other_team_logs(context)
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


def _seed_evidence_copies(context: CheckContext, by_run: dict[str, RunFiles]) -> list[FlagData]:
    """Seeds of a competition whose logs, or whose code, are the same (warnings)."""
    logs = {key: "\n".join(sorted(found)) for key, found in log_hashes(context).items()}
    flags = []
    for kind, texts in (("logs", logs), ("code", codes(context))):
        groups: dict[tuple[str, str], list[str]] = {}
        for key, text in texts.items():
            if text:
                groups.setdefault((by_run[key].competition_id, text), []).append(key)
        for competition in sorted({cid for cid, _ in groups}):
            same = [
                sorted(keys, key=lambda k: by_run[k].seed)
                for (cid, _), keys in groups.items()
                if cid == competition and len(keys) > 1
            ]
            if not same:
                continue
            seeds = [[by_run[k].seed for k in keys] for keys in same]
            words = "; ".join(", ".join(map(str, group)) for group in seeds)
            flags.append(
                FlagData(
                    code="duplicate_submissions",
                    severity="warning",
                    key=f"{kind}/{competition}",
                    tiers=context.tiers_of(competition),
                    message=f"{competition}: seeds {words} have the same {kind} (once "
                    f"{'whitespace is' if kind == 'logs' else 'comments and whitespace are'} dropped), "
                    "so they may not be independent runs.",
                    evidence={"seeds": seeds, "runs": [[by_run[k].run_path for k in keys] for keys in same]},
                )
            )
    return flags


def _other_team_submissions(context: CheckContext, by_run: dict[str, RunFiles]) -> list[FlagData]:
    ours = submission_prints(context)
    matches = []
    for other in context.other_entries:
        for key, digest in sorted(ours.items()):
            theirs = other.submissions.get(digest)
            if theirs is not None and theirs.split("/")[0] == by_run[key].competition_id:
                matches.append((key, digest, other, theirs))
    if not matches:
        return []
    keys = sorted({key for key, *_ in matches})
    competitions = sorted({by_run[key].competition_id for key in keys})
    entries = sorted({other.submission_id for _, _, other, _ in matches})
    return [
        FlagData(
            code="duplicate_submissions",
            severity="blocking",
            key="other_team",
            tiers=context.tiers_of_all(competitions),
            message=f"{len(keys)} submission file(s) match an earlier submission of another team once normalised "
            f"(parsed, sorted by id, numbers to {NUMBER_DIGITS} significant digits), e.g. {keys[0]}.",
            evidence={
                "total": len(keys),
                "files": [
                    {"file": f"{by_run[k].run_path}/submission/submission.csv", "fingerprint": ours[k]}
                    for k in keys[:SHOWN]
                ],
            },
            private={
                "other_entries": [_named(context, pk) for pk in entries],
                "matches": [
                    {"run": key, "other_submission": other.submission_id, "other_run": theirs}
                    for key, _, other, theirs in matches[:SHOWN]
                ],
                "total": len(matches),
            },
        )
    ]


def _named(context: CheckContext, submission_id: int) -> dict:
    team = next((o.team for o in context.other_entries if o.submission_id == submission_id), "")
    return {"submission": submission_id, "team": team}


def _other_team_code(context: CheckContext) -> list[FlagData]:
    threshold = context.settings.code_similarity
    ours = code_prints(context)
    pairs = []
    for other in context.other_entries:
        for competition, prints in sorted(ours.items()):
            theirs = other.code.get(competition)
            if not theirs:
                continue
            share = winnow.shared(set(prints), theirs)
            if share >= threshold:
                pairs.append((competition, round(share, 3), other))
    if not pairs:
        return []
    competitions = sorted({cid for cid, _, _ in pairs})
    best = {cid: max(share for c, share, _ in pairs if c == cid) for cid in competitions}
    return [
        FlagData(
            code="duplicate_submissions",
            severity="warning",
            key="other_team_code",
            tiers=context.tiers_of_all(competitions),
            message=f"The code of {len(competitions)} competition(s) shares at least {threshold:.0%} of its winnowed "
            f"fingerprints with an earlier submission of another team, e.g. {competitions[0]} "
            "(shared scaffolds do this too: not proof on its own).",
            evidence={
                "threshold": threshold,
                "total": len(competitions),
                "competitions": [{"competition": cid, "shared": best[cid]} for cid in competitions[:SHOWN]],
            },
            private={
                "other_entries": [_named(context, pk) for pk in sorted({o.submission_id for _, _, o in pairs})],
                "pairs": [
                    {"competition": cid, "shared": share, "other_submission": other.submission_id}
                    for cid, share, other in pairs[:SHOWN]
                ],
            },
        )
    ]


def _other_team_logs(context: CheckContext) -> list[FlagData]:
    ours = log_hashes(context)
    matches = []
    for other in context.other_entries:
        for key, found in sorted(ours.items()):
            for digest, label in sorted(found.items()):
                theirs = other.logs.get(digest)
                if theirs is not None:
                    matches.append((key, label, other, theirs))
    if not matches:
        return []
    labels = sorted({label for _, label, _, _ in matches})
    competitions = sorted({key.split("/")[0] for key, *_ in matches})
    return [
        FlagData(
            code="duplicate_submissions",
            severity="warning",
            key="other_team_logs",
            tiers=context.tiers_of_all(competitions),
            message=f"{len(labels)} log file(s) are the same as an earlier submission's of another team once "
            f"whitespace is dropped, e.g. {labels[0]}.",
            evidence={"total": len(labels), "files": labels[:SHOWN]},
            private={
                "other_entries": [_named(context, pk) for pk in sorted({o.submission_id for _, _, o, _ in matches})],
                "matches": [
                    {"file": label, "other_submission": other.submission_id, "other_run": theirs}
                    for _, label, other, theirs in matches[:SHOWN]
                ],
            },
        )
    ]
