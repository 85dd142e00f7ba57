"""Server of the seed_duel test environment."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openenv.core.env_server.http_server import create_app  # noqa: E402

from models import DuelAction, DuelObservation  # noqa: E402
from server.seed_duel_environment import DuelEnvironment  # noqa: E402

app = create_app(
    DuelEnvironment, DuelAction, DuelObservation, env_name="seed_duel", max_concurrent_envs=4
)
