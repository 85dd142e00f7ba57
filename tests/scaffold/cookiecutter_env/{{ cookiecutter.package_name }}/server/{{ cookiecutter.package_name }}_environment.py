"""The {{ cookiecutter.project_name }} environment: repeat the target phrase exactly.

Episode: `reset(seed)` picks a target phrase from the seed; each `step` is one attempt. The
reward is the similarity of the attempt to the target, in [0, 1] (`difflib`'s ratio, so the
empty answer scores 0 and a longer message never scores more). The episode ends on an exact
match (reward 1.0) or after MAX_STEPS attempts.
"""

import difflib
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import State

try:
    from ..models import {{ cookiecutter.class_prefix }}Action, {{ cookiecutter.class_prefix }}Observation
except ImportError:
    from models import {{ cookiecutter.class_prefix }}Action, {{ cookiecutter.class_prefix }}Observation

MAX_STEPS = 5  # keep <= envkit.max_steps in openenv.yaml

# ---- edit the task here ------------------------------------------------------------------
WORDS = (
    "amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo",
    "juniper", "kepler", "lumen", "meadow", "nectar", "orbit", "prism", "quartz", "raven",
    "saffron", "tundra", "umber", "velvet", "willow", "xenon", "yarrow", "zephyr",
)


def make_target(rng: random.Random) -> str:
    """A three-word phrase drawn from `rng` (so the seed fixes the episode)."""
    return " ".join(rng.sample(WORDS, 3))


def score(message: str, target: str) -> float:
    """Reward in [0, 1]: 1.0 for an exact match, partial credit for near misses."""
    if message == target:
        return 1.0
    return round(difflib.SequenceMatcher(None, message, target).ratio() * 0.9, 6)
# -------------------------------------------------------------------------------------------


class {{ cookiecutter.class_prefix }}Environment(Environment):
    """Repeat the target phrase exactly.

    All episode state lives on the instance, so every WebSocket session can have its own
    instance: that is what makes `SUPPORTS_CONCURRENT_SESSIONS = True` true.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._target = ""
        self._done = False

    def reset(
        self,
        seed: Optional[int] = None,
        episode_id: Optional[str] = None,
        **kwargs: Any,
    ) -> {{ cookiecutter.class_prefix }}Observation:
        """Start an episode. The same `seed` always gives the same target phrase."""
        rng = random.Random(seed)
        self._target = make_target(rng)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return {{ cookiecutter.class_prefix }}Observation(
            target=self._target,
            attempts_left=MAX_STEPS,
            feedback="Repeat the target phrase exactly.",
            done=False,
            reward=0.0,
        )

    def step(
        self,
        action: {{ cookiecutter.class_prefix }}Action,
        timeout_s: Optional[float] = None,
        **kwargs: Any,
    ) -> {{ cookiecutter.class_prefix }}Observation:
        """One attempt. Reward = `score(message, target)`; ends on a match or MAX_STEPS."""
        if not self._target or self._done:
            # Before `reset` or after the episode ended: no reward, nothing changes.
            return {{ cookiecutter.class_prefix }}Observation(
                target=self._target,
                echoed_message=action.message,
                attempts_left=0,
                feedback="The episode is over: call reset() to start a new one."
                if self._done else "Call reset() first.",
                done=True,
                reward=0.0,
            )
        self._state.step_count += 1
        reward = score(action.message, self._target)
        attempts_left = MAX_STEPS - self._state.step_count
        self._done = reward == 1.0 or attempts_left <= 0
        return {{ cookiecutter.class_prefix }}Observation(
            target=self._target,
            echoed_message=action.message,
            similarity=reward,
            attempts_left=max(attempts_left, 0),
            feedback="Exact match." if reward == 1.0 else "Not exact yet.",
            done=self._done,
            reward=reward,
        )

    @property
    def state(self) -> State:
        """`episode_id` and `step_count` of the current episode."""
        return self._state
