"""rule_violation: hand-written answers, undeclared external model APIs, forbidden resources (logs, code).

A provider is declared when one of its words (``declared_by``) is a whole token of a model name in the
manifest's llms or disclosures.other_models, case-insensitively: not inside a longer word ("yolo11n" does
not declare OpenAI by its "o1"). A word that ends in a letter may run on into digits ("gpt4o", "claude3").
"""

import re

from grading.checks.base import FlagData
from grading.checks.context import CheckContext
from grading.checks.patterns import PROVIDERS
from grading.checks.test_set_feedback import scan_flags

FINDINGS = {
    "hand_written": "hand-written predictions or labels",
    "forbidden_resources": "Kaggle's API, data or leaderboard reached during the run",
}


def _word(word: str) -> re.Pattern[str]:
    after = r"(?![a-z0-9])" if word[-1:].isdigit() else r"(?![a-z])"
    return re.compile(rf"(?<![a-z0-9]){re.escape(word)}{after}")


DECLARED_BY = {provider: [_word(word) for word in spec["declared_by"]] for provider, spec in PROVIDERS.items()}


def declared_providers(context: CheckContext) -> set[str]:
    manifest = context.manifest
    if manifest is None:
        return set()
    names = " ".join([*manifest.llms, *manifest.disclosures.other_models]).lower()
    return {provider for provider, words in DECLARED_BY.items() if any(word.search(names) for word in words)}


def check(context: CheckContext) -> list[FlagData]:
    declared = declared_providers(context)
    undeclared = {
        f"model_api_{name}": f"calls of {name}'s model API, which the manifest does not declare "
        "(llms, disclosures.other_models)"
        for name in PROVIDERS
        if name not in declared
    }
    return scan_flags(context, code="rule_violation", findings={**FINDINGS, **undeclared})
