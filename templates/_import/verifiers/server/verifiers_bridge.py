"""Plays a Prime verifiers environment (the classic `load_environment()` API:
`SingleTurnEnv`, `MultiTurnEnv`, `ToolEnv` and their `Rubric`) one turn at a time, as OpenEnv
steps. Written by `envkit import`; no openenv import here (the oracle uses it too).

What it relies on, read from the verifiers wheels with that API (0.1.x; `verifiers.legacy`
in 0.3.x):
- the environment's `dataset` (or `eval_dataset`): rows with `prompt` (chat messages) or
  `question`, and `answer`, `info`, `task`;
- `system_prompt`, `max_turns` (1 for a single-turn environment), `message_type`
  ("chat" or "completion");
- multi-turn: `env_response(messages, state)` returns the environment's next messages (or
  `(messages, state)` in older releases) and `is_completed(messages, state)` ends the rollout;
- `rubric.funcs` with `rubric.weights` (`reward_funcs`/`reward_weights` in older releases):
  each function is called with the keyword arguments its signature names among `prompt`,
  `completion`, `answer`, `state`, `info`, `task`, `parser` (all when it takes `**kwargs`),
  may be a coroutine function, and returns a float in [0, 1]; the reward is the weighted
  sum, as `Rubric.score_rollout` computes it.
Messages are plain OpenAI-style chat dicts; releases that pass pydantic message objects to
their hooks (0.1.14's `ToolEnv` reads `msg.tool_calls`) are not supported.
"""

import asyncio
import concurrent.futures
import copy
import inspect
import json
from typing import Any, Dict, List, Optional, Tuple

DEFAULT_MAX_TURNS = 10


def run_sync(value: Any) -> Any:
    """`value`, awaited when it is awaitable: verifiers' hooks and reward functions may be
    coroutines. Runs them on a fresh event loop (in a worker thread when this thread already
    runs one)."""
    if not inspect.isawaitable(value):
        return value

    async def wait() -> Any:
        return await value

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wait())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, wait()).result()


def rows(env: Any) -> Any:
    """The environment's dataset (a `datasets.Dataset` or a list of dicts).

    Raises:
        ValueError: the environment has neither `dataset` nor `eval_dataset`, or it is empty.
    """
    data = getattr(env, "dataset", None)
    if data is None:
        data = getattr(env, "eval_dataset", None)
    if data is None or len(data) == 0:
        raise ValueError("the verifiers environment has no dataset rows")
    return data


def row(env: Any, index: int) -> Dict[str, Any]:
    """Row `index` of the dataset, as a dict."""
    return dict(rows(env)[index])


def max_turns(env: Any) -> int:
    """Turns per episode: `env.max_turns` (1 for single-turn), DEFAULT_MAX_TURNS when unset."""
    turns = getattr(env, "max_turns", None)
    if not isinstance(turns, int) or turns <= 0:
        return DEFAULT_MAX_TURNS if hasattr(env, "env_response") else 1
    return turns


def prompt_messages(env: Any, item: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The chat messages the model sees first: the row's `prompt`, else its `question`
    after the environment's `system_prompt`."""
    prompt = item.get("prompt")
    if isinstance(prompt, list):
        return [dict(m) for m in prompt]
    messages = []
    system = getattr(env, "system_prompt", None)
    if system:
        messages.append({"role": "system", "content": str(system)})
    messages.append({"role": "user", "content": str(prompt if prompt else item.get("question", ""))})
    return messages


def _rubric_parts(env: Any) -> Tuple[List[Any], List[float], Any, Dict[str, Any]]:
    rubric = getattr(env, "rubric", None)
    funcs = list(getattr(rubric, "funcs", None) or getattr(rubric, "reward_funcs", None) or [])
    weights = getattr(rubric, "weights", None) or getattr(rubric, "reward_weights", None)
    weights = [float(w) for w in weights] if weights else [1.0] * len(funcs)
    parser = getattr(rubric, "parser", None) or getattr(env, "parser", None)
    extra = dict(getattr(rubric, "class_objects", None) or {})
    return funcs, weights, parser, extra


def reward_range(env: Any) -> Tuple[float, float]:
    """(lo, hi) of the weighted sum when every reward function scores in [0, 1].

    Raises:
        ValueError: the rubric has no reward function with a positive weight.
    """
    funcs, weights, _, _ = _rubric_parts(env)
    hi = sum(w for w in weights if w > 0)
    if not funcs or hi <= 0:
        raise ValueError("the verifiers environment's rubric has no reward function with a positive weight")
    return sum(w for w in weights if w < 0), hi


def score(env: Any, item: Dict[str, Any], prompt: Any, completion: Any,
          state: Dict[str, Any]) -> Tuple[float, Dict[str, float]]:
    """The rubric's weighted reward of one rollout and each function's score."""
    funcs, weights, parser, extra = _rubric_parts(env)
    args = {"prompt": prompt, "completion": completion, "answer": item.get("answer", ""),
            "state": state, "info": item.get("info") or {}, "task": item.get("task", "default"),
            "parser": parser, **extra}
    total, metrics = 0.0, {}
    for func, weight in zip(funcs, weights):
        params = inspect.signature(func).parameters
        takes_all = any(p.kind == p.VAR_KEYWORD for p in params.values())
        given = args if takes_all else {k: v for k, v in args.items() if k in params}
        value = float(run_sync(func(**given)))
        metrics[getattr(func, "__name__", repr(func))] = value
        total += weight * value
    return total, metrics


class Episode:
    """One rollout of the verifiers environment, advanced one model turn per `act`."""

    def __init__(self, env: Any, index: int) -> None:
        self.env = env
        self.index = index
        self.item = row(env, index)
        self.prompt = prompt_messages(env, self.item)
        self.completion: List[Dict[str, Any]] = []
        self.turn = 0
        self.done = False
        self.state: Dict[str, Any] = {
            "prompt": copy.deepcopy(self.prompt), "completion": self.completion,
            "answer": self.item.get("answer", ""), "task": self.item.get("task", "default"),
            "info": self.item.get("info") or {}, "responses": [], "turn": 0,
        }
        setup = getattr(env, "setup_state", None)
        if callable(setup):
            self.state = run_sync(setup(self.state)) or self.state

    def act(self, content: str, tool_calls: Optional[List[Dict[str, Any]]] = None
            ) -> Tuple[List[Dict[str, Any]], Optional[Tuple[float, Dict[str, float]]]]:
        """Play the model's turn: the environment's reply messages, and the rubric's
        `(reward, metrics)` when the rollout ended (else None)."""
        message: Dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = tool_calls
        self.completion.append(message)
        self.turn += 1
        self.state["turn"] = self.turn
        messages = self.prompt + self.completion
        ended = self.turn >= max_turns(self.env)
        check = getattr(self.env, "is_completed", None)
        if not ended and callable(check):
            ended = bool(run_sync(check(messages, self.state)))
        replies: List[Dict[str, Any]] = []
        if not ended and hasattr(self.env, "env_response"):
            out = run_sync(self.env.env_response(messages, self.state))
            if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], dict):
                out, self.state = out
            replies = [dict(m) for m in (out or [])]
            self.completion.extend(replies)
        if not ended:
            return replies, None
        self.done = True
        completion: Any = self.completion
        if getattr(self.env, "message_type", "chat") == "completion":
            completion = "".join(str(m.get("content", "")) for m in self.completion)
        return replies, score(self.env, self.item, self.prompt, completion, self.state)


def parse_value(text: str) -> Any:
    """A `--set` value: JSON when it parses (numbers, booleans, lists), else the string."""
    try:
        return json.loads(text)
    except ValueError:
        return text
