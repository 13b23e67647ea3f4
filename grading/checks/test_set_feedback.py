"""test_set_feedback: answer-derived information reached the agent or its harness during the run.

Declared in the manifest, or seen in logs or code: scores, ranks, medals or per-row correctness coming back
from anything but the format check; reads of private or answer paths; calls of grading functions or
endpoints; a harness whose fitness, selection or stopping rule uses the test score or medal status; and
feedback from any grader, endpoint or file: the submission sent to a scoring endpoint, a score, rank or medal
answered back, a feedback file read, the submission changed to climb, a remote evaluation loop. The scan reads
every file of the runs, unwrapped (grading/checks/scan/unwrap.py). Every finding is blocking.
"""

from grading.checks.base import FlagData
from grading.checks.context import CheckContext

FINDINGS = {
    "grader_fields": "grader report fields (medals, thresholds) in the run's logs or code",
    "test_score": "a private/leaderboard score, rank or medal reported during the run",
    "validate_score": "the format check answered with more than valid/error",
    "row_correctness": "per-row correctness of the test predictions reported during the run",
    "grading_calls": "calls of MLE-bench grading functions or a local /grade endpoint",
    "harness_feedback": "the harness's fitness, selection or stopping rule uses the grader or medal status",
    "select_by_test": "a solution selected or the search stopped by test score or medal",
    "private_paths": "reads of the private data folder or an answers file",
    "scoring_endpoint": "the submission sent to a scoring, grading or leaderboard endpoint during the run",
    "score_response": "a test-set score, leaderboard rank or medal answered back during the run",
    "tuned_to_test": "the submission changed to improve a test-set score, rank or medal",
    "feedback_file": "a leaderboard, grading report or test-score file read during the run",
    "remote_eval": "a remote evaluation loop: submissions posted to an evaluation service and its score read back",
}


def scan_flags(
    context: CheckContext, *, code: str, findings: dict[str, str], severity: str = "blocking"
) -> list[FlagData]:
    flags = []
    scan = context.scan
    for name, what in findings.items():
        found = scan.get(name)
        if not found.total:
            continue
        competitions = sorted({label.split("/")[2].rsplit("_", 1)[0] for label in found.files if label.count("/") >= 2})
        first = found.hits[0]
        flags.append(
            FlagData(
                code=code,
                severity=severity,
                key=name,
                tiers=context.tiers_of_all(competitions),
                message=f"{what}: {found.total} line(s) in {len(found.files)} file(s), "
                f"first {first.file} line {first.line}.",
                evidence={
                    **found.as_evidence(),
                    "competitions": competitions[:20],
                    "competitions_total": len(competitions),
                },
            )
        )
    return flags


def check(context: CheckContext) -> list[FlagData]:
    flags = []
    if context.manifest and context.manifest.disclosures.test_set_feedback:
        flags.append(
            FlagData(
                code="test_set_feedback",
                severity="blocking",
                key="declared",
                message="The manifest declares that test-set feedback reached the agent "
                "(disclosures.test_set_feedback).",
                evidence={"file": "manifest.json", "disclosures.test_set_feedback": True},
            )
        )
    return flags + scan_flags(context, code="test_set_feedback", findings=FINDINGS)
