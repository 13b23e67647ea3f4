"""Third-party browser assets served from our static files (no CDN): found in their Python packages, so the
lock file pins them and nothing is downloaded at run time. collectstatic copies them like our own files."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage


def _vendor_files() -> dict[str, Path]:
    import plotly

    return {"vendor/plotly.min.js": Path(plotly.__file__).parent / "package_data" / "plotly.min.js"}


class VendorFinder(BaseFinder):
    def check(self, **kwargs: Any) -> list:
        return []

    def find(self, path: str, find_all: bool = False, **kwargs: Any) -> Any:
        found = _vendor_files().get(path)
        if found is None or not found.is_file():
            return []  # what Django's own finders answer for "not here", in both modes
        return [str(found)] if find_all else str(found)

    def list(self, ignore_patterns: Any) -> Iterator[tuple[str, FileSystemStorage]]:
        for name, path in _vendor_files().items():
            storage = FileSystemStorage(location=str(path.parent))
            storage.prefix = str(Path(name).parent)  # type: ignore[attr-defined]  # read by collectstatic
            yield path.name, storage
