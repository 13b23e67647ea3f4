"""rule_violation: hand-written answers, undeclared external model APIs, forbidden resources (logs, code)."""

from grading.checks.base import FlagData
from grading.checks.context import CheckContext
from grading.checks.patterns import PROVIDERS
from grading.checks.test_set_feedback import scan_flags

FINDINGS = {
    "hand_written": "hand-written predictions or labels",
    "forbidden_resources": "Kaggle's API, data or leaderboard reached during the run",
}


def declared_providers(context: CheckContext) -> set[str]:
    manifest = context.manifest
    if manifest is None:
        return set()
    names = " ".join([*manifest.llms, *manifest.disclosures.other_models]).lower()
    return {provider for provider, spec in PROVIDERS.items() if any(word in names for word in spec["declared_by"])}


def check(context: CheckContext) -> list[FlagData]:
    declared = declared_providers(context)
    undeclared = {f"model_api_{name}": f"calls of {name}'s model API, which the manifest does not declare "
                                       "(llms, disclosures.other_models)"
                  for name in PROVIDERS if name not in declared}
    return scan_flags(context, code="rule_violation", findings={**FINDINGS, **undeclared})
