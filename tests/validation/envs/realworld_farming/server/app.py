"""Server of the realworld_farming test environment."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openenv.core.env_server.http_server import create_app  # noqa: E402

from models import FarmingAction, FarmingObservation  # noqa: E402
from server.realworld_farming_environment import FarmingEnvironment  # noqa: E402

app = create_app(
    FarmingEnvironment, FarmingAction, FarmingObservation, env_name="realworld_farming",
    max_concurrent_envs=1)
