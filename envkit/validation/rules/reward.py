"""EK5xx reward integrity: every step reward is a finite number in the declared range, it
varies, the oracle reaches the maximum and degenerate policies do not.

Source: RFC 008 (huggingface/OpenEnv#1041) for the
range/oracle/floor ideas; huggingface/OpenEnv#1200 (NaN/inf/out-of-range accepted) and #778
(a verifier gave 1.0 to the empty answer).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from envkit.errors import InternalError
from envkit.findings import Rule, Severity, register
from envkit.policy import PolicyError, PolicyProcess, PolicyTimeout
from envkit.validation import fuzz
from envkit.validation.engine import EPS, ActionPool, Episode, ServerPlayer, Settings, is_number
from envkit.validation.rules import episodes
from envkit.wire import EnvErrorFrame

REWARD_NOT_FINITE = register(
    "EK501",
    "reward-not-finite",
    Severity.ERROR,
    rfc008="runtime.reward_well_formed",
    summary="A step reward is null on the wire: NaN, infinity, or no reward set.",
    what="Every step reward envkit receives must be a finite number. OpenEnv serialises "
    "NaN and ±inf as `null`, so a step reward of `null` is a finding (a `reset` reward "
    "of null is fine).",
    why="One NaN reward turns the policy's loss into NaN and silently ruins the run "
    "(huggingface/OpenEnv#1200).",
    example="`reward = correct / total` with `total == 0`; `step` forgetting to set `reward`.",
    fix="Guard divisions and logs, clamp the reward, and always set `reward=` on the "
    "observation `step` returns.",
    classes=("BGW-128", "rl-envdoctor:invalid-reward"),
)

REWARD_NOT_NUMERIC = register(
    "EK502",
    "reward-not-a-number",
    Severity.ERROR,
    rfc008="runtime.reward_well_formed",
    summary="A step reward is not a number (a boolean, a string, a list, ...).",
    what="The step reward on the wire must be an int or a float; booleans are refused.",
    why='Trainers sum and normalise rewards; `true` or `"1"` either crashes them or is '
    "coerced differently by each client.",
    example="`reward=is_correct` (a bool) instead of `reward=float(is_correct)`.",
    fix="Return `reward=float(...)`.",
    classes=("rl-envdoctor:invalid-reward",),
)

REWARD_OUT_OF_RANGE = register(
    "EK503",
    "reward-out-of-range",
    Severity.ERROR,
    rfc008="runtime.reward_well_formed",
    summary="A step reward lies outside `validation.reward.range` ([0, 1] by default).",
    what="Every step reward envkit receives must lie in `[lo, hi]` of `validation.reward.range`.",
    why="Reward scale is part of the training recipe (advantages, KL weights, clipping); an "
    "unbounded reward lets one rollout dominate the batch (RFC 008 defaults to [0, 1]).",
    example="The `openenv init` template: `reward = len(message) * 0.1`, 20.0 for a "
    "200-character answer.",
    fix="Bound the reward (normalise or clamp it), or declare the true range in "
    "`validation.reward.range`.",
    classes=("BGW-128", "rl-envdoctor:invalid-reward"),
)

REWARD_CONSTANT = register(
    "EK504",
    "reward-constant",
    Severity.WARNING,
    rfc008="statistical.training_signal",
    summary="Every step envkit played got the same reward: no learning signal.",
    what="Across all steps of the runtime stage (fuzzed, degenerate, exploring and oracle "
    "policies) the numeric reward never changes (null rewards are left out: EK501 "
    "reports them). It is judged only when the declared oracle was played: without "
    "one, a reward stuck at the low end of the range or at a constant step cost is what "
    "a sparse task looks like when no policy envkit tried reaches its goal.",
    why="A constant reward gives zero advantage to every rollout: training runs, burns "
    "GPU-hours, and learns nothing.",
    example="The rubric is not wired up and `_apply_rubric` silently returns 0.0 (OpenEnv).",
    fix="Check the reward is computed from the action; declare an oracle so envkit can "
    "see the maximum reachable.",
    classes=("BGW-125", "rl-envdoctor:reward-saturation"),
)

REWARD_HACKABLE = register(
    "EK505",
    "reward-hackable",
    Severity.ERROR,
    rfc008="semantic.floor_gap",
    summary="A degenerate policy reaches the maximum reward or scores within `floor_margin` "
    "of the oracle.",
    what="envkit plays degenerate policies built from the action schema: empty values "
    "(empty strings, zeros, false, empty lists), minimum values, maximum values "
    "(longest strings, largest numbers) and the first fuzzed action repeated, once per "
    "seed. None may score (best step reward, averaged over all the seeds) within "
    "`validation.reward.floor_margin` of `hi` of `validation.reward.range` or of the "
    "oracle: one lucky episode does not decide it. RFC 008: `semantic.floor_gap`.",
    why="The policy will find the shortcut: a verifier on the Hub gave 1.0 to the empty "
    "answer (huggingface/OpenEnv#778), and a length-based reward trains verbosity.",
    example="`reward = len(message) * 0.1`: a 200-character answer of `a`s scores 20.",
    fix="Reward the task, not a proxy: check the answer against the target; give the empty "
    "or trivial answer the minimum.",
    limits="A degenerate action that pays only on a fresh, never-reset instance (HTTP `POST /step`"
    " without `reset`) is reported as EK510 (fresh-instance-pays), not here.",
    reported_as=("EK510",),
    classes=(
        "BGW-101",
        "BGW-119",
        "BGW-123",
        "BGW-125",
        "TerminalWrench:hollow-implementation",
        "rl-envdoctor:empty-ties-correct",
        "rl-envdoctor:exploit-pays-out",
    ),
)

ORACLE_BELOW_MAX = register(
    "EK506",
    "oracle-below-max",
    Severity.ERROR,
    rfc008="semantic.oracle_max",
    summary="The declared oracle does not reach `hi` of `validation.reward.range`, or fails.",
    what="envkit runs `envkit.oracle` (a `module:callable` taking the observation dict, "
    "run in the environment's interpreter) for one episode per seed; its best step "
    "reward must reach `hi` minus `validation.reward.oracle_tolerance` (0 by default) in "
    "every episode, and the server must accept its actions. When it does on the "
    "declared `envkit.seeds`, it also plays up to 8 undeclared seeds (the integers after "
    "the largest declared one) for at most as long as the declared seeds took (or 3 s): "
    "a seed there where it falls short is reported too (a seed whose `reset` fails, or "
    "on which the oracle fails, only ends that extra play).",
    why="If a perfect policy cannot reach the maximum, the reward is broken or the range is "
    "wrong, and the reward-hacking check has nothing to compare against.",
    example='The oracle answers `observation["target"]` but the observation field was '
    "renamed to `goal`.",
    fix="Fix the reward or the oracle, or lower `hi` in `validation.reward.range`.",
    limits="A float sum a rounding step below `hi` (0.9999999999999999) counts as reaching it: "
    "rewards are compared with a tolerance of 1e-9, and a trainer cannot tell the two "
    "apart. An oracle that falls short only on seeds beyond the 8 undeclared ones played "
    "(or on a few seeds in many) can still be missed.",
    classes=("BGW-120", "BGW-124", "rl-envdoctor:baseline-sanity"),
)

UNDECLARED_SEEDS = 8  # seeds after the declared ones the oracle plays too (EK506)
UNDECLARED_MIN_S = 3.0  # seconds the undeclared seeds may take even when the declared took less

NO_ORACLE = register(
    "EK507",
    "no-oracle",
    Severity.INFO,
    rfc008="semantic.oracle_max",
    summary="No oracle is declared, so the reward-hacking floor is checked against `hi` only.",
    what="`envkit.oracle` is not set in openenv.yaml (or envkit validated a URL without "
    "the environment's files).",
    why="An oracle proves the maximum reward is reachable and lets envkit compare "
    "degenerate policies with the best one.",
    example="An `envkit:` section without `oracle:`.",
    fix="Write `server/oracle.py` with `def policy(observation: dict) -> dict` and set "
    "`envkit.oracle: server.oracle:policy`.",
)


def _fmt(value: object) -> str:
    return fuzz.short_json(value, 80)


def classify(reward: object, lo: float, hi: float) -> tuple[Rule, str] | None:
    """What is wrong with one step reward as received (EK501-EK503), ``None`` when it is a
    number in ``[lo, hi]``. The one place these three rules are decided."""
    if reward is None:
        return REWARD_NOT_FINITE, "got `null`"
    if isinstance(reward, bool) or not isinstance(reward, int | float):  # JSON numbers only
        return REWARD_NOT_NUMERIC, f"got {_fmt(reward)} ({type(reward).__name__})"
    if not (lo - EPS <= float(reward) <= hi + EPS):
        return REWARD_OUT_OF_RANGE, f"got {reward!r}"
    return None


def verdicts(engine: ServerPlayer, *, oracle_played: bool = False) -> None:
    """EK501-EK504 over every step reward the engine received (any policy).

    Args:
        oracle_played: the declared oracle was played; without it a constant reward is
            a sparse task nobody solved as far as envkit can tell, not EK504.
    """
    if not engine.rewards and not engine.latencies:
        return
    lo, hi = engine.settings.lo, engine.settings.hi
    engine.ran(REWARD_NOT_FINITE, REWARD_NOT_NUMERIC, REWARD_OUT_OF_RANGE)
    issues: dict[str, tuple[Rule, int, str]] = {}  # code -> (rule, count, first)
    for seen in engine.rewards:
        found = classify(seen.reward, lo, hi)
        if found is not None:
            rule, text = found
            first = f"{text} after action {_fmt(seen.action)}"
            _r, count, first = issues.get(rule.code, (rule, 0, first))
            issues[rule.code] = (rule, count + 1, first)
    total = len(engine.rewards)
    texts = {
        REWARD_NOT_FINITE.code: "Every step reward must be a finite number; {n} of {total} "
        "step rewards were `null` (NaN or ±inf on the server, or no "
        "reward set), first: {first}. Most likely a division by zero "
        "or a missing `reward=`.",
        REWARD_NOT_NUMERIC.code: "Every step reward must be a number; {n} of {total} were "
        "not, first: {first}.",
        REWARD_OUT_OF_RANGE.code: f"Every step reward must lie in `validation.reward.range` [{lo:g}, "
        f"{hi:g}]; {{n}} of {{total}} did not, first: {{first}}. "
        "Most likely the reward is not normalised.",
    }
    for code, (rule, count, first) in issues.items():
        engine.add(rule, texts[code].format(n=count, total=total, first=first))
    numeric = [s for s in engine.rewards if is_number(s.reward)]
    numbers = [float(s.reward) for s in numeric]
    if len(numbers) < 5 or REWARD_NOT_NUMERIC.code in issues:
        return
    engine.ran(REWARD_CONSTANT)
    if max(numbers) - min(numbers) > EPS:
        return
    if not oracle_played:
        where = "the low end of the range" if abs(numbers[0] - lo) <= EPS else "a step cost, say"
        engine.notes.append(
            f"reward: all {len(numbers)} numeric step rewards every policy envkit tried saw "
            f"were {numbers[0]:g} ({where}); without an oracle a sparse task whose goal no "
            "policy reached cannot be told from a constant reward, so EK504 was not judged "
            f"({_oracle_hint(engine)})."
        )
        return
    nulls = total - len(numbers)
    actions = sorted({fuzz.short_json(s.action, 40) for s in numeric})
    engine.add(
        REWARD_CONSTANT,
        f"Rewards should vary with the actions; all {len(numbers)} numeric step "
        f"rewards envkit saw were {numbers[0]:g}"
        + (f" ({nulls} more were `null`)" if nulls else "")
        + f", for {len(actions)} different actions (e.g. {', '.join(actions[:3])}). "
        "Most likely the reward is not computed from the action (an unset rubric "
        "gives 0.0).",
        value=numbers[0],
        count=len(numbers),
        nulls=nulls,
        actions=actions[:10],
    )


def start_oracle(settings: Settings, root: Path, python: str) -> PolicyProcess:
    """Start the declared oracle's process (``settings.oracle``) without waiting for its
    import: the load is awaited by its first action (:class:`PolicyProcess` ``defer_load``).

    Importing the oracle's module is start-up (openenv alone takes seconds to import on a
    busy machine), each action is one answer: the same limits as the server's
    (``startup_s``, ``reply_s``).

    Raises:
        InternalError: no oracle is declared (a caller's bug: check ``settings.oracle``).
    """
    if not settings.oracle:
        raise InternalError("start_oracle called without a declared oracle (`envkit.oracle`).")
    return PolicyProcess(
        settings.oracle,
        root,
        python,
        timeout_s=settings.reply_s,
        load_timeout_s=settings.startup_s,
        defer_load=True,
    )


def oracle(engine: ServerPlayer, host: PolicyProcess | None = None) -> float | None:
    """EK506, EK507: play the declared oracle once per seed, imported from
    ``engine.env_root`` in ``engine.python`` (without them, a URL-only run, the check is
    skipped).

    Args:
        host: the oracle's process when the caller started it early
            (:func:`start_oracle`, so its import overlaps the server's start-up); it is
            closed here. ``None``: started here.

    Returns:
        The oracle's best step reward averaged over the seeds, the yardstick of the
        degenerate policies; ``None`` without an oracle or when it fails or falls short.
    """
    settings = engine.settings
    spec = settings.oracle
    engine.ran(ORACLE_BELOW_MAX, NO_ORACLE)
    if not spec:
        engine.add(
            NO_ORACLE,
            "An oracle should be declared (`envkit.oracle`) so the maximum "
            f"reward ({settings.hi:g}) is shown reachable; none is"
            + (
                "."
                if settings.has_manifest
                else " (validating a URL without the environment's manifest)."
            ),
        )
        return None
    root, python = engine.env_root, engine.python
    if root is None or python is None:
        engine.unran(ORACLE_BELOW_MAX, NO_ORACLE)
        engine.progress("oracle: skipped (no environment directory to run it from)")
        return None
    engine.progress(f"oracle `{spec}`")
    bests: list[tuple[int | None, float | None]] = []
    more: list[tuple[int, float | None]] = []
    target = settings.hi - settings.oracle_tolerance
    try:
        with host or start_oracle(settings, root, python) as policy:
            t0 = time.monotonic()
            for seed in settings.seeds:
                ep = engine.play_alone(seed, lambda obs, _i: policy(obs), name="oracle")
                bests.append((seed, ep.best()))
            if all(_reaches(b, target) for _, b in bests):
                more = _undeclared_seeds(engine, policy, time.monotonic() - t0)
    except PolicyTimeout as exc:  # a budget ran out: the message names it, not a defect
        engine.add(
            ORACLE_BELOW_MAX,
            f"The oracle `{spec}` must play every seed; {exc.message}",
            error=exc.message,
            fix="Raise --reply-timeout when the oracle is only slow; move a slow start into "
            "its module's import (the start-up timeout, `envkit.startup_timeout_s`).",
        )
        return None
    except PolicyError as exc:
        engine.add(
            ORACLE_BELOW_MAX,
            f"The oracle `{spec}` must play every seed; it failed: {exc.message}"
            + (f" {exc.hint}" if exc.hint else ""),
            error=exc.message,
        )
        return None
    except EnvErrorFrame as exc:
        if exc.code == "CAPACITY_REACHED" or engine.reset_failure(exc) is not None:
            raise  # the server's state, not the oracle's (reported by their own rules)
        message = str(exc.data.get("message", ""))[:300]
        engine.add(
            ORACLE_BELOW_MAX,
            f"The oracle `{spec}` must play every seed; the server refused its action with "
            f"{exc.code}: {message!r}. Most likely the oracle's action does not match the "
            "action schema (a field's name or type).",
            error=message,
        )
        return None
    tolerance = (
        f" (less `oracle_tolerance` {settings.oracle_tolerance:g})"
        if settings.oracle_tolerance
        else ""
    )
    below = [(s, b) for s, b in bests if not _reaches(b, target)]
    if below:  # a broken oracle is no yardstick for the floor check
        low_seed, best = below[0]
        engine.add(
            ORACLE_BELOW_MAX,
            f"The oracle `{spec}` must reach the maximum reward {settings.hi:g}{tolerance} in "
            f"every episode; with seed {low_seed} its best step reward was "
            f"{'none' if best is None else f'{best:g}'} ({len(below)} of {len(bests)} "
            "episodes below). Most likely the reward or the oracle is wrong.",
            seed=low_seed,
            best=best,
        )
        return None
    short = [(s, b) for s, b in more if not _reaches(b, target)]
    if short:
        low_seed, best = short[0]
        engine.add(
            ORACLE_BELOW_MAX,
            f"The oracle `{spec}` must reach the maximum reward {settings.hi:g}{tolerance} in "
            f"every episode; it does with the declared seeds "
            f"({', '.join(str(s) for s, _b in bests)}), but of {len(more)} more seeds envkit "
            f"played ({', '.join(str(s) for s, _b in more)}), {len(short)} fell short: with "
            f"seed {low_seed} its best step reward was "
            f"{'none' if best is None else f'{best:g}'}. Most likely the task cannot always "
            "be solved (a step budget too small for some seeds) or the oracle misses a case.",
            seed=low_seed,
            best=best,
            undeclared=[s for s, _b in more],
        )
        return None
    scores = [b for _, b in bests if b is not None]
    return sum(scores) / len(scores) if scores else None


def _reaches(best: float | None, target: float) -> bool:
    """Whether an episode's best step reward reaches ``target`` (within :data:`EPS`)."""
    return best is not None and best >= target - EPS


def _undeclared_seeds(
    engine: ServerPlayer, policy: PolicyProcess, allowed_s: float
) -> list[tuple[int, float | None]]:
    """Play the oracle on up to :data:`UNDECLARED_SEEDS` seeds ``envkit.seeds`` does not
    declare (the integers after the largest declared one), while the time spent stays under
    ``allowed_s`` (what the declared seeds took; at least :data:`UNDECLARED_MIN_S`, so that
    a quick environment plays them all on a busy machine too) and a tenth of the stage's
    budget left.

    An environment may serve only the seeds it declares: a ``reset`` that fails on one of
    these seeds (its recorded failure is taken back: EK418 judges the declared seeds), an
    action refused or an oracle that raises ends the extra play without a finding. The
    after-done hook is off meanwhile: its few probes stay with the other policies' episodes.

    Returns:
        ``(seed, best step reward or None)`` for every episode played, in order.
    """
    start = max(engine.settings.seeds) + 1
    allowed_s = max(allowed_s, UNDECLARED_MIN_S)
    deadline = time.monotonic() + min(allowed_s, engine.remaining_s() / 10)
    played: list[tuple[int, float | None]] = []
    hook, engine.on_episode_end = engine.on_episode_end, None
    try:
        for seed in range(start, start + UNDECLARED_SEEDS):
            if time.monotonic() > deadline:
                break
            try:
                ep = engine.play_alone(seed, lambda obs, _i: policy(obs), name="oracle:undeclared")
            except PolicyError:
                break
            except EnvErrorFrame as exc:
                failure = engine.reset_failure(exc)
                if failure is not None:
                    engine.reset_failures.remove(failure)
                break
            played.append((seed, ep.best()))
    finally:
        engine.on_episode_end = hook
    if played:
        engine.progress(f"oracle: {len(played)} undeclared seed(s) played")
    return played


def _oracle_hint(engine: ServerPlayer) -> str:
    """What would let the oracle be played, as true where the note is shown: a declared
    oracle is not played on a ``--url`` run without the environment directory."""
    spec = engine.settings.oracle
    if spec:
        return (
            f"the declared oracle `{spec}` runs from the environment's files: pass its "
            "directory too, `envkit validate --url URL PATH`, to judge it"
        )
    if not engine.settings.has_manifest:
        return (
            "validate with the environment's directory, `envkit validate --url URL PATH`, "
            "and declare `envkit.oracle` in its openenv.yaml to judge it"
        )
    return "declare `envkit.oracle` in openenv.yaml to judge it"


def degenerate(
    engine: ServerPlayer, schema: dict[str, Any], actions: ActionPool, oracle_best: float | None
) -> dict[str, float]:
    """EK505 (and EK414 when a degenerate episode never ends): empty, minimum, maximum and
    repeat-first policies, each played once per seed, must score (best step reward averaged
    over all the seeds; a seed without a numeric reward counts as ``lo``) below ``hi`` minus
    ``floor_margin`` and below ``oracle_best`` minus ``floor_margin``. One lucky episode
    does not decide it.

    Returns:
        Policy name -> its mean best step reward (the fresh-instance probe's baseline).
    """
    settings = engine.settings
    policies = fuzz.degenerate_actions(schema, actions.at(0))
    margin = settings.floor_margin
    floor = min(settings.hi, oracle_best if oracle_best is not None else settings.hi) - margin
    hacks: list[str] = []
    evidence: list[dict[str, Any]] = []
    means: dict[str, float] = {}
    for name, action in policies.items():
        engine.progress(f"degenerate policy `{name}`")
        bests: dict[Any, float] = {}

        def repeat(_obs: dict[str, Any], _i: int, a: dict[str, Any] = action) -> dict[str, Any]:
            return dict(a)

        for seed in settings.seeds:
            ep: Episode | None
            try:
                ep = engine.play_alone(seed, repeat, name=f"degenerate:{name}")
            except EnvErrorFrame as exc:
                if exc.code == "CAPACITY_REACHED":
                    raise
                ep = None
            if ep is None or not ep.steps:
                break
            best = ep.best()
            bests[seed] = best if best is not None else settings.lo
            if (
                not ep.done
                and len(ep.steps) >= settings.max_steps
                and settings.max_steps_declared
                and not engine.has(episodes.EPISODE_NEVER_ENDS)
            ):
                engine.add(
                    episodes.EPISODE_NEVER_ENDS,
                    f"Every episode must end within `envkit.max_steps` "
                    f"({settings.max_steps}); the degenerate policy `{name}` "
                    f"({fuzz.short_json(action)}) played {settings.max_steps} steps "
                    f"with seed {seed} without `done=true`.",
                )
        if not bests:
            continue
        mean = sum(bests.values()) / len(bests)
        means[name] = mean
        if mean >= floor - EPS:
            per_seed = ", ".join(f"seed {k}: {v:g}" for k, v in bests.items())
            against = (
                f"the oracle's {oracle_best:g}"
                if oracle_best is not None and oracle_best < settings.hi - EPS
                else f"the maximum {settings.hi:g}"
            )
            hacks.append(
                f"`{name}` ({fuzz.short_json(action)}, every step) scored {mean:g} "
                f"on average over {len(bests)} seed(s) ({per_seed}), within "
                f"`floor_margin` {margin:g} of {against}"
            )
            evidence.append(
                {
                    "policy": name,
                    "action": action,
                    "mean": mean,
                    "bests": {str(k): v for k, v in bests.items()},
                }
            )
    if not any(ep.sent_valid() for ep in engine.episodes if ep.policy.startswith("degenerate:")):
        engine.skip(
            REWARD_HACKABLE,
            f"none of the {len(policies)} degenerate actions was accepted (each refused, or "
            "answered with a tool error)",
        )
        return means
    engine.ran(REWARD_HACKABLE)
    if hacks:
        engine.add(
            REWARD_HACKABLE,
            "Degenerate policies must score clearly below the maximum reward; "
            + "; ".join(hacks)
            + ". Most likely the reward rewards a proxy (length, "
            "presence) rather than the task.",
            policies=evidence,
        )
    return means
