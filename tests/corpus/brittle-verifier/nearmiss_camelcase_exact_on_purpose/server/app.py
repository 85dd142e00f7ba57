"""Name a function in lowerCamelCase; one attempt.
Near-miss: the verifier is case-sensitive and exact ON PURPOSE: the identifier's exact form is the task.
Only surrounding whitespace and a pair of backticks are forgiven."""
import random
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

PHRASES = ["parse http response", "load user profile", "compute tax rate", "send reset email",
           "build search index", "validate credit card", "fetch open orders", "render page footer"]


def camel(phrase: str) -> str:
    first, *rest = phrase.split()
    return first.lower() + "".join(w.capitalize() for w in rest)


class IdentifierAction(Action):
    identifier: str = Field(..., max_length=200)


class RenameObservation(Observation):
    task: str = ""
    phrase: str = ""
    feedback: str = ""


class CamelEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._expected: Optional[str] = None

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> RenameObservation:
        phrase = random.Random(seed).choice(PHRASES)
        self._expected = camel(phrase)
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return RenameObservation(task="Write this phrase as a lowerCamelCase identifier, and nothing else "
                                      "(e.g. 'open main window' -> openMainWindow).", phrase=phrase, reward=0.0)

    def step(self, action: IdentifierAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> RenameObservation:
        if self._expected is None:
            return RenameObservation(feedback="Episode over.", done=True, reward=0.0)
        self._state.step_count += 1
        given = action.identifier.strip()
        if len(given) > 1 and given[0] == given[-1] == "`":
            given = given[1:-1]
        ok = given == self._expected
        self._expected = None
        return RenameObservation(feedback="Correct." if ok else "Incorrect.", done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"identifier": camel(observation["phrase"])}


app = create_app(CamelEnv, IdentifierAction, RenameObservation, env_name="camel", max_concurrent_envs=8)
