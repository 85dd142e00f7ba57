"""Server of the realworld_timing test environment."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openenv.core.env_server.http_server import create_app  # noqa: E402

from models import TimingAction, TimingObservation  # noqa: E402
from server.realworld_timing_environment import TimingEnvironment  # noqa: E402

app = create_app(
    TimingEnvironment, TimingAction, TimingObservation, env_name="realworld_timing",
    max_concurrent_envs=4)
