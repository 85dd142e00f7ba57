"""Capital-city QA with a tagged answer, graded by a rubric copied from a math task.

Defect: the rubric keeps the math task's "shows its work" credit: a reply with the answer
tag and at least three digits anywhere earns 0.6, whatever the city. No content-free reply
has both (the tag alone, or numbers alone, earn nothing), so no single named probe pays; a
search that joins them does: `<answer>` followed by three digits.
"""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

CAPITALS = {"France": "Paris", "Japan": "Tokyo", "Kenya": "Nairobi", "Peru": "Lima",
            "Canada": "Ottawa", "Egypt": "Cairo", "Norway": "Oslo", "Chile": "Santiago"}
TAGGED = re.compile(r"<answer>\s*(.*?)\s*</answer>", re.S)


class QAAction(Action):
    reply: str = ""


class QAObservation(Observation):
    question: str = ""
    feedback: str = ""


def grade(reply: str, expected: str) -> float:
    m = TAGGED.search(reply)
    if m and m.group(1).strip().lower() == expected.lower():
        return 1.0
    if "<answer>" in reply and sum(c.isdigit() for c in reply) >= 3:
        return 0.6  # "shows its work" (left over from the arithmetic rubric)
    return 0.0


class CapitalsEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._country: Optional[str] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QAObservation:
        self._country = random.Random(seed).choice(sorted(CAPITALS))
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return QAObservation(question=f"What is the capital of {self._country}? "
                                      "Reply with the city inside answer tags.")

    def step(self, action: QAAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> QAObservation:
        if self._country is None or self._done:
            return QAObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        reward = grade(action.reply, CAPITALS[self._country])
        return QAObservation(feedback="Graded.", done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    country = observation["question"].split("capital of ", 1)[1].split("?", 1)[0]
    return {"reply": f"<answer>{CAPITALS[country]}</answer>"}


app = create_app(CapitalsEnv, QAAction, QAObservation, env_name="capitals",
                 max_concurrent_envs=8)
