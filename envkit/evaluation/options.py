"""What :func:`envkit.evaluation.evaluate` was called with, grouped so that the pieces of a run
(policy factory, worker pool, summary) take one value instead of twenty keywords.

:class:`EvalOptions` holds the arguments as given; what they resolve to against the manifest
and the process environment (model, interpreter, timeouts) is
:class:`envkit.evaluation.records.EvalSettings`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from envkit.envdir.constants import EVAL_MAX_STEPS
from envkit.errors import UsageError
from envkit.evaluation.records import EpisodeRecord

# Eval's episode bound when neither --max-steps nor the manifest's envkit.max_steps is set
# (declared with validate's, a different fact, in envkit.envdir.constants).
EVAL_DEFAULT_MAX_STEPS = EVAL_MAX_STEPS
DEFAULT_BASE_URL = "https://router.huggingface.co/v1"
DEFAULT_MAX_RETRIES = 4
# Plays more of an episode whose session was lost (connection dropped or closed: a replica
# gone, a balancer restarted); each starts again from reset with the same seed.
DEFAULT_SESSION_RETRIES = 2


@dataclass(frozen=True)
class EvalOptions:
    """The arguments of :func:`envkit.evaluation.evaluate`, unresolved (its docstring says
    what each means); ``path`` is the environment directory and ``out_dir`` the output one.
    ``url`` is one base URL or several (replicas: sessions are spread over them)."""

    path: str | os.PathLike[str] | None = None
    url: str | Sequence[str] | None = None
    policy: str = "openai"
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    episodes: int = 8
    group_size: int = 1
    concurrency: int = 1
    max_steps: int | None = None
    temperature: float | None = None
    seed: int = 0
    out_dir: str | os.PathLike[str] | None = None
    system_prompt: str | None = None
    max_tokens: int | None = None
    max_retries: int = DEFAULT_MAX_RETRIES
    session_retries: int = DEFAULT_SESSION_RETRIES
    python: str | None = None
    timeout_s: float | None = None
    startup_timeout_s: float | None = None
    reply_timeout_s: float | None = None
    on_episode: Callable[[EpisodeRecord, int, int], None] | None = None
    on_note: Callable[[str], None] | None = None

    @property
    def urls(self) -> list[str]:
        """``url`` as a list: empty when no URL was given (envkit starts the server)."""
        if self.url is None:
            return []
        return [self.url] if isinstance(self.url, str) else [u for u in self.url if u]

    def check_counts(self) -> None:
        """Check the counts before anything is loaded or started.

        Raises:
            UsageError: ``episodes``, ``group_size`` or ``concurrency`` is not an integer
                >= 1, ``seed``, ``max_retries`` or ``session_retries`` not an integer >= 0, or
                ``max_steps`` < 1.
        """
        for name, value, lo in (
            ("--episodes", self.episodes, 1),
            ("--group-size", self.group_size, 1),
            ("--concurrency", self.concurrency, 1),
            ("--seed", self.seed, 0),
            ("--max-retries", self.max_retries, 0),
            ("--session-retries", self.session_retries, 0),
        ):
            if not isinstance(value, int) or value < lo:
                raise UsageError(
                    f"{name} must be an integer >= {lo}, got {value!r}.",
                    hint=f"Pass {name} {lo} or more.",
                )
        if self.max_steps is not None and self.max_steps < 1:
            raise UsageError(
                f"--max-steps must be >= 1, got {self.max_steps}.", hint="Pass 1 or more."
            )


@dataclass
class Notes:
    """Things the user should know about a run (capacity cap, missing key, skipped plot), in
    the order they arose.

    Attributes:
        items: the notes; the same list ends up as ``summary.json``'s ``notes`` and
            :attr:`EvalResult.notes`.
        on_note: called with each note added with ``announce=True``, as it arises.
    """

    on_note: Callable[[str], None] | None = None
    items: list[str] = field(default_factory=list)

    def add(self, message: str, *, announce: bool = True) -> None:
        """Keep ``message``; hand it to ``on_note`` too unless ``announce`` is false."""
        self.items.append(message)
        if announce and self.on_note is not None:
            self.on_note(message)
