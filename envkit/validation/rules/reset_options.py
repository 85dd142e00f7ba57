"""EK520 reset options ignored: a reset option the environment declares (a difficulty, a task
id) changes nothing in the episode, so a curriculum built on it trains on one task."""

from __future__ import annotations

from typing import Any

from envkit.envdir.reset_options import documented_reset_options, merge
from envkit.findings import Severity, register
from envkit.probe_plan import PlanError, read_plan
from envkit.validation import fuzz
from envkit.validation.probing import Probes, fmt
from envkit.wire import EnvErrorFrame

OPTION_VALUES = 3  # values tried per documented reset option
REPLAY_STEPS = 8  # steps of each replayed episode compared

RESET_OPTIONS_IGNORED = register(
    "EK520",
    "reset-options-ignored",
    Severity.WARNING,
    summary="A `reset` option the environment declares (a difficulty, a task id) changes "
    "nothing in the episode.",
    what="envkit collects every `reset` option the environment documents: the keyword "
    "parameters of `reset`/`reset_async` in `server/*.py` besides `seed` and "
    "`episode_id`, the keys their body reads from `**kwargs` or from a dict parameter "
    "(`options.get('task_id')`), the entries of their docstrings, `reset(...)` mentions "
    "in the module docstring and `README.md`, and the options of the runtime probe plan "
    "(`validation/runtime.json`); with the values they declare (a `Literal[...]` "
    "annotation, `bool`, the default, values listed in the docs such as "
    '`level="easy"|"hard"`; `0` and `1` for an `int` without). For each option with '
    "two values or more, it resets with the same seed and each value over WebSocket (the "
    "option passed as a keyword, so a `reset_async` that drops it is caught) and replays "
    "the same actions (the oracle's, and the longest other episode of that seed, at most "
    f"{REPLAY_STEPS} steps): the observations, rewards and `done` flags, leaving out a "
    "field that only echoes the value passed, must differ for some value on one of two "
    "seeds. Judged only when envkit started the server from the environment's files. "
    "Heuristic: an option whose effect shows only after those steps, or only for values "
    "envkit did not try, is reported too.",
    why="Curricula and task selection pass options to `reset` (OpenEnv's WebSocket `reset` "
    "passes extra keys to the signature); an option that is accepted and ignored trains "
    "on one task while the trainer believes it controls the mix.",
    example="`def reset(self, seed=None, episode_id=None, difficulty=None, **kwargs)` that "
    "draws from every level whatever `difficulty` says.",
    fix="Use the option when drawing the task (filter the pool by it), or remove it from "
    "the signature and the docs.",
)


def declared_options(probes: Probes) -> dict[str, list[Any]]:
    """The reset options the environment documents, with at least two values each
    (:func:`envkit.envdir.reset_options.documented_reset_options` over the environment envkit
    started), the values of the runtime probe plan's ``reset.options``
    (``validation.execution``) first. A label ``name.key`` is the key of a dict option
    (``options={"key": value}``)."""
    root = probes.engine.env_root
    if probes.engine.server is None or root is None:  # judged only on a server envkit started
        return {}
    out = documented_reset_options(root)
    plan = probes.engine.settings.probe_path
    if plan:
        try:  # a plan that cannot be read is EK121, not this rule
            options = read_plan(root, plan)["reset"].get("options") or {}
        except PlanError:
            options = {}
        for name, value in options.items():
            out[name] = merge([value], out.get(name, []))
    return {k: v[:OPTION_VALUES] for k, v in out.items() if len(v) >= 2}


def option_kwargs(label: str, value: object) -> dict[str, Any]:
    """The ``reset`` keyword arguments that pass ``value`` for ``label`` (``name`` or
    ``name.key``, a key of the dict option ``name``)."""
    name, _, key = label.partition(".")
    return {name: {key: value}} if key else {name: value}


def _sequences(probes: Probes, seed: int | None) -> list[list[dict[str, Any]]]:
    """The action sequences replayed on ``seed``: the oracle's (its win, else its episode,
    else any episode's), and the longest other episode played on that seed; each at most
    :data:`REPLAY_STEPS` actions."""
    episodes = [ep for ep in probes.engine.episodes if ep.actions]
    win = probes.wins.get(seed)
    oracle = (
        win.actions
        if win is not None
        else next(
            (ep.actions for ep in episodes if ep.seed == seed and ep.policy == "oracle"),
            next((ep.actions for ep in episodes), []),
        )
    )
    out = [oracle[:REPLAY_STEPS]] if oracle else []
    others = [ep for ep in episodes if ep.seed == seed and ep.policy != "oracle"]
    if others:
        longest = max(others, key=lambda ep: min(len(ep.actions), REPLAY_STEPS)).actions
        if longest[:REPLAY_STEPS] not in out:
            out.append(longest[:REPLAY_STEPS])
    return out


