"""Multi-step arithmetic with a JSON answer {answer, confidence, reasoning}; reward = accuracy + calibration bonus."""
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

INSTRUCTIONS = ("Answer with JSON fields: answer (integer), confidence (0..1, how sure you are), "
                "reasoning (short). Scoring: 0.7 for a correct answer plus up to 0.3 for confidence "
                "in a correct answer.")


class CalcAction(Action):
    answer: int = 0
    confidence: float = 0.0
    reasoning: str = ""


class CalcObservation(Observation):
    question: str = ""
    instructions: str = INSTRUCTIONS
    feedback: str = ""


class CalibratedCalcEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._q: Optional[str] = None
        self._ans = 0
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> CalcObservation:
        rng = random.Random(seed)
        a, b, c = rng.randint(12, 40), rng.randint(3, 9), rng.randint(5, 60)
        self._q, self._ans = f"What is {a} * {b} + {c}?", a * b + c
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return CalcObservation(question=self._q)

    def _grade(self, action: CalcAction) -> float:
        correct = action.answer == self._ans
        conf = min(max(action.confidence, 0.0), 1.0)
        calibration = conf if correct else 0.0  # confidence only pays on a correct answer
        return round(0.7 * correct + 0.3 * calibration, 4)

    def step(self, action: CalcAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> CalcObservation:
        if self._q is None or self._done:
            return CalcObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        r = self._grade(action)
        return CalcObservation(question=self._q, feedback=f"score {r}", done=True, reward=r)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    """The oracle: computes the expression, answers with full confidence."""
    parts = observation["question"].rstrip("?").split()
    a, b, c = int(parts[2]), int(parts[4]), int(parts[6])
    return {"answer": a * b + c, "confidence": 1.0, "reasoning": f"{a}*{b}={a*b}, plus {c}"}


app = create_app(CalibratedCalcEnv, CalcAction, CalcObservation, env_name="calibrated_calc",
                 max_concurrent_envs=8)
