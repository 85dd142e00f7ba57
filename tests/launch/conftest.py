"""Small environment layouts for envkit.envdir.launch, written into a temp folder per test."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

MODELS = """
from openenv.core.env_server.types import Action, Observation


class PingAction(Action):
    message: str = ""


class PingObservation(Observation):
    echoed: str = ""
"""

ENVIRONMENT = """
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import State

from {models} import PingAction, PingObservation


class PingEnvironment(Environment):
    def __init__(self):
        super().__init__()
        self._state = State(episode_id="e", step_count=0)

    def reset(self, seed=None, episode_id=None, **kwargs):
        return PingObservation(done=False, reward=0.0)

    def step(self, action, timeout_s=None, **kwargs):
        return PingObservation(echoed=action.message, done=True, reward=1.0)

    @property
    def state(self):
        return self._state
"""

APP = """
from openenv.core.env_server.http_server import create_app

from {models} import PingAction, PingObservation
from {env_module} import PingEnvironment

app = create_app(PingEnvironment, PingAction, PingObservation, env_name="ping")


def main():
    import uvicorn

    uvicorn.run(app, host="0.0.0.0", port=8000)
"""

MANIFEST = (
    "spec_version: 1\nname: ping_env\ntype: space\nruntime: fastapi\napp: {app}\nport: 8000\n"
)


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


@pytest.fixture
def in_repo(tmp_path: Path) -> Path:
    """huggingface/OpenEnv `envs/NAME` style: `from ..models import`, Dockerfile under
    server/ running `cd /app/env && uvicorn server.app:app`, package-dir mapping to `.`."""
    return write(
        tmp_path / "envs" / "ping_env",
        {
            "__init__.py": "",
            "openenv.yaml": MANIFEST.format(app="server.app:app"),
            "models.py": MODELS,
            "server/__init__.py": "",
            "server/ping_environment.py": ENVIRONMENT.format(models="..models"),
            "server/app.py": APP.format(models="..models", env_module=".ping_environment"),
            "pyproject.toml": """
            [project]
            name = "openenv-ping-env"
            version = "0.1.0"
            [project.scripts]
            server = "ping_env.server.app:main"
            [tool.setuptools]
            packages = ["ping_env", "ping_env.server"]
            package-dir = { "ping_env" = ".", "ping_env.server" = "server" }
        """,
            "server/Dockerfile": """
            FROM python:3.11-slim AS builder
            WORKDIR /app/env
            COPY . /app/env
            FROM python:3.11-slim
            WORKDIR /app
            COPY --from=builder /app/env /app/env
            ENV PYTHONPATH="/app/env:$PYTHONPATH"
            CMD ["sh", "-c", "cd /app/env && uvicorn server.app:app --host 0.0.0.0 --port 8000"]
        """,
        },
    )
