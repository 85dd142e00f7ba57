"""EK5xx reward-integrity rules (registered here, checked by envkit.validation.runtime).

Source: issue #3 ("EK5xx reward integrity"); RFC 008 (huggingface/OpenEnv#1041) for the
range/oracle/floor ideas; huggingface/OpenEnv#1200 (NaN/inf/out-of-range accepted) and #778
(a verifier gave 1.0 to the empty answer).
"""

from envkit.findings import Severity, register

REWARD_NOT_FINITE = register(
    "EK501", "reward-not-finite", Severity.ERROR,
    summary="A step reward is null on the wire: NaN, infinity, or no reward set.",
    what="Every step reward envkit receives must be a finite number. openenv-core serialises "
         "NaN and ±inf as `null`, so a step reward of `null` is a finding (a `reset` reward "
         "of null is fine).",
    why="One NaN reward turns the policy's loss into NaN and silently ruins the run "
        "(huggingface/OpenEnv#1200).",
    example="`reward = correct / total` with `total == 0`; `step` forgetting to set `reward`.",
    fix="Guard divisions and logs, clamp the reward, and always set `reward=` on the "
        "observation `step` returns.",
)

REWARD_NOT_NUMERIC = register(
    "EK502", "reward-not-a-number", Severity.ERROR,
    summary="A step reward is not a number (a boolean, a string, a list, ...).",
    what="The step reward on the wire must be an int or a float; booleans are refused.",
    why="Trainers sum and normalise rewards; `true` or `\"1\"` either crashes them or is "
        "coerced differently by each client.",
    example="`reward=is_correct` (a bool) instead of `reward=float(is_correct)`.",
    fix="Return `reward=float(...)`.",
)

REWARD_OUT_OF_RANGE = register(
    "EK503", "reward-out-of-range", Severity.ERROR,
    summary="A step reward lies outside `validation.reward_range` ([0, 1] by default).",
    what="Every step reward envkit receives must lie in `[lo, hi]` of "
         "`validation.reward_range`.",
    why="Reward scale is part of the training recipe (advantages, KL weights, clipping); an "
        "unbounded reward lets one rollout dominate the batch (RFC 008 defaults to [0, 1]).",
    example="The `openenv init` template: `reward = len(message) * 0.1`, 20.0 for a "
            "200-character answer.",
    fix="Bound the reward (normalise or clamp it), or declare the true range in "
        "`validation.reward_range`.",
)

REWARD_CONSTANT = register(
    "EK504", "reward-constant", Severity.WARNING,
    summary="Every step envkit played got the same reward: no learning signal.",
    what="Across all steps of the runtime stage (fuzzed, degenerate and oracle policies) the "
         "reward never changes.",
    why="A constant reward gives zero advantage to every rollout: training runs, burns "
        "GPU-hours, and learns nothing.",
    example="The rubric is not wired up and `_apply_rubric` silently returns 0.0 "
            "(openenv-core).",
    fix="Check the reward is computed from the action; declare an oracle so envkit can "
        "see the maximum reachable.",
)

REWARD_HACKABLE = register(
    "EK505", "reward-hackable", Severity.ERROR,
    summary="A degenerate policy reaches the maximum reward or scores within `floor_margin` "
            "of the oracle.",
    what="envkit plays degenerate policies built from the action schema: empty values "
         "(empty strings, zeros, false, empty lists), minimum values, maximum values "
         "(longest strings, largest numbers) and the first fuzzed action repeated. None may "
         "reach `hi` of `validation.reward_range`, nor score (best step reward, averaged over "
         "the seeds) within `validation.floor_margin` of the oracle.",
    why="The policy will find the shortcut: a verifier on the Hub gave 1.0 to the empty "
        "answer (huggingface/OpenEnv#778), and a length-based reward trains verbosity.",
    example="`reward = len(message) * 0.1`: a 200-character answer of `a`s scores 20.",
    fix="Reward the task, not a proxy: check the answer against the target; give the empty "
        "or trivial answer the minimum.",
)

ORACLE_BELOW_MAX = register(
    "EK506", "oracle-below-max", Severity.ERROR,
    summary="The declared oracle does not reach `hi` of `validation.reward_range`, or fails.",
    what="envkit runs `validation.oracle` (a `module:callable` taking the observation dict, "
         "run in the environment's interpreter) for one episode per seed; its best step "
         "reward must reach `hi` in every episode.",
    why="If a perfect policy cannot reach the maximum, the reward is broken or the range is "
        "wrong, and the reward-hacking check has nothing to compare against.",
    example="The oracle answers `observation[\"target\"]` but the observation field was "
            "renamed to `goal`.",
    fix="Fix the reward or the oracle, or lower `hi` in `validation.reward_range`.",
)

NO_ORACLE = register(
    "EK507", "no-oracle", Severity.INFO,
    summary="No oracle is declared, so the reward-hacking floor is checked against `hi` only.",
    what="`validation.oracle` is not set in openenv.yaml (or envkit validated a URL without "
         "the environment's files).",
    why="An oracle proves the maximum reward is reachable and lets envkit compare "
        "degenerate policies with the best one.",
    example="`validation:` without `oracle:`.",
    fix="Write `server/oracle.py` with `def policy(observation: dict) -> dict` and set "
        "`validation.oracle: server.oracle:policy`.",
)
