"""How many examples a hypothesis test runs under the loaded profile.

tests/conftest.py registers two profiles: ``ci`` (the default, for every run of the
suite) and ``nightly`` (``HYPOTHESIS_PROFILE=nightly``, ten times the examples). A test
states its budget for ``ci``; :func:`examples` scales it for the profile in use, so the
fast suite stays fast and a nightly run searches further.
"""

from __future__ import annotations

import os

SCALE = {"ci": 1, "nightly": 10}


def examples(ci: int) -> int:
    """The example count for a test whose ``ci`` budget is ``ci``."""
    return ci * SCALE[os.environ.get("HYPOTHESIS_PROFILE", "ci")]
