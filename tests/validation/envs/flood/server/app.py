"""Server of the flood test environment."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openenv.core.env_server.http_server import create_app  # noqa: E402

from models import FloodAction, FloodObservation  # noqa: E402
from server.flood_environment import FloodEnvironment  # noqa: E402

app = create_app(
    FloodEnvironment, FloodAction, FloodObservation, env_name="flood", max_concurrent_envs=4
)
