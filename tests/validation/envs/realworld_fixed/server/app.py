"""Server of the realworld_fixed test environment."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openenv.core.env_server.http_server import create_app  # noqa: E402

from models import FixedAction, FixedObservation  # noqa: E402
from server.realworld_fixed_environment import FixedEnvironment  # noqa: E402

app = create_app(
    FixedEnvironment, FixedAction, FixedObservation, env_name="realworld_fixed",
    max_concurrent_envs=1)
