"""Server of the realworld_http_fresh test environment."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openenv.core.env_server.http_server import create_app  # noqa: E402

from models import HttpFreshAction, HttpFreshObservation  # noqa: E402
from server.realworld_http_fresh_environment import HttpFreshEnvironment  # noqa: E402

app = create_app(
    HttpFreshEnvironment, HttpFreshAction, HttpFreshObservation, env_name="realworld_http_fresh",
    max_concurrent_envs=1)
