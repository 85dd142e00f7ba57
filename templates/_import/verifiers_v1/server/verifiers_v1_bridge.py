"""Plays a `verifiers.v1` taskset (verifiers 0.4) one model turn at a time, as OpenEnv steps.
Written by `envkit import`. It runs in an interpreter of its own, with verifiers installed
(`python verifiers_v1_bridge.py serve PACKAGE`, started by `server/vf_worker.py`): verifiers
0.4.0 pins `mcp==2.0.0` while openenv 0.10 needs `mcp<2` (through fastmcp 3), so the two never
share a venv. envkit's importer loads it in-process to read the taskset.

What it relies on, read from the verifiers 0.4.0 wheel (`verifiers/v1/`):
- the taskset package exports exactly one `vf.Taskset` subclass in `__all__` (what `vf-init`
  writes); its config class is the `TasksetConfig` of its generic parameters, and iterating
  the taskset yields `vf.Task`s with `task.data` (a `vf.TaskData`: `prompt`, `system_prompt`,
  the row's own fields such as `answer`);
- `task.hooks("reward")` are the `@vf.reward(weight=...)` methods (weight in `_vf_weight`),
  `task.hooks("stop")` the `@vf.stop` ones; `await task.score(trace)` records each reward on
  a `vf.Trace` and `trace.reward` is their weighted sum (`Reward.score * Reward.weight`);
- `Task.toolsets(task.config)` and `Taskset.toolsets(taskset.config)` are `vf.Toolset`s whose
  `@vf.tool` methods are the tools (named `<server_name>_<tool>` as verifiers' MCP servers
  advertise them).
The trace is built as verifiers' rollouts build it: the prompt's messages as nodes, each model
turn an `AssistantMessage` node with `sampled=True`, each tool result a `ToolMessage` node.
"""

import asyncio
import concurrent.futures
import functools
import importlib
import inspect
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

VENDOR = Path(__file__).with_name("vendor")
DEFAULT_MAX_TURNS = 10
MAX_ROWS = 10000  # an infinite taskset is read this far


def run_sync(value: Any) -> Any:
    """`value`, awaited when it is awaitable, on a fresh event loop (in a worker thread when
    this thread already runs one: OpenEnv calls `step` from its server's loop)."""
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


def taskset_class(package: str) -> Any:
    """The one `vf.Taskset` subclass `package` exports in `__all__` (imported from
    `server/vendor/` first).

    Raises:
        ValueError: none, or more than one, or the package exports a `vf.Harness` (a harness
            runs the model itself, which an OpenEnv environment cannot host).
    """
    import verifiers.v1 as vf

    if str(VENDOR) not in sys.path:
        sys.path.insert(0, str(VENDOR))
    module = importlib.import_module(package)
    exported = [getattr(module, name, None) for name in getattr(module, "__all__", ())]
    classes = [obj for obj in exported if isinstance(obj, type)]
    harnesses = [c.__name__ for c in classes if issubclass(c, vf.Harness)]
    if harnesses:
        raise ValueError(f"it ships a harness ({', '.join(harnesses)}): a harness runs the "
                         "model itself, which an OpenEnv environment cannot host")
    tasksets = [c for c in classes if issubclass(c, vf.Taskset)]
    if len(tasksets) != 1:
        raise ValueError(f"`{package}.__all__` must export exactly one vf.Taskset subclass; "
                         f"found {len(tasksets)}")
    return tasksets[0]


