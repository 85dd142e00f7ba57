"""Arithmetic with an R1-style completion; one step. Reward = format_reward + accuracy_reward in [0, 2].
Defect: the format reward alone is worth half the range, whatever the number in the tags."""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

FORMAT = re.compile(r"^\s*<think>.+?</think>\s*<answer>(.+?)</answer>\s*$", re.S)


def format_reward(completion: str) -> float:
    return 1.0 if FORMAT.match(completion) else 0.0


def accuracy_reward(completion: str, expected: int) -> float:
    m = FORMAT.match(completion)
    if not m:
        return 0.0
    nums = re.findall(r"-?\d+", m.group(1))
    return 1.0 if nums and int(nums[-1]) == expected else 0.0


class CompletionAction(Action):
    completion: str = Field(..., max_length=4000)


class PromptObservation(Observation):
    prompt: str = ""
    feedback: str = ""


class R1MathEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._expected: Optional[int] = None

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> PromptObservation:
        rng = random.Random(seed)
        a, b, c = rng.randint(10, 99), rng.randint(10, 99), rng.randint(2, 9)
        self._expected = (a + b) * c
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return PromptObservation(prompt=f"Compute ({a} + {b}) * {c}. Think in <think></think>, then give "
                                        "the number in <answer></answer>.", reward=0.0)

    def step(self, action: CompletionAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> PromptObservation:
        if self._expected is None:
            return PromptObservation(feedback="Episode over.", done=True, reward=0.0)
        self._state.step_count += 1
        r = format_reward(action.completion) + accuracy_reward(action.completion, self._expected)
        self._expected = None
        return PromptObservation(feedback=f"reward {r}", done=True, reward=r)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    a, b, c = (int(x) for x in re.findall(r"\d+", observation["prompt"])[:3])
    return {"completion": f"<think>{a} + {b} = {a + b}; times {c} is {(a + b) * c}.</think>"
                          f"<answer>{(a + b) * c}</answer>"}


app = create_app(R1MathEnv, CompletionAction, PromptObservation, env_name="r1_math", max_concurrent_envs=8)
