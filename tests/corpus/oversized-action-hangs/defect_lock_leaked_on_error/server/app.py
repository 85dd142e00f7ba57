"""Summarize a short text in at most 12 tokens that include its keyword; 1.0 if so, else 0.0.

Completions are tokenized by a shared tokenizer object that is not thread-safe, so a module-level
lock serializes its use.
"""
import random
import re
import threading
from typing import Any, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

TOPICS = {"volcano": "The volcano erupted at dawn and ash covered the nearby villages.",
          "harvest": "Farmers brought in the harvest early because of the coming frost.",
          "election": "Voters lined up for hours as the election drew record turnout.",
          "comet": "Astronomers tracked the comet as it passed close to the sun.",
          "flood": "The river flood closed roads and schools across the valley."}


class Tokenizer:
    """A stateful tokenizer (a reused scratch buffer): not safe to share between threads."""
    MAX_TOKENS = 8192
    PIECE = 16

    def __init__(self) -> None:
        self._scratch: List[str] = []

    def encode(self, text: str) -> List[str]:
        self._scratch.clear()
        for word in re.findall(r"\w+|[^\w\s]", text.lower()):
            for i in range(0, len(word), self.PIECE):  # long words split into pieces
                self._scratch.append(word[i:i + self.PIECE])
                if len(self._scratch) > self.MAX_TOKENS:
                    raise ValueError(f"input longer than {self.MAX_TOKENS} tokens")
        return list(self._scratch)


TOKENIZER = Tokenizer()
TOKENIZER_LOCK = threading.Lock()


class SummaryAction(Action):
    summary: str


class TextObservation(Observation):
    text: str = ""
    keyword: str = ""


class SummaryEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._keyword, self._done = None, True

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> TextObservation:
        self._keyword = random.Random(seed).choice(sorted(TOPICS))
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return TextObservation(text=TOPICS[self._keyword], keyword=self._keyword, reward=0.0)

    def step(self, action: SummaryAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> TextObservation:
        if self._keyword is None or self._done:
            return TextObservation(done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        TOKENIZER_LOCK.acquire()
        tokens = TOKENIZER.encode(action.summary)
        TOKENIZER_LOCK.release()
        ok = len(tokens) <= 12 and self._keyword in tokens
        return TextObservation(done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"summary": f"A story about the {observation['keyword']}."}


app = create_app(SummaryEnv, SummaryAction, TextObservation, env_name="short_summary",
                 max_concurrent_envs=8)