class Loaded:
    """A taskset with one config: its tasks (rows) and toolsets, read once per process."""

    def __init__(self, package: str, options: Dict[str, Any]) -> None:
        import verifiers.v1 as vf
        from verifiers.v1.utils.generic import concrete_type

        cls = taskset_class(package)
        config_cls = concrete_type(cls, vf.TasksetConfig, origin=vf.Taskset) or vf.TasksetConfig
        self.taskset = cls(config_cls(**options))
        view = self.taskset if self.taskset.bounded else self.taskset.take(MAX_ROWS)
        self.tasks = list(view)
        if not self.tasks:
            raise ValueError("the taskset loaded no tasks")
        task = self.tasks[0]
        self.toolsets = list(type(task).toolsets(task.config)) + list(
            cls.toolsets(self.taskset.config))
        self.tools = {}  # advertised name -> bound @vf.tool method
        from verifiers.v1.utils.decorators import discover_decorated

        for toolset in self.toolsets:
            for fn in discover_decorated(toolset, "tool"):
                name = getattr(fn, "tool_name", None) or fn.__name__
                prefix = toolset.server_name
                self.tools[f"{prefix}_{name}" if prefix else name] = fn

    def weights(self) -> List[float]:
        """The weight of every `@vf.reward` of the tasks."""
        return [float(getattr(fn, "_vf_weight", 1.0)) for fn in self.tasks[0].hooks("reward")]

    def reward_range(self) -> Tuple[float, float]:
        """[sum of negative weights, sum of positive weights]: rewards return [0, 1]."""
        weights = self.weights()
        return sum(w for w in weights if w < 0), sum(w for w in weights if w > 0)

    def refusal(self) -> Optional[str]:
        """Why an OpenEnv environment cannot play this taskset (one line naming the
        feature), or None."""
        import verifiers.v1 as vf

        task = self.tasks[0]
        kind = type(task)
        if kind.NEEDS_CONTAINER or any(t.data.image for t in self.tasks[:100]):
            return "its tasks need a container runtime (Task.NEEDS_CONTAINER / TaskData.image)"
        if task.config.judges:
            return "its rewards need a judge model (TaskConfig.judges)"
        for hook in ("setup", "finalize", "stage_verifier", "validate"):
            if getattr(kind, hook) is not getattr(vf.Task, hook):
                return f"it overrides Task.{hook}, which needs a runtime (a sandbox)"
        for attr in ("reward", "metric", "stop"):
            for fn in task.hooks(attr):
                param = inspect.signature(fn).parameters.get("runtime")
                if param is not None and param.default is inspect.Parameter.empty:
                    return f"@vf.{attr} `{fn.__name__}` needs a runtime (a sandbox)"
        from verifiers.v1.session import hook_boundary
        from verifiers.v1.utils.decorators import discover_decorated

        for fn in task.hooks("stop"):
            if hook_boundary(fn, allow_trace=True) is not vf.Trace:
                return f"@vf.stop `{fn.__name__}` reads model requests, which needs a model harness"
        if discover_decorated(task, "intercept"):
            return "it intercepts model requests (@vf.intercept), which needs a model harness"
        if not task.hooks("reward"):
            return "its task has no @vf.reward"
        return None

    def tool_specs(self) -> List[Dict[str, Any]]:
        """OpenAI-style function specs of the tools (name, description, JSON parameters)."""
        from pydantic import TypeAdapter

        specs = []
        for name, fn in self.tools.items():
            try:
                schema = TypeAdapter(fn).json_schema()
            except Exception:  # noqa: BLE001 - an unschemable signature still lists the tool
                schema = {"type": "object"}
            specs.append({"type": "function", "function": {
                "name": name, "description": (fn.__doc__ or "").strip(), "parameters": schema}})
        return specs


@functools.lru_cache(maxsize=8)
def _load(package: str, options_json: str) -> Loaded:
    return Loaded(package, json.loads(options_json))


def load(package: str, options: Optional[Dict[str, Any]] = None) -> Loaded:
    """The taskset of `package` with config `options` (its TasksetConfig fields), cached."""
    return _load(package, json.dumps(options or {}, sort_keys=True))


def prompt_messages(task: Any) -> List[Dict[str, Any]]:
    """The chat messages the model sees first: the task's system prompt, then its prompt."""
    data = task.data
    messages: List[Dict[str, Any]] = []
    if data.system_prompt:
        messages.append({"role": "system", "content": data.system_prompt})
    if isinstance(data.prompt, str):
        messages.append({"role": "user", "content": data.prompt})
    else:
        messages.extend(m.model_dump(exclude_none=True) for m in data.prompt or [])
    return messages


def _tool_call(index: int, call: Dict[str, Any]) -> Dict[str, Any]:
    """`{"id", "name", "arguments": str}` from an OpenAI-style call or `{"name", "arguments"}`."""
    fn = call.get("function") if isinstance(call.get("function"), dict) else call
    arguments = fn.get("arguments", {})
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    return {"id": str(call.get("id") or f"call_{index}"), "name": str(fn.get("name", "")),
            "arguments": arguments}


