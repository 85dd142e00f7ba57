"""EK4xx determinism: a seed fixes the episode, and different seeds give different episodes.

Every seed of ``seeds`` is played twice with the same actions on fresh sessions (Gymnasium's
determinism check), comparing the observations, the rewards and ``state`` (after ``reset``
and at the end: a secret drawn without the seed may show only there). Fields whose
value is fresh on every reply of a single run and differs at every position between the two
runs (timings, request ids) are *volatile*: they are left out here and in the sessions check;
so are float fields named like timings (``execution_time``), which may repeat within a run,
and measured durations inside text (pytest's ``1 passed in 0.46s``).
The deterministic episodes are the reference the sessions check compares interleaved play
with.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from envkit.envdir.reset_options import source_takes_seed
from envkit.findings import Rule, Severity, register
from envkit.probe_plan import PlanError, read_plan
from envkit.validation import fuzz, twin
from envkit.validation.engine import ActionPool, Episode, Policy, ServerPlayer
from envkit.validation.rules.episodes import visible_json
from envkit.wire import EnvErrorFrame

#: State fields that are not the episode's content (EK415/EK416 check them).
STATE_BOOKKEEPING = ("episode_id", "step_count")

RESET_NONDETERMINISTIC = register(
    "EK411",
    "reset-not-deterministic",
    Severity.ERROR,
    rfc008="runtime.episode_determinism",
    summary="The same seed and actions give different observations or `state`.",
    what="For each seed in `envkit.seeds`, envkit plays the same actions twice after "
    "`reset(seed=s)` on fresh sessions, and once more on the first session after its "
    "episode (TRL resets the same environment for the next rollout), and deep-compares "
    "the observations and `state` (after `reset` and after the last step), reporting the "
    "first differing field; "
    "when the two agree, it resets 3 more fresh sessions with the seed (a coin flip "
    "per reset passes two plays half the time). Fields fresh on every reply of a "
    "single run (timings, request ids) and float fields named like timings (`*_time`, "
    "`*_seconds`, `*_ms`, `elapsed*`, `duration*`, `latency*`, `*timestamp`) are left out. "
    "RFC 008: `runtime.episode_determinism`.",
    why="Reproducible evaluation and debugging need a seed to fix the episode "
    "(Gymnasium's determinism check).",
    example="`reset` draws its task with the global `random` module instead of "
    "`random.Random(seed)`; a secret code drawn unseeded that only `state` shows.",
    fix="Derive every random choice in `reset` from `random.Random(seed)` (or a seeded "
    "numpy Generator) stored on the instance.",
    classes=("BGW-127",),
)

REWARD_NONDETERMINISTIC = register(
    "EK412",
    "rewards-not-deterministic",
    Severity.ERROR,
    rfc008="semantic.verifier_determinism",
    summary="The same seed and the same actions give different rewards.",
    what="envkit replays one action sequence twice after `reset(seed=s)` and compares the "
    "step rewards one by one: the same trajectory must be scored the same way. The "
    "oracle's first episode is replayed too on one session until a reward differs (a bonus "
    "paid on a win, for speed or a streak, or a sampling judge's vote is where rewards "
    "drift): 16 times when it is 3 steps or shorter, 5 times when it is 10 steps or longer "
    "(48 steps in all between). The wrong answers of EK524's corrupted-oracle policies "
    "are sent twice on the first seed the oracle won (a grader that samples its tests "
    "without the seed pays a wrong program differently, the right one never); EK526's "
    "first 4 mutants are sent again on that seed, and one it saw paid is sent twice on a "
    "second seed, as it is and with a comment line added (a grader that reuses a verdict, "
    "keyed by the source, pays them differently). RFC "
    "008: `semantic.verifier_determinism` (observations and `state` are EK411's "
    "`runtime.episode_determinism`).",
    why="A reward that changes for the same trajectory is noise in the learning signal and "
    "makes runs impossible to reproduce.",
    example="A rubric that samples an LLM judge at temperature 1, or uses the global RNG.",
    fix="Seed every random draw from the episode's seed; make judges deterministic "
    "(temperature 0, cached).",
    limits="A reward that differs only between server processes (weights from `hash(str)`, "
    "salted per process) is not seen: envkit replays inside one server process. A random "
    "choice that shows in the observation first is reported as EK411.",
    reported_as=("EK411",),
    classes=("BGW-127", "rl-envdoctor:nondeterministic-reward"),
)

SEED_IGNORED = register(
    "EK413",
    "seed-ignored",
    Severity.WARNING,
    rfc008="runtime.seed_control",
    summary="The environment has randomness, but the seed does not select the episode.",
    what="envkit resets with every seed in `envkit.seeds` and plays the same actions. When "
    "every observation, reward, `done` and `state` is identical across the seeds, one "
    "session plays four whole episodes with the same actions (the first seed twice, the "
    "second seed, then `reset()` without a seed) and compares them step by step with the "
    "first: if any differs, the environment draws something the seed does not control "
    "(an opponent's move in `step` as well as the task in `reset`). When those agree too "
    "and envkit started the server, a second server process of the same launch form "
    "replays the first seed's episode once: a difference there is randomness drawn once "
    "per process (a module-global list shuffled at import). Identical everywhere means no "
    "randomness at all, which is no defect. When episodes under one seed differ and the "
    "`reset` methods of `server/*.py` declare neither `seed` nor `**kwargs`, the dropped "
    "seed is reported here too (beside EK411/EK412).",
    why="OpenEnv silently drops `reset` arguments the method does not declare "
    "(huggingface/OpenEnv#1102): `reset(seed=3)` then trains on one episode forever. In "
    "GRPO every generation of a group must face the same episode; when the seed does not "
    "fix it, the group's advantages compare different episodes and are noise.",
    example="`def reset(self):` with `self._rng = random.Random(1234)` created in "
    "`__init__`: every new session starts with the same task, whatever the seed.",
    fix="Declare `reset(self, seed=None, episode_id=None, **kwargs)` and draw the episode "
    "from `random.Random(seed)`.",
    limits="When a seed `reset` accepts leaves the episode to an unseeded source (a generator "
    "made at construction, another library's global seed), episodes under one seed differ: "
    "that is reported as EK411/EK412, not as EK413 (at runtime it is the unseeded draw "
    "EK411 describes). A `reset` without a `seed` parameter is EK413's only when envkit "
    "has the source (`server/*.py`); over `--url` alone it is EK411/EK412 too.",
    reported_as=("EK411", "EK412"),
)


PLAN_REPLAY = register(
    "EK431",
    "probe-plan-replay",
    Severity.ERROR,
    rfc008="semantic.replayability",
    summary="The declared probe plan (`validation.execution.probe_path`) does not replay: an "
    "action is refused, or two replays differ.",
    what="envkit plays OpenEnv's runtime probe plan (`validation/runtime.json`: a `reset` "
    "with its seed, episode_id and options, then its actions in order until `done`) "
    "twice, each on a fresh session, and compares the two trajectories (observations, "
    "rewards, `state` at the end; timing fields left out). Every action must be "
    "accepted (no error frame) and the two replays must agree. RFC 008: "
    "`semantic.replayability`; `openenv validate --level runtime` plays the same plan.",
    why="The plan is the trajectory OpenEnv's runtime level and reviewers replay: a plan "
    "the environment no longer accepts (an action field renamed) fails there, and one "
    "that does not replay cannot reproduce a reward.",
    example="`validation/runtime.json` recorded before the action field `answer` was renamed "
    "`guess`: its first action answers VALIDATION_ERROR.",
    fix="Re-record the plan (`envkit migrate` plays the oracle and writes it) after changing "
    "the action or the task, and make the episode depend only on the seed and the "
    "actions.",
)


def _fmt(value: Any) -> str:
    return visible_json(value, 80)


_MISSING = "<missing>"


def flatten(value: Any, path: str = "", out: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every leaf of a JSON value by dotted path (``board[2].cell``); empty containers are
    leaves."""
    out = {} if out is None else out
    if isinstance(value, dict) and value:
        for k, v in value.items():
            flatten(v, f"{path}.{k}" if path else str(k), out)
    elif isinstance(value, list) and value:
        for i, v in enumerate(value):
            flatten(v, f"{path}[{i}]", out)
    else:
        out[path or "(value)"] = value
    return out


