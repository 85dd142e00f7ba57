"""Order the meetings so that every 'X before Y' constraint holds; reward = 1 - 0.25 per
violation (floored at 0), 3 attempts.

Defect: the reward starts from full marks and only loses points for violated constraints;
the constraint list is empty until reset, so a never-reset instance pays 1.0 for anything.
"""
import random
from typing import Any, List, Optional, Tuple
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MEETINGS = ["standup", "design", "review", "retro", "planning", "demo"]
MAX_ATTEMPTS = 3


class ScheduleAction(Action):
    order: List[str] = []


class ScheduleObservation(Observation):
    meetings: List[str] = []
    constraints: List[str] = []
    feedback: str = ""


class ScheduleEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._meetings: List[str] = []
        self._rules: List[Tuple[str, str]] = []
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> ScheduleObservation:
        rng = random.Random(seed)
        self._meetings = rng.sample(MEETINGS, 4)
        truth = rng.sample(self._meetings, 4)
        self._rules = [(truth[i], truth[i + 1]) for i in range(3)]
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._obs("Order the meetings.", 0.0)

    def _obs(self, text: str, reward: float) -> ScheduleObservation:
        return ScheduleObservation(meetings=list(self._meetings),
                                   constraints=[f"{a} before {b}" for a, b in self._rules],
                                   feedback=text, reward=reward, done=self._done)

    def step(self, action: ScheduleAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> ScheduleObservation:
        if self._done:
            return self._obs("Episode over.", 0.0)
        self._state.step_count += 1
        pos = {m: i for i, m in enumerate(action.order)}
        violations = sum(1 for a, b in self._rules
                         if a not in pos or b not in pos or pos[a] > pos[b])
        reward = max(0.0, 1.0 - 0.25 * violations)
        self._done = violations == 0 or self._state.step_count >= MAX_ATTEMPTS
        if not self._done:
            reward = 0.0 if violations else reward  # partial credit only on the last attempt
        return self._obs(f"{violations} constraint(s) violated.", reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    pairs = [c.split(" before ") for c in observation["constraints"]]
    order = [pairs[0][0]] + [b for _, b in pairs]
    return {"order": order}


app = create_app(ScheduleEnv, ScheduleAction, ScheduleObservation, env_name="schedule_penalty",
                 max_concurrent_envs=8)
