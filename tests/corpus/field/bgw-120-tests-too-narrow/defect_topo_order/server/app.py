"""Order build tasks so that every dependency edge is respected; any valid order is acceptable."""
import random
from typing import List
from typing import Any, Dict, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class TopoAction(Action):
    order: List[str] = []


class TopoObservation(Observation):
    task: Dict[str, Any] = {}
    feedback: str = ""

def make_task(seed: Optional[int]) -> Dict[str, Any]:
    rng = random.Random(seed)
    nodes = rng.sample(["lint", "fetch", "build", "test", "docs", "pack", "sign", "ship"], 6)
    edges = []
    for i in range(6):
        for j in range(i + 1, 6):
            if rng.random() < 0.3:
                edges.append([nodes[i], nodes[j]])
    shuffled = nodes[:]
    rng.shuffle(shuffled)
    return {"tasks": shuffled, "edges": edges,
            "prompt": "Give ANY order of the tasks in which each edge [a, b] has a before b."}


def kahn_smallest_first(tasks: List[str], edges: List[List[str]]) -> List[str]:
    indeg = {t: 0 for t in tasks}
    for a, b in edges:
        indeg[b] += 1
    order, ready = [], sorted(t for t in tasks if indeg[t] == 0)
    while ready:
        t = ready.pop(0)
        order.append(t)
        for a, b in edges:
            if a == t:
                indeg[b] -= 1
                if indeg[b] == 0:
                    ready.append(b)
                    ready.sort()
    return order


def valid(order: List[str], tasks: List[str], edges: List[List[str]]) -> bool:
    return order == kahn_smallest_first(tasks, edges)


def grade(action, task):
    ok = valid(list(action.order), task["tasks"], task["edges"])
    return (1.0 if ok else 0.0), ("valid order" if ok else "invalid order")


class TopoEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task: Optional[Dict[str, Any]] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> TopoObservation:
        self._task = make_task(seed)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return TopoObservation(task=public(self._task))

    def step(self, action: TopoAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> TopoObservation:
        if self._task is None or self._done:
            return TopoObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        reward, feedback = grade(action, self._task)
        return TopoObservation(task=public(self._task), feedback=feedback, done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def public(task: Dict[str, Any]) -> Dict[str, Any]:
    """What the agent sees: everything except the grader's private keys."""
    return {k: v for k, v in task.items() if not k.startswith("_")}

def policy(observation: dict) -> dict:
    t = observation["task"]
    return {"order": kahn_smallest_first(t["tasks"], t["edges"])}


app = create_app(TopoEnv, TopoAction, TopoObservation, env_name="topo_order",
                 max_concurrent_envs=8)
