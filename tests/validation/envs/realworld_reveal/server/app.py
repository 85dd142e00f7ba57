"""Server of the realworld_reveal test environment."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openenv.core.env_server.http_server import create_app  # noqa: E402

from models import RevealAction, RevealObservation  # noqa: E402
from server.realworld_reveal_environment import RevealEnvironment  # noqa: E402

app = create_app(
    RevealEnvironment, RevealAction, RevealObservation, env_name="realworld_reveal",
    max_concurrent_envs=1)
