"""Every rule of ``envkit validate``: one module per rule family, each holding its rules'
documentation (What / Why / Example / Fix) AND the code that finds them (ruff's model).

Importing this package registers every rule in :data:`envkit.findings.RULES`; it is the one
import that does. :data:`MODULES` lists the modules and the code family each belongs to; a
family's stage (static or runtime) is declared once, in :data:`envkit.findings.FAMILIES`.

The static stage (:mod:`envkit.validation.static`) calls ``check(ctx)`` of every static
module in table order; the runtime stage's order of play is
:func:`envkit.validation.runtime.run_runtime`.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from envkit.envdir.constants import MANIFEST_NAME
from envkit.findings import FAMILIES, Rule, Stage
from envkit.validation.rules import (
    blind_play,
    card_text,
    concurrency,
    container,
    dependencies,
    deploy,
    determinism,
    dockerfile,
    endpoints,
    episodes,
    exploit_search,
    feedback_leaks,
    files,
    grader_hacks,
    integrity,
    layout,
    liveness,
    load,
    manifest,
    mcp,
    project,
    protocol,
    reset_options,
    return_farming,
    reward,
    routes,
    sessions,
    submission,
    training,
    training_signal,
    verifier,
    weak_tests,
)

ALL_LANES = ("source", "docker", "url")


@dataclass(frozen=True)
class RuleModule:
    """One rule module and the code family (first digit) of every rule it registers.

    ``lanes``: where its rules are evaluated: ``source`` (envkit starts the
    server from PATH), ``docker`` (``validate --docker`` runs the image hardened), ``url``
    (``--url``). Every module but the container one is evaluated in all three.
    """

    module: ModuleType
    family: str
    about: str
    lanes: tuple[str, ...] = ALL_LANES

    @property
    def stage(self) -> Stage:
        return FAMILIES[self.family].stage


MODULES: tuple[RuleModule, ...] = (
    RuleModule(manifest, "1", MANIFEST_NAME),
    RuleModule(project, "2", "pyproject.toml: the project table, the OpenEnv dependency, uv.lock"),
    RuleModule(layout, "2", "OpenEnv's file layout, the server entry point, the models"),
    RuleModule(submission, "2", "the README card and the inference script"),
    RuleModule(concurrency, "2", "the session capacity and the state concurrent sessions share"),
    RuleModule(
        dependencies,
        "2",
        "dependency drift: `uv.lock` against pyproject.toml, imports pyproject.toml lacks",
    ),
    RuleModule(dockerfile, "3", "the Dockerfile Spaces build"),
    RuleModule(deploy, "6", "secrets, large files and ignore files before a push"),
    RuleModule(card_text, "2", "a README that still describes the template's task"),
    # files last among the static modules: it reports on the reads the others made
    RuleModule(
        files, "2", "files the static checks must read but will not (too large, not regular)"
    ),
    RuleModule(
        liveness, "4", "the server starts, answers in time, stays up; envkit's checks finish"
    ),
    RuleModule(endpoints, "4", "GET /health, /schema, /metadata"),
    RuleModule(routes, "4", "the route set: simulation or production mode, the Task API"),
    RuleModule(mcp, "4", "POST /mcp answers JSON-RPC 2.0"),
    RuleModule(
        protocol,
        "4",
        "WebSocket frames, state, step before reset, invalid actions, "
        "malformed frames, observation schema",
    ),
    RuleModule(episodes, "4", "fuzzed episodes: actions that raise, episodes that never end"),
    RuleModule(determinism, "4", "seeds fix episodes; different seeds differ"),
    RuleModule(sessions, "4", "concurrent sessions and capacity"),
    RuleModule(reward, "5", "reward range, NaN, constant, oracle, degenerate policies"),
    RuleModule(
        integrity,
        "5",
        "reward farming after done, solution leakage, fresh "
        "instances over HTTP, reward independent of the action",
    ),
    # the reward-design probes (the order they play in: runtime.REWARD_PROBES)
    RuleModule(
        return_farming,
        "5",
        "stalling pays: a longer, losing or repeating episode out-returns a win",
    ),
    RuleModule(
        verifier,
        "5",
        "what the verifier pays besides a right answer: the format, errors, exact strings only",
    ),
    RuleModule(load, "5", "an oversized action; observations and server memory that keep growing"),
    RuleModule(reset_options, "5", "declared `reset` options that change nothing"),
    RuleModule(grader_hacks, "5", "known code-grader hacks that earn more than doing nothing"),
    RuleModule(
        weak_tests, "5", "mutants of the oracle's program that the tests pay like the oracle"
    ),
    RuleModule(feedback_leaks, "5", "feedback after a wrong answer that gives the answer away"),
    RuleModule(
        blind_play,
        "5",
        "question-blind policies, through every action shape, that earn without the task",
    ),
    RuleModule(
        exploit_search,
        "5",
        "a reward-guided search for a fixed action sequence that earns without the task",
    ),
    RuleModule(
        training_signal,
        "5",
        "the training signal at step 0: weak policies earn reward, and it varies within a seed",
    ),
    RuleModule(
        container,
        "4",
        "the image run hardened: reachable, non-root, read-only, "
        "memory, start-up time, network (`validate --docker`)",
        lanes=("docker",),
    ),
    RuleModule(
        training,
        "7",
        "the training path: the TRL adapter built and played as TRL does, client, "
        "inference script and tests import (`--no-train-path` skips it)",
    ),
)


def lane_only_codes(lane: str) -> dict[str, tuple[str, ...]]:
    """Codes of the rules NOT evaluated in ``lane``, with the lanes that evaluate them."""
    return {
        v.code: m.lanes
        for m in MODULES
        if lane not in m.lanes
        for v in vars(m.module).values()
        if isinstance(v, Rule)
    }


def static_modules() -> list[ModuleType]:
    """The static rule modules in the order the static stage runs them."""
    return [m.module for m in MODULES if m.stage is Stage.STATIC]
