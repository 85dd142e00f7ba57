"""Server of the realworld_unseeded test environment."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openenv.core.env_server.http_server import create_app  # noqa: E402

from models import UnseededAction, UnseededObservation  # noqa: E402
from server.realworld_unseeded_environment import UnseededEnvironment  # noqa: E402

app = create_app(
    UnseededEnvironment, UnseededAction, UnseededObservation, env_name="realworld_unseeded",
    max_concurrent_envs=1)