def _state_view(state: Any) -> dict[str, Any]:
    return (
        {k: v for k, v in (state or {}).items() if k not in STATE_BOOKKEEPING}
        if isinstance(state, dict)
        else {}
    )


def _sequences(ep: Episode) -> dict[str, list[str]]:
    """Path -> the values (JSON keys) it takes along one episode: every observation at
    ``obs:PATH``, ``state`` (after reset, at the end) at ``state:PATH``."""
    out: dict[str, list[str]] = {}
    obs = [flatten(o) for o in ep.observations()]
    for path in set().union(*obs):
        out[f"obs:{path}"] = [fuzz.json_key(o.get(path, _MISSING)) for o in obs]
    states = [flatten(_state_view(ep.states[k])) for k in ("reset", "end") if k in ep.states]
    for path in set().union(*states) if states else ():
        out[f"state:{path}"] = [fuzz.json_key(st.get(path, _MISSING)) for st in states]
    return out


#: Field names of measured durations and clock readings (``execution_time``,
#: ``total_execution_time``, ``elapsed_ms``, ``latency``, ``timestamp``): their values differ
#: between two runs of one seed by the machine's timing, not by the episode.
TIMING_NAME = re.compile(
    r"(_time|_seconds|_secs|_ms|timestamp)$|^(elapsed|duration|latency)", re.IGNORECASE
)


