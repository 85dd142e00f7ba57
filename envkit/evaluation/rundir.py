"""The run directory of ``envkit eval``, and ``envkit eval --resume DIR``: continue a run an
earlier process did not finish.

The run directory's ``run.json`` (:func:`envkit.evaluation.output.run_metadata`) holds the
settings that decide the episodes (policy, model, seeds, counts, step cap, environment path
or URLs); ``trajectories.jsonl`` holds one line per finished episode, appended as each
finished. Resuming keeps every complete line, drops a line cut off by a killed process (its
episode is played again), plays only the missing episodes with the stored settings, and
summarises all of them. Only options that do not change what an episode is may be given
again (:data:`RESUME_MAY_CHANGE`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envkit.errors import UsageError
from envkit.evaluation.options import EvalOptions
from envkit.evaluation.output import RUN_FILE, RUN_KIND, TRAJECTORIES_FILE, read_records
from envkit.evaluation.records import EpisodeRecord, EvalSettings

# run.json "options" keys, as EvalOptions fields: what decides the episodes.
STORED = (
    "policy",
    "model",
    "base_url",
    "api_key_env",
    "episodes",
    "group_size",
    "max_steps",
    "temperature",
    "seed",
    "system_prompt",
    "max_tokens",
    "max_retries",
    "session_retries",
    "concurrency",
    "timeout_s",
    "startup_timeout_s",
    "reply_timeout_s",
)
# Options a resumed run may set anew: how fast and where it runs, never what it plays
# (``--python`` picks the interpreter; ``--format`` the report).
RESUME_MAY_CHANGE = frozenset(
    {
        "concurrency",
        "python",
        "timeout_s",
        "startup_timeout_s",
        "reply_timeout_s",
        "max_retries",
        "session_retries",
        "format",
    }
)


def stored_options(settings: EvalSettings, options: EvalOptions) -> dict[str, Any]:
    """``run.json``'s ``options``: the resolved settings (model, temperature and step cap
    as the run used them, so a different ``$MODEL_NAME`` or manifest at resume time does
    not change the run) and the time limits as given."""
    return {
        "policy": settings.policy,
        "model": settings.model,
        "base_url": settings.base_url,
        "api_key_env": settings.api_key_env,
        "episodes": settings.episodes,
        "group_size": settings.group_size,
        "max_steps": settings.max_steps,
        "temperature": settings.temperature,
        "seed": settings.seed,
        "system_prompt": settings.system_prompt,
        "max_tokens": settings.max_tokens,
        "max_retries": settings.max_retries,
        "session_retries": settings.session_retries,
        "concurrency": settings.concurrency,
        "timeout_s": options.timeout_s,
        "startup_timeout_s": options.startup_timeout_s,
        "reply_timeout_s": options.reply_timeout_s,
    }


def read_run(run_dir: Path) -> dict[str, Any]:
    """The run directory's ``run.json``.

    Raises:
        UsageError: it is missing, unreadable, or not an ``envkit eval`` run.
    """
    path = Path(run_dir) / RUN_FILE
    hint = (
        "Pass the directory an `envkit eval` run wrote (its --out, by default "
        "evals/<name>-<time>); runs of envkit before `--resume` existed have no run.json."
    )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(
            f"{run_dir} is not an eval run directory: no {RUN_FILE}.", hint=hint
        ) from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: cannot read it: {exc}.", hint=hint) from None
    if (
        not isinstance(data, dict)
        or data.get("kind") != RUN_KIND
        or not isinstance(data.get("options"), dict)
        or not isinstance(data.get("environment"), dict)
    ):
        raise UsageError(f"{path} is not the run.json of an `envkit eval` run.", hint=hint)
    return data


def kept_episodes(run_dir: Path) -> tuple[list[EpisodeRecord], int]:
    """The complete episodes of ``run_dir/trajectories.jsonl`` and how many lines were
    dropped (cut off by a killed process, or not an episode record).

    Raises:
        UsageError: the file exists but cannot be read.
    """
    path = Path(run_dir) / TRAJECTORIES_FILE
    try:
        raw, dropped = read_records(path)
    except OSError as exc:
        raise UsageError(
            f"{path}: cannot read it: {exc.strerror or exc}.", hint="Check its permissions."
        ) from None
    kept = []
    for data in raw:
        try:
            kept.append(EpisodeRecord.from_json(data))
        except (KeyError, TypeError, ValueError):
            dropped += 1
    return kept, dropped


def resume_options(
    run_dir: Path, **overrides: object
) -> tuple[EvalOptions, list[EpisodeRecord], int]:
    """The options to continue ``run_dir`` with, the episodes it keeps and how many lines of
    ``trajectories.jsonl`` were dropped. Lost episodes are not kept: they are played again.

    Args:
        run_dir: the run directory.
        **overrides: :data:`RESUME_MAY_CHANGE` options given again (``None`` values are
            ignored) and the callbacks ``on_episode``/``on_note``.

    Raises:
        UsageError: not a run directory, or an override that would change the episodes.
    """
    bad = sorted(k for k, v in overrides.items() if v is not None and k not in _ACCEPTED)
    if bad:
        raise UsageError(
            f"--resume keeps the run's settings; {', '.join(bad)} cannot change.",
            hint="Drop those options, or start a new run without --resume.",
        )
    meta = read_run(run_dir)
    stored = {k: meta["options"][k] for k in STORED if k in meta["options"]}
    env = meta["environment"]
    urls = [u for u in env.get("urls") or () if isinstance(u, str)]
    given = {k: v for k, v in overrides.items() if v is not None and k != "format"}
    options = EvalOptions(
        **{**stored, **given},
        path=env.get("path"),
        url=urls or None,
        out_dir=Path(run_dir),
    )
    kept, dropped = kept_episodes(run_dir)
    planned = {t[0] for t in _tasks(options)}
    return options, [e for e in kept if e.episode in planned and not e.lost], dropped


_ACCEPTED = RESUME_MAY_CHANGE | {"on_episode", "on_note"}


def _tasks(options: EvalOptions) -> list[tuple[int, int, int, int]]:
    """``(episode, group, member, seed)`` of every episode the stored options plan."""
    return [
        (g * options.group_size + m, g, m, options.seed + g)
        for g in range(options.episodes)
        for m in range(options.group_size)
    ]
