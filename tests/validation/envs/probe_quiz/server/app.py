"""Server of the probe_quiz test environment."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openenv.core.env_server.http_server import create_app  # noqa: E402

from models import QuizAction, QuizObservation  # noqa: E402
from server.probe_quiz_environment import QuizEnvironment  # noqa: E402

app = create_app(
    QuizEnvironment, QuizAction, QuizObservation, env_name="probe_quiz", max_concurrent_envs=4
)
