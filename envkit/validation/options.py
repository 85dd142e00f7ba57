"""The options of one ``envkit validate`` run and its one deadline: the bottom floor of
:mod:`envkit.validation`, so every lane, stage and the runtime player take the same objects.

:class:`RunOptions` is made once at the edge (the CLI, :func:`envkit.validation.validate`,
:func:`envkit.container.lane.validate_docker`) and handed down whole; :class:`Budget` is made
once when the run starts and spent by every stage.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from envkit.envdir.manifest import EnvSpec
from envkit.envdir.project import Timeouts, resolve_timeouts

DEFAULT_BUDGET_S = 600.0  # whole run when --timeout is not given
DEFAULT_SEARCH_BUDGET_S = 30.0  # the exploit search (EK525) when --search-budget is not given


@dataclass(frozen=True)
class RunOptions:
    """The options of one ``envkit validate`` run, shared by every lane.

    Attributes:
        python: interpreter for the server (source lane) and the oracle (``--python``).
        select: rule codes or prefixes to run (replaces the config's ``select``).
        ignore: codes or prefixes to drop (added to the config's ``ignore``).
        episodes: fuzzed episodes in the runtime stage (>= 1).
        seed: seed of the action generator.
        timeout_s: the whole run's budget in seconds (``--timeout``; ``None``: 600).
        startup_timeout_s: seconds to wait for ``GET /health`` (``--startup-timeout``).
        reply_timeout_s: seconds to wait for one answer (``--reply-timeout``).
        progress: called with short progress lines.
        train_path: play the training-path lane (EK7xx) when the environment has a TRL
            adapter (``--no-train-path``: False).
        search_budget_s: seconds of the reward-guided exploit search (EK525;
            ``--search-budget``, >= 0; 0 turns it off; ``None``:
            :data:`DEFAULT_SEARCH_BUDGET_S`). It stops sooner when several generations find
            nothing better.
    """

    python: str | None = None
    select: Sequence[str] | None = None
    ignore: Sequence[str] | None = None
    episodes: int = 5
    seed: int = 0
    timeout_s: float | None = None
    startup_timeout_s: float | None = None
    reply_timeout_s: float | None = None
    progress: Callable[[str], None] | None = None
    train_path: bool = True
    search_budget_s: float | None = None

    def timeouts(self, spec: EnvSpec) -> Timeouts:
        """The run's three time limits for an environment of ``spec``, resolved once by
        :func:`envkit.envdir.project.resolve_timeouts` (the same rules as eval and run).

        Raises:
            UsageError: a given time limit is not > 0.
        """
        return resolve_timeouts(
            spec,
            timeout_s=self.timeout_s,
            startup_timeout_s=self.startup_timeout_s,
            reply_timeout_s=self.reply_timeout_s,
        )


@dataclass(frozen=True)
class Budget:
    """One deadline for a whole ``envkit validate`` run (``--timeout``), spent by every stage.

    Like httpx's ``Timeout``: made once at the start of the run from ``time.monotonic()``
    and handed down, so the build, the start-up wait and the runtime stage share it instead
    of each starting a fresh one.

    Attributes:
        deadline: ``time.monotonic()`` value at which the run's time is up.
        total_s: seconds the run was given (``--timeout``, or :data:`DEFAULT_BUDGET_S`).
    """

    deadline: float
    total_s: float

    @classmethod
    def start(cls, timeout_s: float | None) -> Budget:
        """A budget of ``timeout_s`` seconds (``None``: :data:`DEFAULT_BUDGET_S`) from now."""
        total = timeout_s if timeout_s is not None else DEFAULT_BUDGET_S
        return cls(deadline=time.monotonic() + total, total_s=total)

    def remaining_s(self) -> float:
        """Seconds left, at least 0."""
        return max(0.0, self.deadline - time.monotonic())

    def cap(self, seconds: float) -> float:
        """``seconds``, or what is left of the budget when that is less."""
        return min(seconds, self.remaining_s())