def _is_float_timing(path: str, xa: list[str], xb: list[str]) -> bool:
    """A timing-named field (:data:`TIMING_NAME`, on the last name of ``path``) whose
    values differ between the two runs only where both are numbers, at least one a
    non-integer float (repl_env's ``metadata.execution_time``, docs/realworld.md)."""
    name = re.sub(r"\[\d+\]$", "", path.rsplit(".", 1)[-1].split(":", 1)[-1])
    if not TIMING_NAME.search(name):
        return False
    fractional = False
    for x, y in zip(xa, xb):
        if x == y:
            continue
        va, vb = json.loads(x), json.loads(y)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (va, vb)):
            return False
        fractional = fractional or any(
            isinstance(v, float) and not v.is_integer() for v in (va, vb)
        )
    return fractional


#: A measured duration inside text: a fractional number with a time unit (pytest's
#: ``8 passed in 0.46s``, unittest's ``Ran 8 tests in 0.001s``, ``took 12.5 ms``). Integers
#: are left alone: a seeded ``wait 3s`` is the episode's content.
DURATION_IN_TEXT = re.compile(
    r"(?<![\w.])\d+\.\d+\s?(?:s|ms|us|µs|ns|sec|secs|seconds|milliseconds)\b"
)


def _same_but_durations(a: Any, b: Any) -> bool:
    """Two strings that differ only in the measured durations they quote."""
    return (
        isinstance(a, str)
        and isinstance(b, str)
        and DURATION_IN_TEXT.search(a) is not None
        and DURATION_IN_TEXT.sub("<t>", a) == DURATION_IN_TEXT.sub("<t>", b)
    )


def volatile_paths(a: Episode, b: Episode) -> set[str]:
    """Paths (``obs:PATH``, ``state:PATH``) fresh on every reply of each run that also
    differ at every position between the two runs of one seed: timings, request ids. A
    timing-named float field (:func:`_is_float_timing`) is volatile even when it repeats
    within a run (0.0 after ``reset`` and at the end, a measured duration in between)."""
    sa, sb = _sequences(a), _sequences(b)
    out: set[str] = set()
    for path in set(sa) & set(sb):
        xa, xb = sa[path], sb[path]
        if len(xa) != len(xb):
            continue
        if _is_float_timing(path, xa, xb):
            out.add(path)
            continue
        if len(xa) < 2:
            continue
        if (
            len(set(xa)) == len(xa)
            and len(set(xb)) == len(xb)
            and all(x != y for x, y in zip(xa, xb))
        ):
            out.add(path)
    return out


