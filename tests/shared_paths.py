"""Where ../shared lives, and the rule for tests that read it.

Importable from any test (``tests/`` is on pytest's ``pythonpath``): ``from shared_paths import
require_shared``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = PROJECT_ROOT.parent / "shared"


def require_shared(relative: str) -> Path:
    """Path under ../shared; skips on a user's clone, fails in CI when it is missing."""
    path = SHARED_DIR / relative
    if not path.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{path} is missing but CI=true: ../shared must sit beside the project")
        pytest.skip(f"{path} not found (../shared is only beside the project in CI)")
    return path
