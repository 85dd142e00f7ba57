"""Answer a chain of 6 sums; the final step pays the fraction answered correctly, in [0, 1].

The prompt is built as a running transcript: previous prompt + the agent's answer + the verdict +
the next question.
"""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

N_QUESTIONS = 6


class AnswerAction(Action):
    answer: str


class ChainObservation(Observation):
    prompt: str = ""


class ChainEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._qs, self._prompt, self._correct, self._done = [], "", 0, True

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> ChainObservation:
        rng = random.Random(seed)
        self._qs = [(rng.randint(10, 99), rng.randint(10, 99)) for _ in range(N_QUESTIONS)]
        self._correct, self._done = 0, False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        a, b = self._qs[0]
        self._prompt = (f"You will answer {N_QUESTIONS} additions. Reply with the number only.\n"
                        f"Q1: What is {a} + {b}?")
        return ChainObservation(prompt=self._prompt, reward=0.0)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> ChainObservation:
        if self._done:
            return ChainObservation(prompt=self._prompt, done=True, reward=0.0)
        i = self._state.step_count
        self._state.step_count += 1
        a, b = self._qs[i]
        ok = action.answer.strip() == str(a + b)
        self._correct += ok
        self._prompt += f"\nA{i + 1}: {action.answer.strip()[:100]}\n{'Correct.' if ok else 'Wrong.'}"
        self._done = self._state.step_count >= N_QUESTIONS
        if not self._done:
            a, b = self._qs[i + 1]
            self._prompt += f"\nQ{i + 2}: What is {a} + {b}?"
        reward = self._correct / N_QUESTIONS if self._done else 0.0
        return ChainObservation(prompt=self._prompt, done=self._done, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    a, b = map(int, re.findall(r"What is (\d+) \+ (\d+)\?", observation["prompt"])[-1])
    return {"answer": str(a + b)}


app = create_app(ChainEnv, AnswerAction, ChainObservation, env_name="sum_chain",
                 max_concurrent_envs=8)