@dataclass(frozen=True)
class Difference:
    """Where two plays of one seed first differ.

    Attributes:
        where: ``reset`` (the reset observation), ``step N`` (an observation), ``reward N``,
            ``state after reset``, ``state at the end``, ``length``.
        path: the field, e.g. ``target``, ``state.code_digest``.
        first, second: the two values.
    """

    where: str
    path: str
    first: Any
    second: Any


def _first_diff(
    a: dict[str, Any], b: dict[str, Any], skip: set[str], prefix: str
) -> tuple[str, Any, Any] | None:
    fa, fb = flatten(a), flatten(b)
    for path in sorted(set(fa) | set(fb)):
        if f"{prefix}:{path}" in skip:
            continue
        va, vb = fa.get(path, _MISSING), fb.get(path, _MISSING)
        if fuzz.first_difference(va, vb) is not None and not _same_but_durations(va, vb):
            return path, va, vb
    return None


def compare(
    a: Episode, b: Episode, volatile: set[str] = frozenset(), *, state: bool = True
) -> list[Difference]:
    """The first difference of each kind between two plays (observations then rewards then
    state), volatile paths left out."""
    out: list[Difference] = []
    obs_a, obs_b = a.observations(), b.observations()
    for i, (x, y) in enumerate(zip(obs_a, obs_b)):
        d = _first_diff(x, y, volatile, "obs")
        if d:
            out.append(Difference("reset" if i == 0 else f"step {i}", *d))
            break
    for i, (x, y) in enumerate(zip(a.rewards, b.rewards)):
        if fuzz.first_difference(x, y) is not None:
            out.append(Difference(f"reward {i + 1}", f"rewards[{i}]", x, y))
            break
    for i, (x, y) in enumerate(zip(a.steps, b.steps)):
        if bool(x.done) != bool(y.done) and not out:
            out.append(Difference(f"step {i + 1}", "done", bool(x.done), bool(y.done)))
            break
    if len(a.steps) != len(b.steps) and not out:
        out.append(Difference("length", "steps (length)", len(a.steps), len(b.steps)))
    if state:
        for key, label in (("reset", "state after reset"), ("end", "state at the end")):
            if key in a.states and key in b.states:
                d = _first_diff(
                    _state_view(a.states[key]), _state_view(b.states[key]), volatile, "state"
                )
                if d:
                    path, va, vb = d
                    out.append(Difference(label, f"state.{path}", va, vb))
                    break
    return out


@dataclass
class Reference:
    """The deterministic episode of each seed, and the volatile paths left out of every
    comparison (the sessions check uses both).

    Attributes:
        episodes: seed -> its episode (first of the two plays).
        volatile: ``obs:PATH`` / ``state:PATH`` fresh on every reply.
    """

    episodes: dict[int, Episode]
    volatile: set[str] = field(default_factory=set)


def check(engine: ServerPlayer, actions: ActionPool) -> Reference | None:
    """EK411, EK412, EK413.

    Returns:
        The :class:`Reference` when the environment is deterministic, else ``None``.
    """

    def replay(_obs: dict[str, Any], i: int) -> dict[str, Any]:
        return actions.at(i)

    runs: dict[int, tuple[Episode, Episode]] = {}
    # the seed's episode again on the session that just played it: TRL keeps one
    # environment per rollout and resets it for the next one
    again: dict[int, Episode] = {}
    for seed in engine.settings.seeds:
        try:
            first, again[seed] = _twice_on_one_session(engine, seed, replay)
            runs[seed] = (
                first,
                engine.play_alone(seed, replay, name="determinism", with_state=True),
            )
        except EnvErrorFrame as exc:
            if exc.code == "CAPACITY_REACHED":
                raise
            return None
    engine.ran(RESET_NONDETERMINISTIC, REWARD_NONDETERMINISTIC)
    volatile: set[str] = set()
    for a, b in runs.values():
        volatile |= volatile_paths(a, b)
    deterministic = True
    # findings of the replay on one session wait for EK413: a seed the environment ignores
    # explains them (one cause, one finding)
    held: dict[str, tuple[Rule, str, dict[str, object]]] = {}

    def add(rule: Rule, message: str, same_session: bool, **data: object) -> None:
        if same_session:
            held.setdefault(rule.code, (rule, message, data))
        else:
            engine.add(rule, message, **data)

    unseeded: tuple[int, Difference] | None = None  # the first difference of fresh sessions
    for seed, (a, b) in runs.items():
        diffs = compare(a, b, volatile) or _resets_differ(engine, seed, a, volatile)
        same_session = not diffs
        if same_session:
            diffs = compare(a, again[seed], volatile)
        elif unseeded is None:
            unseeded = (seed, diffs[0])
        for d in diffs:
            # a seed that fixes the fresh sessions' episodes still decides EK413 and is the
            # reference of the sessions check; only the replay on one session differed
            deterministic = deterministic and same_session
            _report(engine, add, seed, d, a, same_session)
    if not deterministic:
        for rule, message, data in held.values():
            if not engine.has(rule):
                engine.add(rule, message, **data)
        if unseeded is not None:
            _seed_dropped(engine, *unseeded)
        return None
    reference = Reference({seed: a for seed, (a, _b) in runs.items()}, volatile)
    if len(runs) >= 2:
        engine.ran(SEED_IGNORED)
        first, *others = reference.episodes.values()
        same = all(not compare(first, e, volatile) for e in others)
        if same and not _seed_control(engine, list(runs), volatile, replay):
            _process_control(engine, list(runs), first, volatile)
    if not engine.has(SEED_IGNORED):
        for rule, message, data in held.values():
            engine.add(rule, message, **data)
    return reference


