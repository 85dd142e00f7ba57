"""Prime hunt: find the primes hidden in a list of numbers, one number per step; 1/k per prime found."""
import random
from typing import Any, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_STEPS = 8
K = 4


class HuntAction(Action):
    number: int = 0


class HuntObservation(Observation):
    numbers: List[int] = []
    prompt: str = ""
    found: int = 0
    feedback: str = ""


def is_prime(n: int) -> bool:
    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))


def make_numbers(seed: Optional[int]) -> List[int]:
    rng = random.Random(seed)
    primes = rng.sample([p for p in range(100, 400) if is_prime(p)], K)
    composites = rng.sample([c for c in range(100, 400) if not is_prime(c) and c % 2 and c % 5], 8)
    nums = primes + composites
    rng.shuffle(nums)
    return nums


class HuntEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._nums: Optional[List[int]] = None
        self._found: List[int] = []
        self._done = False

    def _obs(self, **kw: Any) -> HuntObservation:
        return HuntObservation(numbers=self._nums or [], found=len(self._found),
                               prompt=f"{K} of these numbers are prime. Submit one number per step; "
                                      f"each prime found pays {1 / K}. At most {MAX_STEPS} steps.", **kw)

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> HuntObservation:
        self._nums = make_numbers(seed)
        self._found = []
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._obs()

    def step(self, action: HuntAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> HuntObservation:
        if self._nums is None or self._done:
            return self._obs(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        n = action.number
        hit = n in self._nums and is_prime(n) and n not in self._found  # each prime pays once
        if hit:
            self._found.append(n)
        reward = 1 / K if hit else 0.0
        self._done = len(set(self._found)) == K or self._state.step_count >= MAX_STEPS
        return self._obs(feedback="prime!" if hit else "no", done=self._done, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    """Submit the primes of the list in order, skipping those already submitted (found counts them)."""
    primes = [n for n in observation["numbers"] if is_prime(n)]
    return {"number": primes[observation["found"] % len(primes)]}


app = create_app(HuntEnv, HuntAction, HuntObservation, env_name="prime_hunt", max_concurrent_envs=8)
