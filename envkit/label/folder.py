"""Reading an ``envkit eval`` output folder for labeling.

The folder holds ``trajectories.jsonl`` (one JSON object per finished episode, as written by
``envkit.evaluation.output.trajectories_bytes``) and ``summary.json``. Each episode record has
``episode`` (run-wide index, the trajectory id), ``group``, ``member``, ``seed``, ``reset``
(``{"observation", "reward", "done", "latency_s"}`` or ``None`` when reset failed), ``steps``
(``{"step", "action", "observation", "reward", "done", "reply"?, "error"?, "parse_error"?,
"error_code"?, ...}``), ``error``, ``return`` (sum of step rewards), ``success``, ``done``,
``truncated``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit.errors import UsageError, UserError
from envkit.evaluation.prompts import observation_message

TRAJECTORIES = "trajectories.jsonl"
SUMMARY = "summary.json"
LABELS_DB = "labels.sqlite"
_REQUIRED = ("episode", "seed", "steps", "return")
# Keys that vary between otherwise identical rollouts (timings, token counts).
_VOLATILE = {"latency_s", "policy_latency_s", "duration_s", "usage"}


class EvalFolderError(UserError):
    """An eval folder that cannot be labeled: missing, malformed (located: ``file:line``), or
    without a group of two or more rollouts of the same seed."""


@dataclass(frozen=True)
class Trajectory:
    """One rollout (one line of ``trajectories.jsonl``).

    Attributes:
        id: the ``episode`` index, unique in the folder.
        seed: the reset seed; trajectories of one seed form a group.
        group: the ``group`` index (``None`` in records without it).
        member: position in its group.
        ret: the episode return (sum of step rewards).
        success: a step reached the environment's maximum reward.
        record: the whole JSON record.
        fingerprint: sha256 (hex, 16 chars) of the record without timings, so two rollouts
            that did exactly the same thing have the same fingerprint.
    """

    id: int
    seed: int
    group: int | None
    member: int | None
    ret: float
    success: bool
    record: dict[str, Any] = field(repr=False, compare=False)
    fingerprint: str = ""

    @property
    def steps(self) -> list[dict[str, Any]]:
        return list(self.record.get("steps") or [])

    @property
    def reset_observation(self) -> object:
        """The observation ``reset`` returned (JSON: usually a dict), ``None`` if not recorded."""
        reset = self.record.get("reset") or {}
        return reset.get("observation")

    def prompt_messages(self, system: str | None = None) -> list[dict[str, str]]:
        """The conversation before the first action: the system message (``system``: the
        ``summary.json`` ``settings.system_prompt_text`` of an ``openai`` run, when recorded)
        then the reset observation as the user message the ``openai`` policy sends
        (``envkit.evaluation.prompts``)."""
        obs = self.reset_observation
        head = [{"role": "system", "content": system}] if system else []
        return head + [
            {
                "role": "user",
                "content": observation_message(
                    obs if isinstance(obs, dict) else {"observation": obs}, reward=None, step=0
                ),
            }
        ]

    def completion_messages(self) -> list[dict[str, str]]:
        """The rollout after the prompt as chat messages: one ``assistant`` message per step
        (the model's reply, or the action as JSON for non-model policies) and, between two
        steps, the ``user`` message the policy received (next observation, reward, or why
        the reply was not accepted). Ends with the last ``assistant`` message, as TRL's
        preference format expects of ``chosen``/``rejected``."""
        steps = self.steps
        obs = self.reset_observation if isinstance(self.reset_observation, dict) else {}
        reward: Any = None
        out: list[dict[str, str]] = []
        for i, step in enumerate(steps):
            out.append({"role": "assistant", "content": action_text(step)})
            if i == len(steps) - 1:
                break
            error = None
            if step.get("parse_error") or step.get("error_code") == "VALIDATION_ERROR":
                error = step.get("error") or "invalid action"
                if step.get("error_code") == "VALIDATION_ERROR":
                    error = f"the environment rejected it: {error}"
            else:
                obs = step.get("observation") if isinstance(step.get("observation"), dict) else obs
                reward = step.get("reward")
            out.append(
                {
                    "role": "user",
                    "content": observation_message(
                        obs or {}, reward=reward, step=int(step.get("step", i + 1)), error=error
                    ),
                }
            )
        return out


def action_text(step: dict[str, Any]) -> str:
    """What the policy said at ``step``: the model's reply when recorded, else the action as
    JSON (``random``/``oracle`` policies), else ``""``."""
    reply = step.get("reply")
    if isinstance(reply, str):
        return reply
    action = step.get("action")
    return "" if action is None else json.dumps(action, ensure_ascii=False, sort_keys=True)


def _strip(value: object) -> object:
    """``value`` without the volatile keys (at any depth) the fingerprint must not see."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def fingerprint(record: dict[str, Any]) -> str:
    """A short content hash of a trajectory without its ids and timings."""
    core = {k: v for k, v in record.items() if k not in ("episode", "group", "member")}
    blob = json.dumps(_strip(core), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


@dataclass
class EvalFolder:
    """An eval output folder, read for labeling.

    Attributes:
        path: the folder (absolute).
        trajectories: every episode, ordered by id.
        summary: ``summary.json`` (``{}`` when absent).
    """

    path: Path
    trajectories: list[Trajectory]
    summary: dict[str, Any]

    @property
    def db_path(self) -> Path:
        """Where the labels live: ``<folder>/labels.sqlite``."""
        return self.path / LABELS_DB

    def by_id(self) -> dict[int, Trajectory]:
        return {t.id: t for t in self.trajectories}

    def groups(self) -> dict[int, list[Trajectory]]:
        """Trajectories by seed, each list ordered by id."""
        out: dict[int, list[Trajectory]] = {}
        for t in self.trajectories:
            out.setdefault(t.seed, []).append(t)
        return out

    @property
    def title(self) -> str:
        env = (self.summary.get("environment") or {}).get("name") or self.path.name
        who = self.summary.get("model") or self.summary.get("policy") or ""
        return f"{env} · {who}" if who else str(env)


def find_eval_dir(path: str | os.PathLike[str] | None) -> Path:
    """The folder to label: ``path``; or, when ``None``, ``.`` if it holds
    ``trajectories.jsonl``, else the newest ``evals/*/`` that does (``envkit eval``'s
    default output).

    Raises:
        UsageError: no such folder (exit 2).
    """
    if path is not None:
        p = Path(path).expanduser()
        if not p.is_dir():
            raise UsageError(
                f"{p}: no such eval folder.",
                hint="Pass the folder `envkit eval` wrote (it holds "
                "trajectories.jsonl), e.g. `envkit label evals/my-env-20250101-"
                "120000`.",
            )
        return p.resolve()
    here = Path.cwd()
    if (here / TRAJECTORIES).is_file():
        return here.resolve()
    found = sorted(
        (p.parent for p in here.glob(f"evals/*/{TRAJECTORIES}")),
        key=lambda d: (d / TRAJECTORIES).stat().st_mtime,
    )
    if found:
        return found[-1].resolve()
    raise UsageError(
        "No eval folder given and none found (no ./trajectories.jsonl, no "
        "evals/*/trajectories.jsonl).",
        hint="Run `envkit eval -g 2` first, or pass its output folder: `envkit label EVAL_DIR`.",
    )


def load_eval(path: str | os.PathLike[str], *, require_pairs: bool = True) -> EvalFolder:
    """Read ``trajectories.jsonl`` (and ``summary.json`` when present) from ``path``.

    Args:
        path: an ``envkit eval`` output folder.
        require_pairs: raise when no seed has two or more rollouts (nothing to compare).

    Returns:
        An :class:`EvalFolder`.

    Raises:
        UsageError: ``path`` is not a directory (exit 2).
        EvalFolderError: ``trajectories.jsonl`` missing, not UTF-8, a line that is not a JSON
            object or lacks ``episode``/``seed``/``steps``/``return`` (message names
            ``file:line``), a duplicated episode id, or no group of size >= 2.
    """
    root = find_eval_dir(path)
    traj_path = root / TRAJECTORIES
    trajectories = _read_trajectories(root, traj_path)
    folder = EvalFolder(path=root, trajectories=trajectories, summary=_read_summary(root))
    if require_pairs and not any(len(g) >= 2 for g in folder.groups().values()):
        raise EvalFolderError(
            f"{traj_path} has {len(trajectories)} episode(s) but no seed with two or more "
            "rollouts: there is nothing to compare.",
            hint="Make groups with `envkit eval -g 2` (or more: --group-size N plays each "
            "seed N times), then label that folder.",
        )
    return folder


def _read_trajectories(root: Path, traj_path: Path) -> list[Trajectory]:
    """Every episode of ``traj_path``, ordered by id.

    Raises:
        EvalFolderError: the file is missing or unreadable, a line is not an episode record
            (:func:`_parse_record`), or an episode id appears twice.
    """
    if not traj_path.is_file():
        raise EvalFolderError(
            f"{root} has no {TRAJECTORIES}.",
            hint="Pass a folder written by `envkit eval` (e.g. `envkit eval -g 2 -o evals/run1`).",
        )
    try:
        raw = traj_path.read_bytes()
    except OSError as exc:
        raise EvalFolderError(
            f"Cannot read {traj_path}: {exc.strerror or exc}.", hint="Check the file's permissions."
        ) from None
    trajectories: list[Trajectory] = []
    seen: dict[int, int] = {}  # episode id -> line it was first seen on
    lines = raw.split(b"\n")
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{traj_path}:{lineno}"
        # The last line without a newline after it was cut off while being written.
        last_cut = lineno == len(lines) and not raw.endswith(b"\n")
        rec = _parse_record(line, where, last_cut)
        if rec["episode"] in seen:
            raise EvalFolderError(
                f"{where}: episode {rec['episode']} appears twice (first on "
                f"line {seen[rec['episode']]}).",
                hint="Keep one run per folder: `envkit eval -o NEW_DIR`.",
            )
        seen[rec["episode"]] = lineno
        trajectories.append(
            Trajectory(
                id=rec["episode"],
                seed=rec["seed"],
                group=rec.get("group"),
                member=rec.get("member"),
                ret=float(rec["return"]),
                success=bool(rec.get("success")),
                record=rec,
                fingerprint=fingerprint(rec),
            )
        )
    trajectories.sort(key=lambda t: t.id)
    return trajectories


def _parse_record(line: bytes, where: str, truncated: bool) -> dict[str, Any]:
    """One line of ``trajectories.jsonl`` as an episode record.

    Args:
        line: the raw line, without its newline.
        where: ``file:line`` for messages.
        truncated: the line is the file's last and has no newline (a cut-off write).

    Raises:
        EvalFolderError: not UTF-8, not a JSON object, or a required key missing or of the
            wrong type.
    """
    try:
        rec = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        raise EvalFolderError(
            f"{where}: not UTF-8 text.",
            hint="Re-run `envkit eval`; the file was not written by it.",
        ) from None
    except json.JSONDecodeError as exc:
        why = "the line is cut off (the file is truncated)" if truncated else exc.msg
        raise EvalFolderError(
            f"{where}:{exc.colno}: not a JSON object: {why}.",
            hint="Delete or repair that line (each line is one episode), or re-run `envkit eval`.",
        ) from None
    if not isinstance(rec, dict):
        raise EvalFolderError(
            f"{where}: expected a JSON object (one episode), got {type(rec).__name__}.",
            hint="Delete or repair that line, or re-run `envkit eval`.",
        )
    missing = [k for k in _REQUIRED if k not in rec]
    bad = None if missing else _wrong_type_key(rec)
    if missing or bad:
        what = (
            f"lacks {', '.join(f'`{k}`' for k in missing)}"
            if missing
            else f"has a `{bad}` of the wrong type ({type(rec[bad]).__name__})"
        )
        raise EvalFolderError(
            f"{where}: the episode record {what}.",
            hint="This file was not written by `envkit eval` or was edited; re-run `envkit eval`.",
        )
    return rec


def _wrong_type_key(rec: dict[str, Any]) -> str | None:
    """The first required key whose value has the wrong type (``episode``/``seed`` int,
    ``steps`` list, ``return`` a number but not a bool), or ``None``."""
    checks = (
        ("episode", isinstance(rec["episode"], int)),
        ("seed", isinstance(rec["seed"], int)),
        ("steps", isinstance(rec["steps"], list)),
        (
            "return",
            isinstance(rec["return"], (int, float)) and not isinstance(rec["return"], bool),
        ),
    )
    return next((k for k, ok in checks if not ok), None)


def _read_summary(root: Path) -> dict[str, Any]:
    """``summary.json`` of ``root``; ``{}`` when absent or not a JSON object.

    Raises:
        EvalFolderError: the file exists but is unreadable or not JSON (``file:line``).
    """
    sum_path = root / SUMMARY
    if not sum_path.is_file():
        return {}
    try:
        loaded = json.loads(sum_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        raise EvalFolderError(
            f"{sum_path}{f':{line}' if line else ''}: not valid JSON.",
            hint="Re-run `envkit eval`, or delete summary.json (labels "
            "need only trajectories.jsonl).",
        ) from None
    return loaded if isinstance(loaded, dict) else {}