def _report(
    engine: ServerPlayer,
    add: Callable[..., None],
    seed: int,
    d: Difference,
    a: Episode,
    same_session: bool,
) -> None:
    """Report one difference between two plays of ``seed`` (EK412 for a reward, else EK411),
    once per rule; ``add`` holds the ones from the replay on one session."""
    if d.where.startswith("reward"):
        if engine.has(REWARD_NONDETERMINISTIC):
            return
        add(
            REWARD_NONDETERMINISTIC,
            f"The same seed ({seed}) and the same actions must give the same "
            f"rewards; step rewards differ at `{d.path}` ({_fmt(d.first)}, "
            f"{_fmt(d.second)}). Most likely the reward uses an unseeded "
            f"random generator or outside state. Actions: {_fmt(a.actions)}.",
            same_session,
            seed=seed,
            field=d.path,
            first=d.first,
            second=d.second,
            actions=a.actions,
        )
        return
    if engine.has(RESET_NONDETERMINISTIC):
        return
    if d.where == "reset":
        lead = (
            f"`reset(seed={seed})` must return the same observation twice; got "
            f"two different `{d.path}` values"
        )
    elif d.where == "state after reset":
        lead = (
            f"`reset(seed={seed})` must give the same `state` twice; got two "
            f"different `{d.path}` values"
        )
    else:
        lead = (
            f"The same seed ({seed}) and the same actions must give the same "
            f"episode; {d.where} gave two different `{d.path}` values"
        )
    if same_session:
        lead += " on one session (the second `reset` after an episode)"
    cause = (
        "`reset` leaves something of the previous episode (a history, a counter, a "
        "generator seeded only once)"
        if same_session
        else "the episode draws from an unseeded random generator"
    )
    add(
        RESET_NONDETERMINISTIC,
        f"{lead} ({_fmt(d.first)}, {_fmt(d.second)}). Most likely {cause}"
        + (f" (actions sent: {_fmt(a.actions)})." if d.where != "reset" else "."),
        same_session,
        seed=seed,
        field=d.path,
        where=d.where,
        first=d.first,
        second=d.second,
        actions=a.actions,
    )


# replays of the oracle's first episode, stopping at the first difference: as many as fit in
# ORACLE_REPLAY_STEPS steps, at least ORACLE_REPLAYS_MIN and at most ORACLE_REPLAYS_MAX
ORACLE_REPLAYS_MIN = 5
ORACLE_REPLAYS_MAX = 16
ORACLE_REPLAY_STEPS = 48


