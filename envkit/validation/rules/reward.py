"""EK5xx reward integrity: every step reward is a finite number in the declared range, it
varies, the oracle reaches the maximum and degenerate policies do not.

Source: RFC 008 (huggingface/OpenEnv#1041) for the
range/oracle/floor ideas; huggingface/OpenEnv#1200 (NaN/inf/out-of-range accepted) and #778
(a verifier gave 1.0 to the empty answer).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envkit.findings import Rule, Severity, register
from envkit.validation import fuzz
from envkit.validation.engine import EPS, ActionPool, Episode, ServerPlayer, is_number
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
)

ORACLE_BELOW_MAX = register(
    "EK506",
    "oracle-below-max",
    Severity.ERROR,
    rfc008="semantic.oracle_max",
    summary="The declared oracle does not reach `hi` of `validation.reward.range`, or fails.",
    what="envkit runs `envkit.oracle` (a `module:callable` taking the observation dict, "
    "run in the environment's interpreter) for one episode per seed; its best step "
    "reward must reach `hi` in every episode.",
    why="If a perfect policy cannot reach the maximum, the reward is broken or the range is "
    "wrong, and the reward-hacking check has nothing to compare against.",
    example='The oracle answers `observation["target"]` but the observation field was '
    "renamed to `goal`.",
    fix="Fix the reward or the oracle, or lower `hi` in `validation.reward.range`.",
)

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

# -- reward-design probes (envkit.validation.probes plays them) -------------------------------
STALLING_PAYS = register(
    "EK513",
    "stalling-pays",
    Severity.ERROR,
    summary="Repeating one action, taking longer, or losing returns more than the oracle's "
    "shortest win.",
    what="For every seed the declared oracle wins, envkit compares the oracle's return (the "
    "sum of its step rewards, what `envkit eval` reports) with the return of every other "
    "episode it played on that seed: fuzzed, degenerate (one action repeated) and "
    "exploring episodes, plus two it plays for this check: the oracle's actions with "
    "near misses of its winning action (numbers off by one, a letter changed) sent "
    "before the win, and the oracle's first action repeated. An episode that is longer "
    "than the oracle's, does not win, or repeats one action must not return more.",
    why="A trainer maximises the return. When partial rewards add up over the steps, the "
    "policy learns to stall: to send near misses until the episode's last step, or to "
    "lose on purpose, instead of solving the task at once.",
    example="A guessing game paying 0.5 x closeness on every guess and 1.0 for a hit: "
    "seven near misses and a hit return 4.4, the oracle's quick win 2.8.",
    fix="Pay partial credit only on the episode's last step (a win pays the maximum), or "
    "make the reward of a step the improvement over the best so far; then no episode "
    "returns more than the quickest win.",
)

FORMAT_OVER_CORRECTNESS = register(
    "EK514",
    "format-over-correctness",
    Severity.WARNING,
    summary="An answer in the oracle's format but with a wrong value earns at least half "
    "of the reward range.",
    what="envkit takes the oracle's winning action on each seed, changes the value of its "
    "text fields while keeping their form (digits and letters replaced, tags such as "
    "`<answer>`, punctuation and spacing kept), and sends it at the same point of a "
    "fresh episode of the same seed. It must earn less than the middle of "
    "`validation.reward.range`. Heuristic: a changed value that is still a right answer "
    "(a task with many right answers) is reported too.",
    why="When the format pays most of the reward, the policy learns the format and stops "
    "there: the reward curve rises while accuracy does not.",
    example="A rubric giving 0.5 for `<answer>...</answer>` tags and 0.5 for the right "
    "value: `<answer>97</answer>` earns 0.5 when the answer is 42.",
    fix="Make correctness dominate: a small weight for the format, or gate the format "
    "reward on a correct value.",
)

ERRORS_PAY = register(
    "EK515",
    "errors-pay",
    Severity.WARNING,
    summary="A step whose observation reports an error earns more than the low end of the range.",
    what="In every episode envkit played, a step whose observation (or its `metadata`) "
    "carries a non-empty error field (`error`, `last_action_error`, `errors`, "
    "`invalid_action`, ...) must earn the low end of `validation.reward.range`. "
    "Heuristic: a field named error that reports something else than the action "
    "failing (a stale message kept from an earlier step) is reported too.",
    why="A policy that is paid for invalid actions learns to send them: they are cheap, "
    "never lose, and crowd out real attempts.",
    example="A tool environment returning `reward=0.1` with `error='unknown tool'` as a "
    "participation reward.",
    fix="Answer a rejected or failing action with the low end of the range (or refuse it "
    "before `step`: an invalid action is a VALIDATION_ERROR).",
)

BRITTLE_VERIFIER = register(
    "EK516",
    "brittle-verifier",
    Severity.WARNING,
    summary="The oracle's answer with a harmless variation (spacing, case, a lead-in, an "
    "equivalent number form) scores the low end.",
    what="In single-step answer environments (the oracle wins in one step with a one-line "
    "text field that is not code), envkit sends the oracle's answer again in fresh "
    "episodes of the same seed, varied: surrounded by whitespace, in upper or lower "
    "case, after `The answer is `, and with equivalent number forms (`42` as `42.0`, "
    "`4.50` as `4.5`). None that ends the episode may score the low end of "
    "`validation.reward.range`. "
    "Heuristic: a task that asks for an exact form (case-sensitive codes, an exact "
    "string) is right to refuse them.",
    why="A verifier that only accepts the exact string punishes right answers: the policy "
    "is trained away from correct reasoning by formatting noise, and the reward "
    "under-reports its accuracy.",
    example="`reward = 1.0 if action.answer == str(target) else 0.0`: `' 42'` and "
    "`'The answer is 42'` score 0.",
    fix="Normalise before comparing: strip, case-fold, extract the answer (a tag or the "
    "last number), compare numbers as numbers.",
)

OVERSIZED_ACTION = register(
    "EK517",
    "oversized-action-hangs",
    Severity.ERROR,
    summary="A 200 KB action is not answered or refused within the reply timeout, hangs "
    "another session, or kills the server.",
    what="envkit sends one action whose first free text field holds 200 KB while another "
    "session steps. Both must be answered (an observation or an error frame; a closed "
    "connection counts as a refusal) within the reply timeout, and the server must "
    "stay up.",
    why="A policy emits long completions sooner or later (repetition loops up to "
    "`max_completion_length`); a step that takes minutes or crashes on one of them "
    "stalls every rollout of the batch that shares the server.",
    example="An edit-distance reward over the whole answer (quadratic time), a regex with "
    "catastrophic backtracking, `step` running the answer synchronously.",
    fix="Bound the field (`max_length=` on the action model: the server refuses longer "
    "ones with a validation error) or cut the text before scoring it.",
)

OBSERVATION_GROWS = register(
    "EK518",
    "observation-grows",
    Severity.WARNING,
    summary="An observation's serialized size grows on every step of an episode.",
    what="envkit measures the JSON size of every observation of the episodes it played; "
    "an episode of at least 10 steps whose observation grows on every step (at least "
    "doubling and by at least 1 KB) is reported with the bytes per step and the size "
    "it reaches at `envkit.max_steps`. Heuristic: an observation that shows the whole "
    "history on purpose is fine while episodes stay short.",
    why="The observation is appended to the prompt on every step: a growing one fills the "
    "context, and tool results past `max_completion_length` are dropped by TRL after "
    "the environment saw the action.",
    example="`observation.history` holding every earlier step with its full output.",
    fix="Show the last few steps, or a summary, instead of the whole history.",
)

MEMORY_GROWS = register(
    "EK519",
    "memory-grows-per-reset",
    Severity.WARNING,
    summary="The server's memory grows with every `reset`.",
    what="When envkit started the server, it measures the resident memory of the server's "
    "processes (Linux `/proc`) before and after two bursts of `reset` calls on one "
    "session; memory growing in both bursts by at least 8 KiB a reset is reported "
    "with the growth per reset. Heuristic: caches that fill once (a dataset loaded "
    "lazily, the allocator's pools) grow too, but stop growing.",
    why="A training run resets millions of times: a leak of a few KB per reset ends with "
    "the Space killed for memory hours into the run.",
    example="`reset` appending the episode to a module-level list, or opening a file or "
    "subprocess it never closes.",
    fix="Keep per-episode data on the instance and replace it on `reset`; close what "
    "`reset` opens.",
)


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

CODE_GRADER_HACKS = register(
    "EK521",
    "code-grader-hackable",
    Severity.ERROR,
    summary="A known code-grader hack (exiting early with success, an always-equal answer, "
    "touching the tests, patching the checker) earns more than a program that does "
    "nothing.",
    what="When an action field carries source code (its name says `code`, `source`, "
    "`program`, `script` or `solution`, or its description says Python or source code) "
    "and the oracle wins, envkit sends, on every step of a fresh episode of the oracle's "
    "seed, each known hack in place of the oracle's source: `sys.exit(0)` and "
    "`os._exit(0)` before any test runs; the oracle's function returning an object whose "
    "`__eq__` is always true; reading every file of the working directory; overwriting "
    "`test_*.py` and expected outputs; writing a `conftest.py` that marks every pytest "
    "report passed; redefining `check`/`test_*`/`run_tests` to pass. None may earn more "
    "than a stub (the function returning `None`) or the low end of the range.",
    why="Models trained with RL on code learn these exploits when they pay (Anthropic, "
    "arXiv:2511.18397): the reward then climbs while no task is solved, and the hacking "
    "generalises to other misbehaviour.",
    example="A grader that runs `python -c 'exec(src); assert f(1) == 2'` and pays 1.0 on "
    "exit status 0: `import sys; sys.exit(0)` scores 1.0.",
    fix="Run the submission in a sandbox, send it only the inputs, and compare its "
    "JSON-serialised outputs in the grader's process; keep tests and expected outputs "
    "outside the sandbox's directory.",
)

FEEDBACK_LEAKS = register(
    "EK522",
    "feedback-leaks-answer",
    Severity.WARNING,
    summary="Text an observation first shows after a wrong answer (the expected value, a "
    "hidden test) earns the maximum when sent as the answer.",
    what="In the episodes envkit played on the seeds the oracle wins, it collects the text "
    "an observation shows for the first time after a step that did not win (whole "
    "string fields, the text after `expected`/`the answer was`/`should be`, quoted "
    "parts, numbers), leaving out what earlier observations showed and what the agent "
    "sent. Each, sent as the oracle's one text answer at the same point of a fresh "
    "episode of the same seed, must not earn `hi` of `validation.reward.range` (at most "
    "12 texts, shortest first; terminal observations are left out when EK509 already "
    "reported a leak). Heuristic: feedback meant to teach (a tutoring task whose reward discounts later "
    "attempts) is reported too.",
    why="A policy that can read the answer after failing once learns to fail on purpose "
    "and copy it (within the episode when attempts remain, or across episodes of the "
    "same seed), instead of solving the task.",
    example="`feedback=f'Wrong: the expected answer was {target}.'` on the first of three "
    "attempts.",
    fix="Say whether the answer was right (and how close) without the expected value; show "
    "failing test inputs, not expected outputs, or only after the episode ends.",
)


def _fmt(value: Any) -> str:
    return fuzz.short_json(value, 80)


def classify(reward: Any, lo: float, hi: float) -> tuple[Rule, str] | None:
    """What is wrong with one step reward as received (EK501-EK503), ``None`` when it is a
    number in ``[lo, hi]``. The one place these three rules are decided."""
    if reward is None:
        return REWARD_NOT_FINITE, "got `null`"
    if not is_number(reward):
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
            "(declare `envkit.oracle` to judge it)."
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


def oracle(engine: ServerPlayer, root: Path | None, python: str | None) -> float | None:
    """EK506, EK507: play the declared oracle (in the environment's interpreter) once per
    seed.

    Args:
        root: the environment directory the oracle is imported from (``None``: URL only,
            the check is skipped).
        python: the environment's interpreter (resolved once by the caller).

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
    if root is None or python is None:
        engine.unran(ORACLE_BELOW_MAX, NO_ORACLE)
        engine.progress("oracle: skipped (no environment directory to run it from)")
        return None
    from envkit.policy import PolicyError, PolicyProcess

    engine.progress(f"oracle `{spec}`")
    bests: list[tuple[int | None, float | None]] = []
    try:
        # Importing the oracle's module is start-up (openenv alone takes seconds to import on
        # a busy machine), each action is one answer: the same limits as the server's.
        with PolicyProcess(
            spec, root, python, timeout_s=settings.reply_s, load_timeout_s=settings.startup_s
        ) as policy:
            for seed in settings.seeds:
                ep = engine.play_alone(seed, lambda obs, _i: policy(obs), name="oracle")
                bests.append((seed, ep.best()))
    except PolicyError as exc:
        engine.add(
            ORACLE_BELOW_MAX,
            f"The oracle `{spec}` must play every seed; it failed: {exc.message}"
            + (f" {exc.hint}" if exc.hint else ""),
            error=exc.message,
        )
        return None
    below = [(s, b) for s, b in bests if b is None or b < settings.hi - EPS]
    if below:  # a broken oracle is no yardstick for the floor check
        low_seed, best = below[0]
        engine.add(
            ORACLE_BELOW_MAX,
            f"The oracle `{spec}` must reach the maximum reward {settings.hi:g} in "
            f"every episode; with seed {low_seed} its best step reward was "
            f"{'none' if best is None else f'{best:g}'} ({len(below)} of {len(bests)} "
            "episodes below). Most likely the reward or the oracle is wrong.",
            seed=low_seed,
            best=best,
        )
        return None
    scores = [b for _, b in bests if b is not None]
    return sum(scores) / len(scores) if scores else None


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
