"""Server of the realworld_corridor test environment."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openenv.core.env_server.http_server import create_app  # noqa: E402

from models import CorridorAction, CorridorObservation  # noqa: E402
from server.realworld_corridor_environment import CorridorEnvironment  # noqa: E402

app = create_app(
    CorridorEnvironment, CorridorAction, CorridorObservation, env_name="realworld_corridor",
    max_concurrent_envs=1)