def oracle_replays(steps: int) -> int:
    """How many times an oracle episode of ``steps`` steps (>= 1) is replayed: 16 up to 3
    steps, 5 from 10 steps, ``48 // steps`` between."""
    return max(ORACLE_REPLAYS_MIN, min(ORACLE_REPLAYS_MAX, ORACLE_REPLAY_STEPS // max(steps, 1)))


def oracle_replay(engine: ServerPlayer) -> None:
    """EK412 on winning episodes: the oracle's first episode (the fuzzed replays of
    :func:`check` rarely win, and a bonus paid on a win -- for speed, for a streak -- or a
    sampling judge's vote is where rewards drift) is replayed :func:`oracle_replays` times
    on one session with the same seed and actions, stopping at the first reward that
    differs from the first play's. A judge of five votes that each accept the right answer
    with p = 0.9 pays it 1.0 with p = 0.9**5 = 0.59: five replays miss it about one time in
    23, sixteen (a one-step quiz) about one time in 8,000."""
    played = next((ep for ep in engine.episodes if ep.policy == "oracle" and ep.actions), None)
    if played is None or engine.has(REWARD_NONDETERMINISTIC):
        return
    actions = list(played.actions)

    def replay(_obs: dict[str, Any], i: int) -> dict[str, Any]:
        return dict(actions[i % len(actions)])

    seed = played.seed if played.seed is not None else engine.settings.seeds[0]
    s = engine.open()
    try:
        engine.ran(REWARD_NONDETERMINISTIC)
        for n in range(oracle_replays(len(actions))):
            again = engine.play_episode(
                s, seed, replay, name="oracle replay", max_steps=len(actions)
            )
            diffs = [d for d in compare(played, again, state=False) if d.where.startswith("reward")]
            if diffs:
                _report(engine, _add_now(engine), seed, diffs[0], played, same_session=n > 0)
                return
    finally:
        s.close()


def _add_now(engine: ServerPlayer) -> Callable[..., None]:
    """:meth:`ServerPlayer.add` taking :func:`_report`'s ``same_session`` argument."""

    def add(rule: Rule, message: str, _same_session: bool, **data: object) -> None:
        engine.add(rule, message, **data)

    return add


def _twice_on_one_session(
    engine: ServerPlayer, seed: int, policy: Policy
) -> tuple[Episode, Episode]:
    """The seed's episode played twice on one session (``reset(seed)`` again after it)."""
    s = engine.open()
    try:
        first = engine.play_episode(s, seed, policy, name="determinism", with_state=True)
        return first, engine.play_episode(s, seed, policy, name="determinism", with_state=True)
    finally:
        s.close()


RESET_REPEATS = 3  # more fresh-session resets per seed when its two plays agreed


def _resets_differ(
    engine: ServerPlayer, seed: int, first: Episode, volatile: set[str]
) -> list[Difference]:
    """When two plays of ``seed`` agreed, :data:`RESET_REPEATS` more resets on fresh
    sessions, compared with the first play's reset (observation, then ``state``): a coin
    flip per reset (chess_env draws the agent's colour from a fresh uuid) passes two plays
    one time in two, five resets one time in sixteen."""
    for _ in range(RESET_REPEATS):
        s = engine.open()
        try:
            obs = engine.reset(s, seed).observation
            state = engine.call("`state`", s.state)
        finally:
            s.close()
        d = _reset_difference(first.reset_obs, first.states.get("reset"), obs, state, volatile)
        if d is not None:
            return [d]
    return []


def _reset_difference(
    obs_a: dict[str, Any], state_a: Any, obs_b: dict[str, Any], state_b: Any, volatile: set[str]
) -> Difference | None:
    """The first difference of two resets: the observation, then ``state`` (``state_a``
    ``None``: not recorded, not compared)."""
    d = _first_diff(obs_a, obs_b, volatile, "obs")
    if d is not None:
        return Difference("reset", *d)
    if state_a is not None:
        d = _first_diff(_state_view(state_a), _state_view(state_b), volatile, "state")
        if d is not None:
            path, va, vb = d
            return Difference("state after reset", f"state.{path}", va, vb)
    return None


def _seed_dropped(engine: ServerPlayer, seed: int, d: Difference) -> None:
    """EK413 for a ``reset`` that cannot receive the seed, while two fresh sessions of one
    seed differed (``d``, the first difference, with ``seed``): OpenEnv drops the argument a
    ``reset`` without a ``seed`` parameter or ``**kwargs`` does not declare, so the
    randomness EK411/EK412 report is the seed's to control. Judged only when envkit has the
    environment's source (``server/*.py``) and it defines ``reset``."""
    root = engine.env_root
    verdict = source_takes_seed(root) if root is not None else None
    if verdict is None:
        return
    engine.ran(SEED_IGNORED)
    if verdict:
        return
    where = "after `reset`" if d.where in ("reset", "state after reset") else f"at {d.where}"
    engine.add(
        SEED_IGNORED,
        f"The seed must select the episode; `reset` in server/ declares neither a `seed` "
        "parameter nor `**kwargs`, so OpenEnv drops the seed the client sends, and "
        f"two fresh sessions reset with seed {seed} got two different `{d.path}` values "
        f"{where} ({_fmt(d.first)}, {_fmt(d.second)}): the episode comes from an unseeded "
        "source. Declare `reset(self, seed=None, episode_id=None, **kwargs)` and draw from "
        "`random.Random(seed)`.",
        seed=seed,
        where=d.where,
        field=d.path,
        first=d.first,
        second=d.second,
        reset_takes_seed=False,
    )


def _seed_control(
    engine: ServerPlayer, seeds: list[int], volatile: set[str], replay: Policy
) -> bool:
    """EK413: every seed gave the same episode on a fresh session. Randomness the seed does
    not control shows on one session that plays whole episodes with the same actions
    (:data:`CONTROL_PLAN`): the first seed twice (an opponent drawing from a generator
    created once per instance moves differently in the second, though the reset looks the
    same), the second seed, then ``reset()`` without a seed. None differing means no
    randomness (no finding).

    Returns:
        Whether EK413 was reported.
    """
    engine.ran(SEED_IGNORED)
    plan = [seeds[CONTROL_PLAN[0]], seeds[CONTROL_PLAN[1]], seeds[CONTROL_PLAN[2]], None]
    s = engine.open()
    try:
        played = [
            engine.play_episode(s, seed, replay, name="seed control", with_state=True)
            for seed in plan
        ]
    finally:
        s.close()
    base = played[0]
    for n, (seed, ep) in enumerate(zip(plan[1:], played[1:]), 2):
        diffs = compare(base, ep, volatile)
        if not diffs:
            continue
        d = diffs[0]
        shown = ", ".join("`reset()`" if x is None else f"`reset(seed={x})`" for x in plan)
        other = "`reset()`" if seed is None else f"`reset(seed={seed})`"
        where = "after `reset`" if d.where in ("reset", "state after reset") else f"at {d.where}"
        same = seed == plan[0]
        engine.add(
            SEED_IGNORED,
            f"The seed must select the episode; seeds {', '.join(map(str, seeds))} each gave "
            f"the same episode on a fresh session, yet one session reset {len(plan)} times "
            f"and played the same actions after each ({shown}) got `{d.path}` = {_fmt(d.first)} "
            f"{where} in episode 1 and {_fmt(d.second)} in episode {n} ({other}). "
            + (
                "The same seed gave two different episodes: in GRPO the generations of "
                "one group would face different episodes and their advantages compare "
                "nothing. "
                if same
                else ""
            )
            + "The environment draws at random, but not from the seed. Most likely "
            "`reset()` ignores `seed` (openenv-core silently drops arguments `reset` "
            "does not declare) and draws from a generator created once per instance.",
            seeds=seeds,
            resets=list(plan),
            episode=n,
            where=d.where,
            field=d.path,
            first=d.first,
            second=d.second,
            actions=base.actions,
        )
        return True
    return False


def _process_control(
    engine: ServerPlayer, seeds: list[int], first: Episode, volatile: set[str]
) -> None:
    """EK413 for randomness drawn once per server process (a module-global list shuffled at
    import): nothing in one process shows it. When envkit started the server and every seed
    played the same episode with no randomness on one session, a second process of the same
    launch form replays the first seed's recorded episode (its actions, in order) once and
    compares it with the first process's. It costs one server start, paid only by an
    environment that looks free of randomness; a second process that does not start or
    answer is skipped (the first one was checked by the other rules)."""
    server = engine.server
    cand = getattr(server, "candidate", None)
    if server is None or cand is None or engine.remaining_s() < 5:
        return
    engine.progress("replaying one episode on a second server process")
    ep = twin.replay_on_second_process(engine, first, with_state=True)
    if ep is None:
        return
    diffs = compare(first, ep, volatile)
    if not diffs:
        return
    d = diffs[0]
    where = "after `reset`" if d.where in ("reset", "state after reset") else f"at {d.where}"
    engine.add(
        SEED_IGNORED,
        f"The seed must select the episode; seeds {', '.join(map(str, seeds))} each gave "
        f"the same episode and one server process showed no randomness, yet a second "
        f"process of the same server, replaying `reset(seed={first.seed})` and the same "
        f"actions, got `{d.path}` = {_fmt(d.second)} {where} where the first got "
        f"{_fmt(d.first)}. The environment draws once per process (at import, e.g. a "
        "module-global list shuffled with the unseeded `random` module), not from the "
        "seed: every restart of a Space and every server replica of a trainer plays "
        "another episode for the same seed.",
        seeds=seeds,
        where=d.where,
        field=d.path,
        first=d.first,
        second=d.second,
        actions=first.actions,
        process=2,
    )


#: The seeds (indexes into ``envkit.seeds``) the seed-control session plays, then one
#: ``reset()`` without a seed: the first seed twice, so a generator the seed does not reset
#: shows in the episode's steps as well as in its reset.
CONTROL_PLAN = (0, 0, 1)


def replay_plan(engine: ServerPlayer) -> None:
    """EK431: replay the declared probe plan twice on fresh sessions (read from
    ``engine.env_root``; nothing to do without it, without ``validation.execution`` or
    when the plan cannot be read, which the static stage reports)."""
    root, path = engine.env_root, engine.settings.probe_path
    if root is None or path is None:
        return
    try:
        plan = read_plan(root, path)
    except PlanError:
        return
    engine.progress(f"probe plan `{path}`")
    reset, actions = plan["reset"], plan["actions"]
    how = f"`reset(seed={reset['seed']}, episode_id={reset['episode_id']!r})`"
    plays: list[Episode] = []
    for _ in range(2):
        s = engine.open()
        try:
            first = engine.call(
                "`reset`",
                s.reset,
                seed=reset["seed"],
                episode_id=reset["episode_id"],
                **(reset.get("options") or {}),
            )
            ep = Episode(reset["seed"], first.observation, policy="probe-plan")
            for i, action in enumerate(actions):
                try:
                    res = engine.step(s, action)
                except EnvErrorFrame as exc:
                    if exc.code == "CAPACITY_REACHED":
                        raise
                    engine.ran(PLAN_REPLAY)
                    engine.add(
                        PLAN_REPLAY,
                        f"The declared probe plan `{path}` must replay; after {how}, "
                        f"its action {i + 1} of {len(actions)} ({_fmt(action)}) was "
                        f"refused: {exc.message}. Most likely the plan was recorded "
                        "before the action or the task changed; re-record it with "
                        "`envkit migrate`.",
                        plan=path,
                        index=i + 1,
                        action=action,
                        error=exc.message,
                    )
                    return
                if ep.record(res, action):
                    break
            ep.states["end"] = engine.call("`state`", s.state)
        finally:
            s.close()
        plays.append(ep)
    engine.ran(PLAN_REPLAY)
    if engine.has(RESET_NONDETERMINISTIC) or engine.has(REWARD_NONDETERMINISTIC):
        return  # the same cause, already reported with the seeds' own episodes
    a, b = plays
    diffs = compare(a, b, volatile_paths(a, b))
    if diffs:
        d = diffs[0]
        engine.add(
            PLAN_REPLAY,
            f"The declared probe plan `{path}` must replay the same way every time; "
            f"played twice after {how} on fresh sessions, {d.where} gave two different "
            f"`{d.path}` values ({_fmt(d.first)}, {_fmt(d.second)}). Most likely the "
            "episode depends on something other than the seed and the actions.",
            plan=path,
            where=d.where,
            field=d.path,
            first=d.first,
            second=d.second,
        )
