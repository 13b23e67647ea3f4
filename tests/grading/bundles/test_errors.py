"""BundleError: documented codes, the API's error shape, and surviving a Celery task's pickling."""

import pickle
import re
from pathlib import Path

from grading.bundles import CODES, BundleError

PACKAGE = Path(__file__).resolve().parents[3] / "grading" / "bundles"


def test_every_code_raised_is_documented():
    raised = set()
    for module in PACKAGE.glob("*.py"):
        raised |= set(re.findall(r'BundleError\(\s*"([a-z_]+)"', module.read_text()))
    assert raised == set(CODES), raised ^ set(CODES)


def test_it_has_the_api_error_shape_and_survives_pickling():
    error = BundleError("unsafe_path", "unsafe member name '../x': it contains '..'", {"member": "../x"})
    assert error.as_dict() == {
        "error": {
            "code": "unsafe_path",
            "message": "unsafe member name '../x': it contains '..'",
            "details": {"member": "../x"},
        }
    }
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.code, copy.message, copy.details, str(copy)) == (
        error.code,
        error.message,
        error.details,
        error.message,
    )