class Episode:
    """One rollout of one task: the trace verifiers scores, built turn by turn."""

    def __init__(self, loaded: Loaded, index: int, max_turns: int) -> None:
        import verifiers.v1 as vf
        from verifiers.v1.graph import MessageNode
        from verifiers.v1.types import SystemMessage, UserMessage

        self.loaded, self.index, self.max_turns = loaded, index, max_turns
        self.task = loaded.tasks[index]
        self.prompt = prompt_messages(self.task)
        self.turn = 0
        self.done = False
        kinds = {"system": SystemMessage, "user": UserMessage}
        nodes = []
        for message in self.prompt:
            cls = kinds.get(message["role"], UserMessage)
            nodes.append(MessageNode(parent=len(nodes) - 1 if nodes else None,
                                     message=cls(content=message["content"])))
        self.trace = vf.Trace(
            task=vf.TraceTask(type=type(self.task).__name__, data=self.task.data,
                              key=self.task.key, hash=self.task.hash),
            agent=vf.AgentInfo(config=vf.AgentConfig()),
            nodes=nodes,
        )

    def _append(self, message: Any, sampled: bool = False) -> None:
        from verifiers.v1.graph import MessageNode

        parent = len(self.trace.nodes) - 1 if self.trace.nodes else None
        self.trace.nodes.append(MessageNode(parent=parent, message=message, sampled=sampled))

    def _call(self, call: Dict[str, Any]) -> str:
        fn = self.loaded.tools.get(call["name"])
        if fn is None:
            return f"error: no tool named {call['name']!r}"
        try:
            arguments = json.loads(call["arguments"] or "{}")
            return str(run_sync(fn(**arguments)))
        except Exception as exc:  # noqa: BLE001 - a tool error is the model's feedback
            return f"error: {type(exc).__name__}: {exc}"

    def _stop(self, fn: Any) -> bool:
        """A `@vf.stop` hook's verdict on the trace so far (called as verifiers' rollout
        session calls it: by the `vf.Trace` annotation)."""
        import verifiers.v1 as vf
        from verifiers.v1.utils.decorators import invoke

        return run_sync(invoke(fn, {vf.Trace: self.trace, "trace": self.trace})) is True

    def act(self, message: str, tool_calls: Optional[List[Dict[str, Any]]] = None
            ) -> Tuple[List[Dict[str, Any]], Optional[Tuple[float, Dict[str, float]]]]:
        """Play one model turn: its message and tool calls. Returns the tool results (chat
        dicts) and, once the rollout ends, `(reward, {reward name: score})`.

        The rollout ends on a turn without tool calls (the model's answer), when a
        `@vf.stop` returns True, or after `max_turns` turns.
        """
        from verifiers.v1.types import AssistantMessage, ToolCall, ToolMessage

        self.turn += 1
        calls = [_tool_call(i, c) for i, c in enumerate(tool_calls or [])]
        self._append(AssistantMessage(content=message, tool_calls=[
            ToolCall(**c) for c in calls] or None), sampled=True)
        replies = []
        for call in calls:
            content = self._call(call)
            self._append(ToolMessage(tool_call_id=call["id"], content=content, name=call["name"]))
            replies.append({"role": "tool", "tool_call_id": call["id"], "name": call["name"],
                            "content": content})
        stopped = any(self._stop(fn) for fn in self.task.hooks("stop"))
        if calls and not stopped and self.turn < self.max_turns:
            return replies, None
        self.done = True
        self.trace.is_completed = self.trace.ok = True
        run_sync(self.task.score(self.trace))
        scores = {name: r.score for name, r in self.trace.rewards.items() if r is not None}
        return replies, (float(self.trace.reward), scores)


class Server:
    """The worker's state: loaded tasksets by options, live episodes by handle."""

    def __init__(self, package: str) -> None:
        self.package = package
        self.episodes: Dict[int, Episode] = {}
        self.next = 0

    def handle(self, request: Dict[str, Any]) -> Dict[str, Any]:
        """Answer one request (`op`: info, reset, act, answer, close)."""
        op = request["op"]
        loaded = load(self.package, request.get("options") or {})
        if op == "info":
            lo, hi = loaded.reward_range()
            return {"rows": len(loaded.tasks), "lo": lo, "hi": hi, "tools": loaded.tool_specs()}
        if op == "answer":
            task = loaded.tasks[int(request["index"]) % len(loaded.tasks)]
            return {"answer": getattr(task.data, "answer", None)}
        if op == "reset":
            index = int(request["seed"]) % len(loaded.tasks)
            episode = Episode(loaded, index, int(request["max_turns"]))
            self.next += 1
            self.episodes[self.next] = episode
            return {"episode": self.next, "index": index, "prompt": episode.prompt,
                    "tools": loaded.tool_specs()}
        if op == "act":
            episode = self.episodes[int(request["episode"])]
            replies, result = episode.act(request["message"], request.get("tool_calls"))
            if result is not None:
                self.episodes.pop(int(request["episode"]), None)
            return {"replies": replies, "result": result}
        if op == "close":
            self.episodes.pop(int(request["episode"]), None)
            return {}
        raise ValueError(f"unknown op {op!r}")


def serve(package: str) -> None:
    """Answer JSON requests, one a line on stdin, with one JSON line each on stdout
    (`{"ok": ...}` or `{"error": "Type: message"}`); anything else the taskset prints goes to
    stderr."""
    out = sys.stdout
    sys.stdout = sys.stderr
    server = Server(package)
    for line in sys.stdin:
        try:
            reply = {"ok": server.handle(json.loads(line))}
        except Exception as exc:  # noqa: BLE001 - the caller raises it as ValueError
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "serve":
        sys.exit("usage: python verifiers_v1_bridge.py serve PACKAGE")
    serve(sys.argv[2])
