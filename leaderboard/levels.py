"""Evidence levels (SPEC §9, issue 31): how strong the evidence behind an entry's numbers is, from the facts the
portal holds. Plain functions over plain data: no Django, so that tests call them without a database.

From the strongest down:

- verified: every run was hosted by the portal (its own workers ran the agent);
- audited: pre-registered, complete logs, and a passed random audit re-run (runners/services/audits.py);
- registered: pre-registered (the manifest names the team's registration) with complete logs (every run has a
  log, and every log holds the registration's nonce);
- reported: everything else, entries imported from MLE-bench's table included.
"""

from dataclasses import dataclass

VERIFIED, AUDITED, REGISTERED, REPORTED = "verified", "audited", "registered", "reported"
# Weakest first: a minimum level keeps itself and every level after it.
LEVELS = (REPORTED, REGISTERED, AUDITED, VERIFIED)
LEVEL_LABELS = {REPORTED: "reported", REGISTERED: "registered", AUDITED: "audited", VERIFIED: "verified"}
# What each level means, strongest first, as the Markdown export's legend and the README give it.
LEGEND = (
    (VERIFIED, "every run was hosted by the portal"),
    (AUDITED, "pre-registered, complete logs, and a passed random audit re-run on the portal's workers"),
    (REGISTERED, "pre-registered before running, with complete logs holding the registration's nonce"),
    (REPORTED, "everything else, entries imported from MLE-bench's table included"),
)


@dataclass(frozen=True, kw_only=True)
class LevelFacts:
    """What an entry's level depends on."""

    hosted: bool  # every run was hosted by the portal
    imported: bool = False  # brought in from an existing board's table: nothing was run or registered here
    registered: bool = False  # the manifest names a registration of the team
    has_logs: bool = True  # every run has a log (no `unscanned_evidence` `no_logs` flag)
    has_nonce: bool = True  # every registered run's log holds the nonce (no `registration` `no_nonce` flag)
    audit_passed: bool = False  # its random audit re-run passed


def evidence_level(facts: LevelFacts) -> str:
    """The entry's one level: the strongest whose conditions all hold."""
    if facts.hosted and not facts.imported:
        return VERIFIED
    if facts.imported or not facts.registered:
        return REPORTED
    if not (facts.has_logs and facts.has_nonce):
        return REPORTED
    return AUDITED if facts.audit_passed else REGISTERED


def levels_at_least(level: str) -> tuple[str, ...]:
    """The levels at `level` or stronger."""
    return LEVELS[LEVELS.index(level) :]


def next_level_steps(facts: LevelFacts) -> list[str]:
    """One sentence per missing step to the next level up; empty at the strongest."""
    level = evidence_level(facts)
    if level == VERIFIED:
        return []
    if level == AUDITED:
        return ["Run the agent on the portal's hosted workers, every run of it, to reach verified."]
    if level == REGISTERED:
        return [
            "Name a runnable agent image (agent.image in the manifest) so that a random audit re-runs some "
            "competitions on hosted workers, and pass it, to reach audited."
        ]
    if facts.imported:
        return [
            "This entry was imported from MLE-bench's table: upload the agent's own runs, registered before "
            "running (mleportal register), to reach registered."
        ]
    steps = []
    if not facts.registered:
        steps.append(
            "Register the run group before running (mleportal register) and name the registration in the "
            "bundle's manifest to reach registered."
        )
    if not facts.has_logs:
        steps.append("Include every run's log (run.log or logs/) in the bundle to reach registered.")
    if not facts.has_nonce:
        steps.append(
            "Write the registration's nonce into each run's log before its submission is written to reach registered."
        )
    return steps
