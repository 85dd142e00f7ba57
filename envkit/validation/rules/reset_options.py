"""EK520 reset options ignored: a reset option the environment declares (a difficulty, a task
id) changes nothing in the episode, so a curriculum built on it trains on one task."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envkit.envdir.reset_options import source_reset_options
from envkit.findings import Severity, register
from envkit.validation import fuzz
from envkit.validation.probing import Probes, fmt
from envkit.wire import EnvErrorFrame

RESET_OPTIONS_IGNORED = register(
    "EK520",
    "reset-options-ignored",
    Severity.WARNING,
    summary="A `reset` option the environment declares (a difficulty, a task id) changes "
    "nothing in the episode.",
    what="envkit reads the keyword parameters of `reset` in the environment's `server/*.py` "
    "besides `seed` and `episode_id`, with the values they declare (a `Literal[...]` "
    "annotation, `bool`, quoted values on the parameter's docstring line, the default), "
    "and the options of the runtime probe plan (`validation/runtime.json`). For each "
    "option with two values or more, it resets with the same seed and each value, and "
    "sends the same first action: the reset observations and the answers must differ "
    "for some value on one of two seeds. Judged only when envkit started the server "
    "from the environment's files. Heuristic: an option that changes only later steps "
    "(a step limit) or only values envkit did not try is reported too.",
    why="Curricula and task selection pass options to `reset` (OpenEnv's WebSocket `reset` "
    "passes extra keys to the signature); an option that is accepted and ignored trains "
    "on one task while the trainer believes it controls the mix.",
    example="`def reset(self, seed=None, episode_id=None, difficulty=None, **kwargs)` that "
    "draws from every level whatever `difficulty` says.",
    fix="Use the option when drawing the task (filter the pool by it), or remove it from "
    "the signature and the docs.",
)

OPTION_VALUES = 3  # values tried per declared reset option


def declared_options(probes: Probes) -> dict[str, list[Any]]:
    """The reset options the environment declares, with at least two values each: from the
    ``reset`` signatures in ``server/*.py`` of the environment envkit started, and the
    values of the runtime probe plan's ``reset.options`` (``validation.execution``)."""
    root = getattr(probes.engine.server, "root", None)
    if root is None:
        return {}
    root = Path(root)
    out = source_reset_options(root)
    plan = probes.engine.settings.probe_path
    if plan:
        try:
            doc = json.loads((root / plan).read_text(encoding="utf-8"))
            options = (doc.get("reset") or {}).get("options") or {}
        except (OSError, ValueError, AttributeError):
            options = {}
        for name, value in options.items() if isinstance(options, dict) else ():
            kept = out.setdefault(name, [])
            if value not in kept:
                kept.insert(0, value)
    return {k: v[:OPTION_VALUES] for k, v in out.items() if len(v) >= 2}


def _first_action(probes: Probes, seed: int | None) -> dict[str, Any] | None:
    win = probes.wins.get(seed)
    if win is not None:
        return win.actions[0]
    return next((ep.actions[0] for ep in probes.engine.episodes if ep.actions), None)


def _with_option(probes: Probes, seed: int | None, option: dict[str, Any]) -> str | None:
    """Reset with ``seed`` and ``option`` and send one action: what the agent sees and earns,
    as JSON; ``None`` when the server refuses the option (an error frame)."""
    engine = probes.engine
    s = engine.open()
    try:
        try:
            first = engine.call("`reset`", s.reset, seed=seed, **option)
        except EnvErrorFrame as exc:
            if exc.code == "CAPACITY_REACHED":
                raise
            return None
        seen: list[Any] = [first.observation]
        action = _first_action(probes, seed)
        if action is not None:
            try:
                res = engine.step(s, action)
                seen.append([res.observation, res.reward, res.done])
            except EnvErrorFrame as exc:
                seen.append(exc.code)
        return fuzz.json_key(seen)
    finally:
        s.close()


def reset_options_ignored(probes: Probes) -> None:
    """EK520: every reset option the environment declares changes the reset observation or
    the first step's answer for at least one seed (same seed, same action, each declared
    value)."""
    engine = probes.engine
    if getattr(engine.server, "root", None) is None:
        return  # a server envkit did not start: its sources are not known
    options = declared_options(probes)
    ignored: list[dict[str, Any]] = []
    judged = 0
    for name, values in options.items():
        differs, accepted = False, []
        for seed in engine.settings.seeds[:2]:
            if not probes.time_left("reset options probe"):
                return
            seen = {}
            for value in values:
                key = _with_option(probes, seed, {name: value})
                if key is not None:
                    seen[key] = value
                    accepted.append(value)
            if len(seen) > 1:
                differs = True
                break
        accepted = list(dict.fromkeys(fuzz.json_key(v) for v in accepted))
        if len(accepted) < 2:
            continue  # fewer than two values accepted: nothing to compare
        judged += 1
        if not differs:
            ignored.append({"option": name, "values": values})
    if options and not judged:
        return  # declared, but the server refused every value: nothing compared
    engine.ran(RESET_OPTIONS_IGNORED)  # no option declared: none is ignored
    if ignored:
        e = ignored[0]
        listed = ", ".join(f"`{e['option']}={fmt(v, 30)}`" for v in e["values"])
        engine.add(
            RESET_OPTIONS_IGNORED,
            f"A declared `reset` option should change the episode; with the same seed, "
            f"`reset` with {listed} gave the same observation and the same answer to the "
            f"same first action ({len(ignored)} of {judged} declared option(s) changed "
            "nothing). A curriculum or task selection built on it trains on one task. This "
            "could be wrong when the option changes only later steps (a step limit) or "
            "values this check did not try.",
            options=ignored,
        )
