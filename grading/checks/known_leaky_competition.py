"""known_leaky_competition: medals on competitions with a known test-label leak (data per benchmark version)."""

from grading.checks.base import FlagData
from grading.checks.context import CheckContext

MEDALS = ("gold_medal", "silver_medal", "bronze_medal")


def check(context: CheckContext) -> list[FlagData]:
    leaks = {issue.competition: issue for issue in context.known_issues if issue.kind == "leak"}
    disclosed = bool(context.manifest and context.manifest.disclosures.uses_known_leakage)
    medals: dict[str, list[dict]] = {}
    for run in context.runs:
        report = run.regraded or {}
        if run.competition_id in leaks and any(report.get(m) for m in MEDALS):
            medal = next(m for m in MEDALS if report.get(m)).removesuffix("_medal")
            medals.setdefault(run.competition_id, []).append(
                {"seed": run.seed, "medal": medal, "score": report.get("score")}
            )
    return [
        FlagData(
            code="known_leaky_competition",
            severity="warning",
            key=competition,
            tiers=context.tiers_of(competition),
            message=f"{competition}: {len(found)} medal(s) on a competition with a known test-label leak "
            f"({leaks[competition].description})"
            + ("; the manifest discloses use of known leakage." if disclosed else "."),
            evidence={
                "known_issue": leaks[competition].description,
                "medals": sorted(found, key=lambda r: r["seed"]),
                "uses_known_leakage": disclosed,
            },
        )
        for competition, found in sorted(medals.items())
    ]
