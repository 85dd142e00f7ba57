"""Arithmetic word problems with OpenEnv's Task API.

Task discovery: GET-style routes /arith/splits, /arith/num_tasks, /arith/task (OpenEnv
exposes the methods below). Selection: reset(split="train"|"test", index=i).
Reward: 1.0 for the right number, 0.0 otherwise; one answer per episode.
Defect: reset draws the problem from `seed` (the pre-Task-API code path) and only records
`split`/`index` in the observation, so asking for task 5 plays whatever the seed picks.
"""
import random
import re
from typing import Any, Dict, List, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


def _problems(split: str) -> List[Dict[str, Any]]:
    rng = random.Random(split)
    out = []
    for i in range(20):
        a, b = rng.randint(2, 40), rng.randint(2, 40)
        out.append({"id": f"{split}-{i}", "question": f"Ann has {a} apples and buys {b} more. "
                    "How many apples does she have?", "answer": a + b})
    return out


TASKS = {"train": _problems("train"), "test": _problems("test")}


class AnswerAction(Action):
    answer: str = Field(..., max_length=50)


class ProblemObservation(Observation):
    task_id: str = ""
    split: str = ""
    index: int = 0
    question: str = ""
    feedback: str = ""


class ArithEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task: Optional[Dict[str, Any]] = None
        self._split, self._index, self._done = "train", 0, False

    # ---- Task API (discovery) ----
    def list_splits(self) -> List[str]:
        return sorted(TASKS)

    def num_tasks(self, split: str) -> int:
        return len(TASKS[split])

    def list_tasks(self, split: str) -> List[Dict[str, Any]]:
        return [{"id": t["id"], "index": i} for i, t in enumerate(TASKS[split])]

    def get_task(self, split: str, index: int) -> Dict[str, Any]:
        return {"id": TASKS[split][index]["id"], "index": index}

    def _obs(self, feedback: str, reward: float) -> ProblemObservation:
        t = self._task or {"id": "", "question": ""}
        return ProblemObservation(task_id=t["id"], split=self._split, index=self._index,
                                  question=t["question"], feedback=feedback, done=self._done,
                                  reward=reward)

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              split: str = "train", index: Optional[int] = None,
              **kwargs: Any) -> ProblemObservation:
        """Start an episode on TASKS[split][index] (a seeded draw when index is None)."""
        pool = TASKS.get(split, TASKS["train"])
        self._task = random.Random(seed).choice(pool)
        self._split, self._index = split, int(index or 0)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._obs("Answer with a number.", 0.0)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> ProblemObservation:
        if self._task is None or self._done:
            self._done = True
            return self._obs("Episode over.", 0.0)
        self._state.step_count += 1
        self._done = True
        ok = action.answer.strip() == str(self._task["answer"])
        return self._obs("Correct." if ok else "Wrong.", 1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    a, b = map(int, re.findall(r"\d+", observation["question"]))
    return {"answer": str(a + b)}


app = create_app(ArithEnv, AnswerAction, ProblemObservation, env_name="arith",
                 max_concurrent_envs=8)
