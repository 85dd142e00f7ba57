"""Arithmetic QA. The state keeps the task record for auditing.

The state keeps an audit record: the task id and a SHA-256 digest of the reference (for
checking logged rollouts), never the reference itself.
"""
import hashlib
import random
import re
from typing import Any, Dict, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class QAAction(Action):
    answer: str = ""


class QAObservation(Observation):
    question: str = ""
    feedback: str = ""


class QAState(State):
    task: Dict[str, Any] = Field(default_factory=dict)


def make_task(seed: Optional[int]) -> Dict[str, Any]:
    rng = random.Random(seed)
    a, b, c = rng.randint(11, 49), rng.randint(11, 49), rng.randint(2, 9)
    return {"id": f"arith-{seed}", "prompt": f"What is {a} * {b} - {c}?", "difficulty": "medium",
            "grading": {"kind": "exact_int",
                        "reference_sha256": hashlib.sha256(str(a * b - c).encode()).hexdigest()}}


class ArithmeticEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = QAState(episode_id=str(uuid4()), step_count=0)
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QAObservation:
        task = make_task(seed)
        self._done = False
        self._state = QAState(episode_id=episode_id or str(uuid4()), step_count=0, task=task)
        return QAObservation(question=task["prompt"])

    def step(self, action: QAAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> QAObservation:
        task = self._state.task
        if not task or self._done:
            return QAObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        found = re.findall(r"-?\d+", action.answer)
        digest = hashlib.sha256(found[-1].encode()).hexdigest() if found else ""
        correct = digest == task["grading"]["reference_sha256"]
        return QAObservation(question=task["prompt"], done=True, reward=1.0 if correct else 0.0,
                             feedback="Correct." if correct else "Incorrect.")

    @property
    def state(self) -> QAState:
        return self._state


def policy(observation: dict) -> dict:
    a, b, c = map(int, re.findall(r"\d+", observation["question"]))
    return {"answer": str(a * b - c)}


app = create_app(ArithmeticEnv, QAAction, QAObservation, env_name="arith_state_digest",
                 max_concurrent_envs=8, state_cls=QAState)