def _trace(
    probes: Probes, seed: int | None, kwargs: dict[str, Any], actions: list[dict[str, Any]]
) -> list[Any] | None:
    """Reset with ``seed`` and ``kwargs``, then send ``actions`` until ``done``: the reset
    observation and each answer (observation, reward, done; an error frame's code); ``None``
    when the server refuses the option (an error frame on ``reset``)."""
    engine = probes.engine
    s = engine.open()
    try:
        try:
            first = engine.call("`reset`", s.reset, seed=seed, **kwargs)
        except EnvErrorFrame as exc:
            if exc.code == "CAPACITY_REACHED":
                raise
            return None
        seen: list[Any] = [first.observation]
        for action in actions:
            try:
                res = engine.step(s, action)
            except EnvErrorFrame as exc:
                if exc.code == "CAPACITY_REACHED":
                    raise
                seen.append(exc.code)
                continue
            seen.append([res.observation, res.reward, res.done])
            if res.done:
                break
        return seen
    finally:
        s.close()


def leaves(value: object, path: str = "") -> dict[str, str]:
    """Every leaf of a JSON value by its path (``0.hint``, ``1.0.low``) as canonical JSON
    (so that ``1``, ``1.0`` and ``true`` stay three values)."""
    if isinstance(value, dict):
        return {
            k: v for key, item in value.items() for k, v in leaves(item, f"{path}.{key}").items()
        }
    if isinstance(value, list):
        return {
            k: v for i, item in enumerate(value) for k, v in leaves(item, f"{path}.{i}").items()
        }
    return {path: fuzz.json_key(value)}


def differ(traces: list[tuple[object, list[Any]]]) -> bool:
    """Whether the traces of one seed and one action sequence, each with the option value it
    was played with, differ once the fields that only echo the value are left out: a path
    whose leaf equals the value passed in every trace (``index=3`` shown as ``index: 3``)."""
    flat = [(fuzz.json_key(value), leaves(trace)) for value, trace in traces]
    echoes = {
        path
        for path in set.intersection(*(set(f) for _v, f in flat))
        if all(f[path] == v for v, f in flat)
    }
    kept = [{p: x for p, x in f.items() if p not in echoes} for _v, f in flat]
    return any(k != kept[0] for k in kept[1:])


def reset_options_ignored(probes: Probes) -> None:
    """EK520: every reset option the environment documents changes what the agent sees or
    earns over the same actions for at least one seed (same seed, each value; fields that
    only echo the value left out)."""
    engine = probes.engine
    if engine.server is None or engine.env_root is None:
        return  # a server envkit did not start: its sources are not known
    options = declared_options(probes)
    ignored: list[dict[str, Any]] = []
    judged = 0
    for label, values in options.items():
        differs, accepted = False, []
        for seed in engine.settings.seeds[:2]:
            for actions in _sequences(probes, seed) or [[]]:
                traces = []
                for value in values:
                    if not probes.time_left("reset options probe"):
                        return
                    trace = _trace(probes, seed, option_kwargs(label, value), actions)
                    if trace is not None:
                        traces.append((value, trace))
                        accepted.append(value)
                if len(traces) > 1 and differ(traces):
                    differs = True
                    break
            if differs:
                break
        if len(merge([], accepted)) < 2:
            continue  # fewer than two values accepted: nothing to compare
        judged += 1
        if not differs:
            ignored.append({"option": label, "values": values})
    if options and not judged:
        return  # declared, but the server refused every value: nothing compared
    engine.ran(RESET_OPTIONS_IGNORED)  # no option declared: none is ignored
    if ignored:
        e = ignored[0]
        listed = ", ".join(f"`{e['option']}={fmt(v, 30)}`" for v in e["values"])
        engine.add(
            RESET_OPTIONS_IGNORED,
            f"A documented `reset` option should change the episode; with the same seed, "
            f"`reset` with {listed} gave the same observations, rewards and `done` flags to "
            f"the same actions ({len(ignored)} of {judged} documented option(s) changed "
            "nothing, fields echoing the value left out). A curriculum or task selection "
            "built on it trains on one task. This could be wrong when the option changes "
            f"only steps after the first {REPLAY_STEPS} or values this check did not try.",
            options=ignored,
        )
