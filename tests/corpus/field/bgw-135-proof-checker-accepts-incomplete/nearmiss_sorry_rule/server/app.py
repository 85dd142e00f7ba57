"""Propositional proof: derive the goal from hypotheses by modus ponens, checked line by line."""
import json
import random
from typing import List
from typing import Any, Dict, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class ProofAction(Action):
    proof_json: str = "[]"


class ProofObservation(Observation):
    task: Dict[str, Any] = {}
    feedback: str = ""

RULES = ("hyp", "mp")


def imp(a: str, b: str) -> str:
    return f"({a} -> {b})"


def make_task(seed: Optional[int]) -> Dict[str, Any]:
    rng = random.Random(seed)
    p, q, r, s = rng.sample(["P", "Q", "R", "S", "T", "U"], 4)
    hyps = [p, imp(p, q), imp(q, r), imp(r, s)]
    rng.shuffle(hyps)
    return {"hypotheses": hyps, "goal": s,
            "prompt": "Prove the goal from the hypotheses. Each line is {formula, rule, refs}; rules: 'hyp' "
                      "(a hypothesis), 'mp' (modus ponens, refs [i, j] where line j is (A -> B) and line i is A). "
                      "The last line must be the goal."}


def check(lines: List[Dict[str, Any]], hyps: List[str], goal: str) -> bool:
    seen: List[str] = []
    for line in lines:
        f, rule, refs = str(line.get("formula", "")), line.get("rule"), line.get("refs", [])
        if rule not in RULES:
            return False
        if rule == "hyp" and f not in hyps:
            return False
        if rule == "mp":
            if len(refs) != 2 or not all(isinstance(k, int) and 0 <= k < len(seen) for k in refs):
                return False
            if seen[refs[1]] != imp(seen[refs[0]], f):
                return False
        seen.append(f)
    return bool(seen) and seen[-1] == goal


def grade(action, task):
    try:
        lines = json.loads(action.proof_json)
        ok = isinstance(lines, list) and all(isinstance(l, dict) for l in lines) and \
            check(lines, task["hypotheses"], task["goal"])
    except (json.JSONDecodeError, TypeError):
        ok = False
    return (1.0 if ok else 0.0), ("proof accepted" if ok else "proof rejected")


class ProofEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task: Optional[Dict[str, Any]] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> ProofObservation:
        self._task = make_task(seed)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return ProofObservation(task=public(self._task))

    def step(self, action: ProofAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> ProofObservation:
        if self._task is None or self._done:
            return ProofObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        reward, feedback = grade(action, self._task)
        return ProofObservation(task=public(self._task), feedback=feedback, done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def public(task: Dict[str, Any]) -> Dict[str, Any]:
    """What the agent sees: everything except the grader's private keys."""
    return {k: v for k, v in task.items() if not k.startswith("_")}

def policy(observation: dict) -> dict:
    t = observation["task"]
    hyps = t["hypotheses"]
    atom = next(h for h in hyps if "->" not in h)
    lines = [{"formula": atom, "rule": "hyp", "refs": []}]
    while lines[-1]["formula"] != t["goal"]:
        cur = lines[-1]["formula"]
        h = next(x for x in hyps if x.startswith(f"({cur} -> "))
        nxt = h[len(cur) + 5:-1]
        lines.append({"formula": h, "rule": "hyp", "refs": []})
        lines.append({"formula": nxt, "rule": "mp", "refs": [len(lines) - 2, len(lines) - 1]})
    return {"proof_json": json.dumps(lines)}


app = create_app(ProofEnv, ProofAction, ProofObservation, env_name="implication_chain",
                 max_concurrent_envs=8)
