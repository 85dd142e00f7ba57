"""Server of the realworld_constant test environment."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openenv.core.env_server.http_server import create_app  # noqa: E402

from models import ConstantAction, ConstantObservation  # noqa: E402
from server.realworld_constant_environment import ConstantEnvironment  # noqa: E402

app = create_app(
    ConstantEnvironment, ConstantAction, ConstantObservation, env_name="realworld_constant",
    max_concurrent_envs=1)
