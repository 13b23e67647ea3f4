"""Run bundles (SPEC section 2): safe extraction, manifest, layout and the seed rule.

Framework-free like ``grading.engine``: nothing here imports Django, so the upload service, the
command-line checks and the tests all call the same plain functions. Every refusal is a BundleError whose
message names what is wrong and where.
"""

from grading.bundles.archive import ExtractedArchive, extract_archive
from grading.bundles.bundle import Bundle, read_bundle
from grading.bundles.errors import CODES, BundleError
from grading.bundles.layout import BundleLayout, BundleRun, RunGroup, discover_layout
from grading.bundles.limits import Limits
from grading.bundles.manifest import SPLITS, Manifest, load_manifest, parse_manifest
from grading.bundles.seeds import RULE_TEXT, SeededRun, assign_seeds

__all__ = [
    "CODES",
    "RULE_TEXT",
    "SPLITS",
    "Bundle",
    "BundleError",
    "BundleLayout",
    "ExtractedArchive",
    "Limits",
    "Manifest",
    "BundleRun",
    "RunGroup",
    "SeededRun",
    "assign_seeds",
    "discover_layout",
    "extract_archive",
    "load_manifest",
    "parse_manifest",
    "read_bundle",
]
