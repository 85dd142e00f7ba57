"""Sort-the-numbers task: the agent outputs the given integers in ascending order, space-separated."""
import random
from typing import Any, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class SortAction(Action):
    output: str = ""


class SortObservation(Observation):
    prompt: str = ""
    numbers: List[int] = []
    feedback: str = ""


def make_numbers(seed: Optional[int]) -> List[int]:
    rng = random.Random(seed)
    nums = [rng.randint(-50, 99) for _ in range(rng.randint(6, 10))]
    while nums == sorted(nums):
        rng.shuffle(nums)
    return nums


def tokens(text: str) -> List[str]:
    return text.replace(",", " ").split()


def check(output: str, expected: List[int]) -> bool:
    # tolerate commas, extra spaces and newlines in the agent's output
    try:
        got = [int(t) for t in tokens(output)]
    except ValueError:
        return False
    return set(got) == set(expected)


class SortEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._nums: Optional[List[int]] = None
        self._done = False

    def _prompt(self) -> str:
        return ("Sort these integers in ascending order and output them space-separated: "
                + " ".join(map(str, self._nums)))

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> SortObservation:
        self._nums = make_numbers(seed)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return SortObservation(prompt=self._prompt(), numbers=self._nums)

    def step(self, action: SortAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> SortObservation:
        if self._nums is None or self._done:
            return SortObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        ok = check(action.output, sorted(self._nums))
        return SortObservation(prompt=self._prompt(), numbers=self._nums,
                               feedback="Correct." if ok else "Wrong.", done=True,
                               reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"output": " ".join(map(str, sorted(observation["numbers"])))}


app = create_app(SortEnv, SortAction, SortObservation, env_name="sort_tokens",
                 max_concurrent_envs=8)
