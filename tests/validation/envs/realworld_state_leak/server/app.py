"""Server of the realworld_state_leak test environment."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openenv.core.env_server.http_server import create_app  # noqa: E402

from models import StateLeakAction, StateLeakObservation  # noqa: E402
from server.realworld_state_leak_environment import StateLeakEnvironment  # noqa: E402

app = create_app(
    StateLeakEnvironment, StateLeakAction, StateLeakObservation, env_name="realworld_state_leak",
    max_concurrent_envs=1)
