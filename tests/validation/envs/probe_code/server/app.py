"""Server of the probe_code test environment."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openenv.core.env_server.http_server import create_app  # noqa: E402

from models import CodeAction, CodeObservation  # noqa: E402
from server.probe_code_environment import CodeEnvironment  # noqa: E402

app = create_app(
    CodeEnvironment, CodeAction, CodeObservation, env_name="probe_code", max_concurrent_envs=4
)
