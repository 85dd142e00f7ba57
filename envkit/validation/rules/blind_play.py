"""EK524 blind-policy-paid: the question-blind policies of :mod:`envkit.blind.library`, played
through every action shape the environment offers, and judged against the oracle's return.

How a policy is played: on each seed the oracle won, the answer action is the oracle's winning
action with every answer slot blanked;
the policy's value goes in one slot at a time. Tool calls are played with arguments drawn
from each tool's input schema (:mod:`envkit.validation.offered`). Every action goes to a
fresh episode of the seed, from ``reset``: the policy never sees what the oracle's earlier
steps revealed.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from envkit.blind import files, library, shapes, slots
from envkit.errors import WireError
from envkit.findings import Severity, register
from envkit.validation import fuzz
from envkit.validation.engine import EPS, Episode, ServerPlayer, is_number
from envkit.validation.probing import Probes, episode_return
from envkit.validation.rules import determinism
from envkit.wire import EnvErrorFrame, EnvSession

MAX_SLOTS = 2  # answer slots of one action a policy's values go into
MAX_REPEAT = 20  # steps of a sequence policy that repeats (stall, repeat-last)
MAX_TOOLS = 6  # tools the sequence policies call
MAX_READ_BACK = 4  # texts of tool errors sent back as answers

#: Why EK524 and EK525 are not judged without the oracle's wins: the top of the range is no
#: yardstick for an environment that pays partial credit by design.
NO_YARDSTICK = (
    "no oracle reached the top of the range to measure against (declare `envkit.oracle`; "
    "a `--url` run needs the environment's directory too)"
)

#: Rules that name a route to reward a question-blind policy may also take: when one of them
#: reported, EK524 and EK525 do not report the content-free payout again.
NAMED_ROUTES = ("EK505", "EK509", "EK510", "EK513", "EK514", "EK515", "EK522")

BLIND_POLICY_PAID = register(
    "EK524",
    "blind-policy-paid",
    Severity.ERROR,
    summary="A question-blind policy (one that never solves the task) earns a share of the "
    "oracle's return, or a wrong answer is paid like the right one.",
    what="envkit plays its library of question-blind policies (`envkit rules --policies`; "
    "docs/policies.md) on every declared seed, through every action shape the environment "
    "offers: plain fields from `/schema`, and tool calls with arguments drawn from each "
    "tool's input schema (the tool list in the observation, or `tools/list`). Each policy "
    "puts its value in the oracle's winning action (every answer slot blanked), or acts "
    "through tools and steps alone (every tool once, one tool over and over, invalid "
    "arguments with the errors read back, giving up, stalling to the step limit), each in a "
    "fresh episode from `reset`. A content-free policy (empty, whitespace, a format "
    "skeleton, the prompt copied back, every option or number or word the observation "
    "shows, every answer the oracle gave on the other seeds, special values, a claimed "
    "verdict, ...) earning more than 5 % of the oracle's "
    "return on every seed (each reply of a policy, the same or in the same position on "
    "every seed, is judged by the least it earned) is a warning, more than half of it an error "
    "(`envkit.blind_floor: [warning, error]` changes both). A corrupted oracle answer (off by "
    "one, truncated, reordered, denied, listed among wrong answers, another value in the "
    "same form, a proof left to a placeholder such as `sorry`, the oracle's episode with each "
    "file it writes commented out line by line) "
    "earning the oracle's return less `floor_margin` on every seed is an error. "
    "Judged only when the declared oracle reaches the top of the range (the yardstick). "
    "When no action of any policy was accepted, the check is skipped with that reason.",
    why="A trainer is an optimiser: a route to reward that skips the task is the route it "
    "finds. A grader that pays 0.35 for any non-empty reply, or accepts the right word "
    "anywhere among others, trains a policy to emit that instead of solving the task.",
    example="A grader scoring character overlap with the answer: the alphabet and digits "
    "repeated (`long-repetition`) earn 0.49 of the oracle's 1.0.",
    fix="Pay only for the task: compare the parsed answer exactly (or within a tolerance "
    "that fits the output), give no credit for format or length alone, and never credit "
    "an answer found anywhere inside the reply.",
    limits="Policies act from `reset`: a task that must be set up by earlier steps (a door "
    "to open first) is judged only through the sequence policies. When a rule that names the "
    "route has reported it — a degenerate action near the maximum (EK505), the answer "
    "readable (EK509), a fresh instance that pays (EK510), stalling (EK513), the format "
    "alone (EK514), errors that pay (EK515), feedback that reveals the answer (EK522) — the "
    "content-free policies are not reported again.",
    reported_as=NAMED_ROUTES,
    classes=(
        "BGW-101",
        "BGW-122",
        "BGW-123",
        "BGW-115",
        "BGW-131",
        "BGW-135",
        "BGW-138",
        "TerminalWrench:keyword-gaming",
        "TerminalWrench:output-spoofing",
        "TerminalWrench:metric-spoofing",
        "rl-envdoctor:exploit-pays-out",
        "rl-envdoctor:empty-ties-correct",
        "rl-envdoctor:grader-accepts-wrong",
        "rl-envdoctor:prompt-leaks-answer",
    ),
)


@dataclass
class Played:
    """One episode a policy played.

    Attributes:
        actions: the actions sent (in order).
        episode: the episode as recorded (its answered steps; ``policy`` is
            ``blind:NAME``), added to :attr:`ServerPlayer.episodes` for the probes after
            this one (the training-signal probe counts it as a weak policy's).
        ret: the sum of its finite step rewards.
        texts: the strings of the observations it received.
    """

    actions: list[dict[str, Any]]
    episode: Episode
    ret: float = 0.0
    texts: list[str] = field(default_factory=list)


@dataclass
class Outcome:
    """What one policy earned on one seed: its best episode."""

    policy: str
    seed: int | None
    played: Played
    share: float  # of the yardstick (the oracle's return, else the top of the range)
    value: object = None
    slot: str = ""


def _texts(value: object, out: list[str], depth: int = 0) -> None:
    if depth > 5:
        return
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            if k not in ("tools", "input_schema", "inputSchema"):
                _texts(v, out, depth + 1)
    elif isinstance(value, list):
        for v in value[:50]:
            _texts(v, out, depth + 1)


def play_actions(
    engine: ServerPlayer,
    s: EnvSession,
    seed: int | None,
    actions: list[dict[str, Any]],
    name: str = "blind",
) -> Played:
    """``reset(seed)`` on ``s``, then ``actions`` in order until ``done``. A step answered
    with an error frame (a refused action, an exception in ``step``) is left out.

    Raises:
        EnvErrorFrame: ``reset`` failed, or the server is at capacity.
    """
    first = engine.reset(s, seed)
    out = Played(list(actions), Episode(seed, first.observation, policy=f"blind:{name}"))
    for action in actions:
        try:
            res = engine.call("`step`", s.step, action)
        except EnvErrorFrame as exc:
            if exc.code == "CAPACITY_REACHED":
                raise
            continue
        out.episode.record(res, action)
        r = res.reward
        if is_number(r) and math.isfinite(float(r)):
            out.ret += float(r)
        _texts(res.observation, out.texts)
        if res.done:
            break
    return out


# -- what to play --------------------------------------------------------------------------
def _blank(slot: slots.Slot) -> object:
    """The slot's emptiest value the schema allows: ``""``, ``[]``, ``0`` or the declared
    minimum."""
    if slot.kind == "array":
        fewest = slot.node.get("minItems")
        return [""] * fewest if isinstance(fewest, int) and fewest > 0 else []
    if slot.kind == "string":
        shortest = slot.node.get("minLength")
        return " " * shortest if isinstance(shortest, int) and shortest > 0 else ""
    for value in (0, slot.node.get("minimum"), slot.node.get("exclusiveMinimum")):
        if is_number(value) and slots.fits(value, slot):
            return int(value) if slot.kind == "integer" else value
    return slot.value


def blanked(action: dict[str, Any], found: list[slots.Slot]) -> dict[str, Any]:
    """``action`` with every slot in ``found`` blanked (:func:`_blank`)."""
    out = action
    for slot in found:
        out = slots.fill(out, slot, _blank(slot))
    return out


@dataclass
class Plan:
    """One seed the oracle won, with its answer action and yardstick.

    Attributes:
        seed: the reset seed.
        answer: the oracle's winning action with every answer slot blanked.
        found: its answer slots (their values are the oracle's: the corruptions read them).
        observation: the reset observation of the seed (what a policy reads).
        yardstick: the oracle's return on the seed.
        steps: steps a value is sent for (the oracle's winning episode length).
        actions: the oracle's winning actions, in order (what the policies that change
            the oracle's episode start from).
        others: per answer slot (its dotted path), the oracle's answers there on the other
            seeds it won, declared or not (:func:`_answers_by_seed`).
    """

    seed: int | None
    answer: dict[str, Any]
    found: list[slots.Slot]
    observation: dict[str, Any]
    yardstick: float
    steps: int
    actions: list[dict[str, Any]] = field(default_factory=list)
    others: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _oracle_return(engine: ServerPlayer, seed: int | None) -> float | None:
    ep = next((e for e in engine.episodes if e.policy == "oracle" and e.seed == seed), None)
    return episode_return(ep) if ep is not None else None


def plans(probes: Probes) -> list[Plan]:
    """The seeds the oracle won (:attr:`Probes.wins`), each with its answer action and
    yardstick; ``[]`` without wins (EK524 and EK525 are then skipped)."""
    out: list[Plan] = []
    answers = _answers_by_seed(probes)
    for seed, win in probes.wins.items():
        found = slots.find(win.actions[-1], probes.play_schema)
        ret = _oracle_return(probes.engine, seed)
        ret = max(ret, episode_return(win)) if ret is not None else episode_return(win)
        answer = blanked(win.actions[-1], found)
        others = {
            slot.where: tuple(
                dict.fromkeys(
                    a[slot.where] for s, a in answers.items() if s != seed and slot.where in a
                )
            )[:MAX_OTHERS]
            for slot in found
        }
        out.append(
            Plan(
                seed,
                answer,
                found,
                win.reset_obs,
                ret,
                max(1, len(win.actions)),
                win.actions,
                others,
            )
        )
    return out


MAX_OTHERS = 12  # answers of other seeds other-seeds-answers sends at once
MAX_OTHER_CHARS = 200  # an answer longer than this (a program, an essay) is not sent


def _answers_by_seed(probes: Probes) -> dict[int | None, dict[str, str]]:
    """The oracle's text answers on every seed it won, declared or not (its first winning
    step's action): seed -> slot path -> value, for values of 1 to
    :data:`MAX_OTHER_CHARS` characters."""
    hi = probes.engine.settings.hi
    out: dict[int | None, dict[str, str]] = {}
    for ep in probes.engine.episodes:
        if ep.policy not in ("oracle", "oracle:undeclared") or ep.seed in out:
            continue
        at = next((i for i, r in enumerate(ep.rewards) if is_number(r) and r >= hi - EPS), None)
        if at is None or at >= len(ep.actions):
            continue
        out[ep.seed] = {
            slot.where: slot.value
            for slot in slots.find(ep.actions[at], probes.play_schema)
            if isinstance(slot.value, str) and 0 < len(slot.value) <= MAX_OTHER_CHARS
        }
    return out


#: One episode to play: the policy, its variant (the slot and the value's position in the
#: policy's list: the same variant on every seed is one fixed, or positional, policy), the
#: slot's path, the value sent there (``None`` for a sequence) and the actions.
Planned = tuple[str, str, str, object, list[dict[str, Any]]]


def value_episodes(plan: Plan) -> list[Planned]:
    """The episodes of every value policy that fits a slot of ``plan``'s answer action."""
    out: list[Planned] = []
    for slot in plan.found[:MAX_SLOTS]:
        ctx = library.Context.of(
            plan.observation,
            "string" if slot.kind == "array" else slot.kind,  # a list is sent text values
            slot.node.get("maxLength") if isinstance(slot.node.get("maxLength"), int) else None,
        )
        # a list's corruptions start from its first element (a wrong answer either way)
        ctx = dataclasses.replace(ctx, others=plan.others.get(slot.where, ()))
        truth = slot.value[0] if isinstance(slot.value, list) else slot.value
        oracle_ctx = dataclasses.replace(ctx, oracle=truth)
        for p in library.POLICIES.values():
            raws = library.values_for(p, oracle_ctx if p.needs_oracle else ctx)
            for i, raw in enumerate(raws):
                value = slots.coerce(raw, slot)
                if value is None or not slots.fits(value, slot):
                    continue
                action = slots.fill(plan.answer, slot, value)
                out.append((p.name, f"{slot.where}#{i}", slot.where, value, [action] * plan.steps))
    return out


def _call(
    template: dict[str, Any], shape: shapes.CallShape, tool: shapes.Tool, args: object
) -> dict[str, Any]:
    return {**template, shape.name_field: tool.name, shape.arguments_field: args}


def _wrong_args(tool: shapes.Tool) -> dict[str, Any]:
    """Arguments of the wrong type for every property ``tool`` declares (a string where a
    number is expected, a number where a string is)."""
    props = tool.schema.get("properties")
    if not isinstance(props, dict) or not props:
        return {"__envkit_unknown__": 1}
    out: dict[str, Any] = {}
    for name, node in props.items():
        types = fuzz.types_of(fuzz.resolve(node, tool.schema))
        out[name] = 12345 if "string" in types else "not-a-number"
    return out


def sequence_episodes(probes: Probes, plan: Plan) -> list[tuple[str, list[dict[str, Any]]]]:
    """``(policy, actions)`` of the sequence policies on ``plan`` (the read-back of tool
    errors is played by :func:`_read_back`)."""
    settings = probes.engine.settings
    repeat = min(settings.max_steps, MAX_REPEAT)
    offered = probes.offered
    out: list[tuple[str, list[dict[str, Any]]]] = [
        ("give-up", [plan.answer]),
        ("repeat-last", [plan.answer] * repeat),
    ]
    shape = offered.call if offered is not None else None
    out += _commented_writes(plan, shape)
    tools = offered.tools[:MAX_TOOLS] if offered is not None else []
    if shape is None or not tools:
        minimal = fuzz.extreme_value(probes.play_schema, probes.play_schema, "empty")
        if isinstance(minimal, dict):
            out.append(("stall", [minimal] * repeat))
        return out
    answer_tool = shapes.tool_of(plan.answer, shape)
    others = [t for t in tools if t.name != answer_tool]
    calls = {
        t.name: _call(plan.answer, shape, t, fuzz.extreme_value(t.schema, t.schema, "empty"))
        for t in tools
    }
    out.append(("every-tool-once", [calls[t.name] for t in others] + [plan.answer]))
    out += _write_paths(plan, shape, tools)
    for t in others[:3]:
        out.append(("one-tool-repeated", [calls[t.name]] * repeat))
    if others:
        out.append(("stall", [calls[others[0].name]] * repeat))
    return out


#: A tool's argument that names a file, and one that carries what is written to it.
PATH_ARG = re.compile(r"(?:^|_)(?:path|file|filename|filepath|dest|destination)$", re.IGNORECASE)
CONTENT_ARG = re.compile(r"(?:^|_)(?:content|contents|text|data|body)$", re.IGNORECASE)
MAX_PATHS = 3  # files named in the observation that write-shown-paths overwrites


def _path_and_content(keys: Iterable[str]) -> tuple[str | None, str | None]:
    """The first of ``keys`` that names a file (:data:`PATH_ARG`) and the first that carries
    what is written to it (:data:`CONTENT_ARG`); None for either that is missing."""
    names = list(keys)
    return (
        next((k for k in names if PATH_ARG.search(k)), None),
        next((k for k in names if CONTENT_ARG.search(k)), None),
    )


def _write_paths(
    plan: Plan, shape: shapes.CallShape, tools: list[shapes.Tool]
) -> list[tuple[str, list[dict[str, Any]]]]:
    """write-shown-paths: each file the reset observation names, written with each
    vacuous content (:data:`files.VACUOUS`) by each tool taking a path and a content,
    then the empty answer."""
    shown: list[str] = []
    _texts(plan.observation, shown)
    paths = files.shown_paths(shown)[:MAX_PATHS]
    out: list[tuple[str, list[dict[str, Any]]]] = []
    for tool in tools:
        props = tool.schema.get("properties")
        if not isinstance(props, dict):
            continue
        where, what = _path_and_content(props)
        if where is None or what is None:
            continue
        base = fuzz.extreme_value(tool.schema, tool.schema, "empty")
        base = base if isinstance(base, dict) else {}
        for path in paths:
            for content in files.VACUOUS:
                write = _call(plan.answer, shape, tool, {**base, where: path, what: content})
                out.append(("write-shown-paths", [write, plan.answer]))
    return out


def _commented_writes(
    plan: Plan, shape: shapes.CallShape | None
) -> list[tuple[str, list[dict[str, Any]]]]:
    """fix-commented-out: the oracle's actions with the content of each file it writes (a
    path and a content, as the action's fields or a tool call's arguments) commented out
    line by line (:func:`files.commented_out`); ``[]`` when it writes none."""
    changed = False

    def inert(fields: dict[str, Any]) -> dict[str, Any]:
        nonlocal changed
        where, what = _path_and_content(fields)
        if where is None or what is None:
            return fields
        path, content = fields[where], fields[what]
        if not isinstance(path, str) or not isinstance(content, str):
            return fields
        text = files.commented_out(path, content)
        if text is None:
            return fields
        changed = True
        return {**fields, what: text}

    acts: list[dict[str, Any]] = []
    for act in plan.actions:
        args = act.get(shape.arguments_field) if shape is not None else None
        if shape is not None and isinstance(args, dict):
            act = {**act, shape.arguments_field: inert(args)}
        acts.append(inert(act))
    return [("fix-commented-out", acts)] if changed else []


def _read_back(probes: Probes, plan: Plan, s: EnvSession) -> list[Planned]:
    """invalid-arguments-read-back: call each tool with wrong-typed arguments, then send each
    text the errors showed (and each number in them) as the answer."""
    offered = probes.offered
    if offered is None or offered.call is None or not offered.tools or not plan.found:
        return []
    shape = offered.call
    bad = [_call(plan.answer, shape, t, _wrong_args(t)) for t in offered.tools[:MAX_TOOLS]]
    first = play_actions(probes.engine, s, plan.seed, bad)
    shown: list[str] = []
    _texts(plan.observation, shown)
    texts = [t for t in dict.fromkeys(first.texts) if t.strip() and t not in set(shown)]
    slot = plan.found[0]
    candidates: list[object] = []
    for text in texts:
        candidates += [*library.NUMBER.findall(text), text.strip()]
    out: list[Planned] = []
    for i, raw in enumerate(list(dict.fromkeys(candidates))[: MAX_READ_BACK * 2]):
        value = slots.coerce(raw, slot)
        if value is None or not slots.fits(value, slot):
            continue
        acts = [*bad, slots.fill(plan.answer, slot, value)]
        out.append(("invalid-arguments-read-back", f"#{i}", slot.where, value, acts))
        if len(out) >= MAX_READ_BACK:
            break
    return out


# -- the check -----------------------------------------------------------------------------
def blind_policies(probes: Probes) -> None:
    """EK524: play every fitting question-blind policy on each seed and judge its return."""
    engine, settings = probes.engine, probes.engine.settings
    if not probes.wins:
        engine.skip(BLIND_POLICY_PAID, NO_YARDSTICK)
        return
    todo = plans(probes)
    if not todo:
        engine.skip(BLIND_POLICY_PAID, "no action was accepted by the server to build on")
        return
    outcomes: dict[tuple[str, str], dict[int | None, Outcome]] = {}
    sent, accepted = 0, False
    warn_at = settings.blind_floor[0]
    for n, plan in enumerate(todo):
        if not probes.time_left("question-blind policies"):
            break
        # a variant is judged by the least it earns over the seeds: after the first seed,
        # only the variants that earned there are played again
        paid = {
            key
            for key, by_seed in outcomes.items()
            if (first := by_seed.get(todo[0].seed)) is not None and first.share > warn_at + EPS
        }
        seen: dict[str, Played] = {}
        replayed: list[tuple[str, Played, Played]] = []  # (policy, first, again)
        s = engine.open()
        try:
            episodes = value_episodes(plan)
            episodes += [
                (n, f"#{i}", "", None, acts)
                for i, (n, acts) in enumerate(sequence_episodes(probes, plan))
            ]
            try:
                episodes += _read_back(probes, plan, s)
            except (EnvErrorFrame, WireError) as exc:
                if isinstance(exc, EnvErrorFrame) and exc.code == "CAPACITY_REACHED":
                    raise
            for name, variant, where, value, acts in episodes:
                if n > 0 and (name, variant) not in paid:
                    continue
                key = fuzz.json_key(acts)
                played = seen.get(key)
                if played is None:
                    if not probes.time_left("question-blind policies"):
                        break
                    played = play_actions(engine, s, plan.seed, acts, name)
                    seen[key] = played
                    sent += len(acts)
                    if played.episode.sent_valid():
                        engine.episodes.append(played.episode)
                        accepted = True
                        if n == 0 and library.POLICIES[name].judged == "accepted":
                            # a wrong answer is where a sampled test set shows: replayed
                            again = play_actions(engine, s, plan.seed, acts, name)
                            sent += len(acts)
                            replayed.append((name, played, again))
                share = share_of(played.ret, plan, settings.lo)
                outcomes.setdefault((name, variant), {})[plan.seed] = Outcome(
                    name, plan.seed, played, share, value, where
                )
        finally:
            s.close()
        _rewards_drift(engine, plan, replayed)
    if not accepted:
        engine.skip(
            BLIND_POLICY_PAID,
            f"none of the {sent} actions the question-blind policies sent was accepted "
            "(every one answered with an error frame)",
        )
        return
    engine.ran(BLIND_POLICY_PAID)
    _judge(probes, todo, outcomes)


def _rewards_drift(
    engine: ServerPlayer, plan: Plan, replayed: list[tuple[str, Played, Played]]
) -> None:
    """EK412 from a wrong answer played twice on one seed (the corrupted-oracle policies'
    episodes on the first seed): the right answer passes any sample of tests, a wrong one
    only some, so a grader that draws its tests without the seed pays it differently."""
    if engine.has(determinism.REWARD_NONDETERMINISTIC):
        return  # the determinism check said it already
    for name, first, again in replayed:
        a, b = first.episode.rewards, again.episode.rewards
        if len(a) == len(b) and fuzz.first_difference(a, b) is None:
            continue
        engine.add(
            determinism.REWARD_NONDETERMINISTIC,
            f"The same seed and actions must earn the same rewards; the `{name}` policy's "
            f"wrong answer, sent twice after `reset(seed={plan.seed})`, earned "
            f"{first.ret:g} and then {again.ret:g}. The right answer passes whatever the "
            "grader draws; a wrong one shows that its tests or judge are drawn without the "
            "episode's seed, so GRPO's groups score the same completion differently.",
            seed=plan.seed,
            policy=name,
            actions=first.actions,
            rewards=[a, b],
        )
        return


def share_of(ret: float, plan: Plan, lo: float) -> float:
    """An episode's return as a share of ``plan``'s yardstick, 0 at the low end ``lo``."""
    span = plan.yardstick - lo
    return (ret - lo) / span if span > EPS else 0.0


def _judge(
    probes: Probes, todo: list[Plan], outcomes: dict[tuple[str, str], dict[int | None, Outcome]]
) -> None:
    """A policy variant (one fixed or positional reply, or one sequence) counts by the least
    it earned over the seeds: a reply that pays on every seed is a route to reward; the best
    of several replies per seed would be a search with the reward as feedback, and a reply
    right by chance on some seeds (one of two numbers shown) is no route. A policy counts by
    its best variant."""
    engine, settings = probes.engine, probes.engine.settings
    warn_at, error_at = settings.blind_floor
    margin_share = settings.floor_margin / max(settings.hi - settings.lo, EPS)
    seeds = [p.seed for p in todo]
    best: dict[str, tuple[float, Outcome]] = {}
    for (name, _variant), by_seed in outcomes.items():
        if library.POLICIES[name].judged == "none" or not by_seed:
            continue
        least = min(by_seed[s].share if s in by_seed else 0.0 for s in seeds)
        shown = min(by_seed.values(), key=lambda o: o.share)
        if name not in best or least > best[name][0] + EPS:
            best[name] = (least, shown)
    offenders: list[tuple[Severity, float, Outcome]] = []
    for name, (least, o) in best.items():
        if library.POLICIES[name].judged == "accepted":
            if least >= 1 - margin_share - EPS:
                offenders.append((Severity.ERROR, least, o))
            continue
        if named_route(engine):
            continue  # a rule that names the route reported it
        if least > error_at + EPS:
            offenders.append((Severity.ERROR, least, o))
        elif least > warn_at + EPS:
            offenders.append((Severity.WARNING, least, o))
    if not offenders:
        return
    offenders.sort(key=lambda t: (t[0] != Severity.ERROR, -t[1]))
    severity = offenders[0][0]
    parts = [_describe(o, share) for _sev, share, o in offenders[:4]]
    more = f" ({len(offenders) - 4} more in the JSON report)" if len(offenders) > 4 else ""
    top = offenders[0][2]
    engine.findings.append(
        BLIND_POLICY_PAID.finding(
            f"A policy that never solves the task must earn at most {warn_at:.0%} of "
            "the oracle's return on every seed (a wrong answer: clearly less than the right one); "
            + "; ".join(parts)
            + more
            + ". Most likely the grader pays for something other than the task (presence, "
            f"length, overlap, containment). Replay: `{replay_command(engine, top.seed, top.played.actions)}`",
            severity=severity,
            policies=[
                {
                    "policy": o.policy,
                    "judged": library.POLICIES[o.policy].judged,
                    "share": round(share, 4),
                    "seed": o.seed,
                    "slot": o.slot,
                    "value": o.value,
                    "actions": o.played.actions,
                    "return": o.played.ret,
                }
                for _sev, share, o in offenders
            ],
            replay=replay_command(engine, top.seed, top.played.actions),
        )
    )


def named_route(engine: ServerPlayer) -> bool:
    """A rule of :data:`NAMED_ROUTES` reported a finding this run."""
    return any(f.code in NAMED_ROUTES for f in engine.findings)


def _describe(o: Outcome, share: float) -> str:
    shown = fuzz.short_json(o.value if o.value is not None else o.played.actions, 70)
    where = f" in `{o.slot}`" if o.slot else ""
    return (
        f"`{o.policy}` ({shown}{where}) earned at least {share:.0%} on every seed "
        f"(seed {o.seed}: return {o.played.ret:g})"
    )


def replay_command(engine: ServerPlayer, seed: int | None, actions: list[dict[str, Any]]) -> str:
    """The command that plays ``actions`` from ``reset(seed)`` and prints each reward:
    ``envkit eval`` with the ``actions:`` policy."""
    target = (
        shlex.quote(str(engine.env_root)) if engine.env_root is not None else f"--url {engine.url}"
    )
    payload = json.dumps(actions, ensure_ascii=False, separators=(",", ":"))
    return (
        f"envkit eval {target} "
        f"--policy {shlex.quote('actions:' + payload)} --seed {seed if seed is not None else 0} "
        "--episodes 1"
    )
