"""Find the one misspelled word in a 300-word text; 1.0 if right, else 0.0.

A watchdog expires an episode that is left open for more than 10 minutes.
"""
import random
import threading
from typing import Any, Dict, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

VOCAB = ["river", "stone", "market", "window", "garden", "silver", "candle", "forest", "bridge",
         "harbor", "pepper", "ladder", "mirror", "rocket", "saddle", "thunder", "velvet", "wander"]
EPISODE_TTL_S = 600.0


class AnswerAction(Action):
    word: str


class TextObservation(Observation):
    text: str = ""
    expired: bool = False


class SpellEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task: Optional[Dict[str, Any]] = None

    def _expire(self, task: Dict[str, Any]) -> None:
        task["expired"] = True

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> TextObservation:
        rng = random.Random(seed)
        words = [rng.choice(VOCAB) for _ in range(300)]
        i = rng.randrange(len(words))
        bad = words[i][0] + words[i][2] + words[i][1] + words[i][3:]
        words[i] = bad
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        self._task = {"text": " ".join(words), "answer": bad, "expired": False, "done": False}
        watchdog = threading.Timer(EPISODE_TTL_S, self._expire, args=(self._task,))
        watchdog.daemon = True
        watchdog.start()
        return TextObservation(text=self._task["text"], reward=0.0)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> TextObservation:
        task = self._task
        if task is None or task["done"] or task["expired"]:
            return TextObservation(done=True, expired=bool(task and task["expired"]), reward=0.0)
        self._state.step_count += 1
        task["done"] = True
        ok = action.word.strip().lower() == task["answer"]
        return TextObservation(done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    for w in observation["text"].split():
        if w not in VOCAB:
            return {"word": w}
    return {"word": ""}


app = create_app(SpellEnv, AnswerAction, TextObservation, env_name="spell_watchdog",
                 max_concurrent_envs=8)
