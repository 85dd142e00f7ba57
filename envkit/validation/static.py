"""The static stage of ``envkit validate``: read files, never run the environment.

Every check reads through one :class:`StaticContext`, which parses each file at most once
(openenv.yaml with positions, pyproject.toml, Python modules as ASTs, the Dockerfile) and
records which rules could not be evaluated (``skipped``, e.g. Dockerfile rules when there is
no Dockerfile). Checks collect findings and keep going; none of them asserts, so ``python -O``
changes nothing.

The static stage takes a few tens of milliseconds on a generated environment (the
benchmark target is <= 0.5 s).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from envkit.envdir import EnvDir
from envkit.findings import Finding, Stage, codes_of
from envkit.validation import rules
from envkit.validation.context import StaticContext

__all__ = ["StaticContext", "load_context", "run_static"]


CheckFn = Callable[[StaticContext], Iterable[Finding]]


def load_context(envdir: EnvDir) -> tuple[StaticContext, list[Finding]]:
    """Read the manifest into a context; the manifest's own findings come back as well."""
    ctx = StaticContext(envdir)
    findings = list(rules.manifest.load(ctx))
    return ctx, findings


def run_static(
    envdir: EnvDir, progress: Callable[[str], None] | None = None
) -> tuple[list[Finding], list[str], dict[str, str], float]:
    """Run every static rule (EK1xx, EK2xx, EK3xx, EK6xx) on ``root``.

    Args:
        envdir: the environment directory, read once (the run's :class:`EnvDir`).
        progress: called with one short line per stage step (for stderr).

    Returns:
        ``(findings, codes evaluated, skipped code -> reason, seconds)``.
    """
    t0 = time.perf_counter()
    if progress:
        progress(f"static checks on {envdir.root}")
    ctx, findings = load_context(envdir)
    for module in rules.static_modules():
        findings.extend(module.check(ctx))
    ran = [c for c in codes_of(Stage.STATIC) if c not in ctx.skipped]
    return findings, ran, dict(ctx.skipped), time.perf_counter() - t0
