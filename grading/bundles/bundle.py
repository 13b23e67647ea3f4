"""A whole bundle, from archive to seeded runs: what an upload service calls."""

from __future__ import annotations

import shutil
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from grading.bundles.archive import ExtractedArchive, extract_archive
from grading.bundles.claims import Claims, read_claims
from grading.bundles.layout import BundleLayout, discover_layout
from grading.bundles.limits import DEFAULT_LIMITS, Limits
from grading.bundles.manifest import Manifest, load_manifest
from grading.bundles.seeds import SeededRun, assign_seeds


@dataclass(frozen=True, kw_only=True)
class Bundle:
    archive: ExtractedArchive
    manifest: Manifest
    layout: BundleLayout
    seeds: tuple[SeededRun, ...]
    claims: Claims

    @property
    def report_only(self) -> bool:
        return self.layout.report_only


def read_bundle(
    *, archive: Path, target: Path, known_competition_ids: Collection[str], limits: Limits = DEFAULT_LIMITS
) -> Bundle:
    """Extract ``archive`` into ``target`` and validate it: manifest, layout, seeds; read the team's claims.

    On a BundleError (or anything else) ``target`` is removed again, so a refused bundle leaves nothing.
    """
    extracted = extract_archive(archive=archive, target=target, limits=limits)
    try:
        layout = discover_layout(root=extracted.root, known_competition_ids=known_competition_ids)
        manifest = load_manifest(path=layout.manifest)
        seeds = assign_seeds(runs=layout.runs, manifest_seeds=manifest.run_seeds)
        claims = read_claims(layout=layout)
    except BaseException:
        shutil.rmtree(extracted.root, ignore_errors=True)
        raise
    return Bundle(archive=extracted, manifest=manifest, layout=layout, seeds=seeds, claims=claims)
