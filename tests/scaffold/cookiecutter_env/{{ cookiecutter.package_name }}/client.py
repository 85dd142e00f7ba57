"""Typed client for the {{ cookiecutter.project_name }} environment (WebSocket session, one env per client).

    from {{ cookiecutter.package_name }} import {{ cookiecutter.class_prefix }}Action, {{ cookiecutter.class_prefix }}Env

    with {{ cookiecutter.class_prefix }}Env(base_url="http://127.0.0.1:8000").sync() as env:
        result = env.reset(seed=0)
        result = env.step({{ cookiecutter.class_prefix }}Action(...))
"""

from typing import Any, Dict

from openenv.core import EnvClient
from openenv.core.client_types import StepResult
from openenv.core.env_server.types import State

from .models import {{ cookiecutter.class_prefix }}Action, {{ cookiecutter.class_prefix }}Observation


class {{ cookiecutter.class_prefix }}Env(EnvClient[{{ cookiecutter.class_prefix }}Action, {{ cookiecutter.class_prefix }}Observation, State]):
    """Client for the {{ cookiecutter.project_name }} environment."""

    def _step_payload(self, action: {{ cookiecutter.class_prefix }}Action) -> Dict[str, Any]:
        return action.model_dump(exclude={"metadata"})

    def _parse_result(self, payload: Dict[str, Any]) -> StepResult[{{ cookiecutter.class_prefix }}Observation]:
        observation = {{ cookiecutter.class_prefix }}Observation(
            **payload.get("observation", {}),
            done=payload.get("done", False),
            reward=payload.get("reward"),
        )
        return StepResult(observation=observation, reward=payload.get("reward"),
                          done=payload.get("done", False))

    def _parse_state(self, payload: Dict[str, Any]) -> State:
        return State(**payload)
