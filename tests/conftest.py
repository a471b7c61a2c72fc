"""Shared test setup: helper modules on sys.path, hypothesis profiles.

Profiles (select with HYPOTHESIS_PROFILE): "default" (fast, local runs), "ci" (200
examples, no deadline — used for the slow property tests in CI), "nightly" (2000).
"default" and "ci" are derandomized: a CI verdict depends on the commit, never on the draw.
"nightly" draws fresh programs each run to explore further.
"""

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))
# the repository root: the tests read the benchmark corpus (``benchmarks``, not an installed package)
sys.path.insert(1, str(Path(__file__).parent.parent))

settings.register_profile("default", max_examples=30, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", max_examples=200, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
# (a profile inherits the loaded one's settings: "nightly" says derandomize=False itself)
settings.register_profile("nightly", max_examples=2000, deadline=None, derandomize=False,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
