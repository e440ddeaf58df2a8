import os

from hypothesis import HealthCheck, settings

# Locally, every run explores new examples; under CI (CI=true) the draws are derandomized so that
# a red CI is reproducible. CERTDP_EXAMPLES raises the number of examples for deeper local runs.
settings.register_profile(
    "default",
    max_examples=int(os.environ.get("CERTDP_EXAMPLES", "25")),
    deadline=None,
    derandomize=bool(os.environ.get("CI")),
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("default")
