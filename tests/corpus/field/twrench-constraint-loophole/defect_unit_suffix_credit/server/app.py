"""Physics numeric answers with units, e.g. '42.5 N'. Rubric: 0.7 value within 1%, 0.3 unit given."""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

# (question template, answer function, expected unit)
PROBLEMS = [
    ("A {x} kg cart accelerates at {y} m/s^2. What net force acts on it?", lambda x, y: x * y, "N"),
    ("A {x} kg ball moves at {y} m/s. What is its kinetic energy?", lambda x, y: 0.5 * x * y * y, "J"),
    ("A cyclist covers {x} m in {y} s. What is the average speed?", lambda x, y: x / y, "m/s"),
    ("A motor does {x} J of work in {y} s. What is its power?", lambda x, y: x / y, "W"),
]
ANSWER_RE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*([A-Za-z][A-Za-z/^0-9]*)\s*$")
INSTRUCTIONS = "Answer with a number followed by its SI unit, e.g. '12.5 kg'. 0.7 for the value (1% tolerance), 0.3 for the unit."


class UnitAction(Action):
    answer: str = ""


class UnitObservation(Observation):
    question: str = ""
    instructions: str = INSTRUCTIONS
    feedback: str = ""


class PhysicsUnitsEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._q: Optional[str] = None
        self._value = 0.0
        self._unit = ""
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> UnitObservation:
        rng = random.Random(seed)
        text, fn, unit = PROBLEMS[rng.randrange(len(PROBLEMS))]
        x, y = rng.randint(20, 120), rng.randint(2, 12)
        self._q, self._value, self._unit = text.format(x=x, y=y), fn(x, y), unit
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return UnitObservation(question=self._q)

    def _grade(self, answer: str) -> float:
        m = ANSWER_RE.match(answer)
        if not m:
            return 0.0
        value_ok = abs(float(m.group(1)) - self._value) <= 0.01 * abs(self._value)
        unit_ok = bool(m.group(2))  # a unit was given
        return round(0.7 * value_ok + 0.3 * unit_ok, 4)

    def step(self, action: UnitAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> UnitObservation:
        if self._q is None or self._done:
            return UnitObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        r = self._grade(action.answer)
        return UnitObservation(question=self._q, feedback=f"score {r}", done=True, reward=r)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    """The oracle: identifies the problem template and computes value and unit."""
    q = observation["question"]
    x, y = (int(v) for v in re.findall(r"(?<![\^/])\b\d+\b", q)[:2])
    for text, fn, unit in PROBLEMS:
        if text.format(x=x, y=y) == q:
            return {"answer": f"{fn(x, y):.4f} {unit}"}
    return {"answer": ""}


app = create_app(PhysicsUnitsEnv, UnitAction, UnitObservation, env_name="physics_units",
                 max_concurrent_envs=8)
