"""EK5xx reward-integrity probes: the reward-hacking defects that cost the most in real
environments (found on huggingface/OpenEnv ``envs/``, see docs/realworld.md).

* EK508: a finished episode keeps paying when stepped again (reward farming after ``done``);
* EK509: the solution is readable (``state``, ``metadata``, the terminal observation) and
  scores the maximum when submitted in a fresh episode of the same seed (RFC 008
  ``semantic.no_solution_leakage``);
* EK510: the stateless HTTP ``POST /step`` (a fresh instance, never reset) pays a degenerate
  action at or near the top of the range;
* EK511: the reward does not depend on the action at all.

Every finding carries what a user needs to reproduce it (seed, actions sent, what came back)
in its message and ``data``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from envkit.findings import Severity, register
from envkit.validation import explore, fuzz
from envkit.validation.engine import EPS, ActionPool, Episode, ServerPlayer, is_number
from envkit.validation.probing import CODE_FIELD
from envkit.validation.reveal import text_parts
from envkit.validation.rules import episodes
from envkit.wire import EnvErrorFrame, EnvSession, StepResult

#: RFC 008 (huggingface/OpenEnv#1041) check id of each rule here that has one.

AFTER_DONE_PROBES = 24  # episode ends probed at most (each costs up to 8 steps)
LEGAL_AFTER_DONE = 4  # distinct legal actions seen during the episode sent after its end
LEAK_TRIES = 32  # (leaf, field) submissions of the leak probe at most
LEAF_LIMIT = 200  # leaves collected per JSON value at most
#: Field names that say a value is the answer (EK512), matched on a leaf's dotted path.
ANSWER_NAME = re.compile(
    r"(?:^|[._\[])(?:answers?|solutions?|ground_?truth|gold(?:_\w+)?|secret(?:_\w+)?|"
    r"(?:expected|correct|target|true|hidden)_(?:answers?|outputs?|results?|solutions?|words?|"
    r"numbers?|moves?|actions?|values?|labels?|options?))(?:$|[.\[])",
    re.IGNORECASE,
)

REWARD_AFTER_DONE = register(
    "EK508",
    "reward-after-done",
    Severity.ERROR,
    summary="A finished episode pays again when stepped after `done=true` (reward farming).",
    what="After every episode end envkit reaches (oracle, fuzzed, degenerate and exploring "
    "policies; the exploring one plays the legal actions the observation lists, so real "
    "game ends are reached without an oracle), it steps the finished episode again, in "
    "the same session, with the episode's last action, the oracle's winning action for "
    "that seed, a legal action the terminal observation still lists, up to 4 legal "
    "actions listed during the episode and one fuzzed action. Any reward above the "
    "low end of `validation.reward.range` while `done` stays true is a finding (`done` "
    "going back to false is EK417).",
    why="A policy that learns to keep sending the right answer after the episode ended "
    "collects the full reward as often as the trainer lets it step: returns explode and "
    "the learning signal is the farming, not the task.",
    example="`step` checks `if self._done:` but still computes "
    "`reward = 1.0 if action.answer == self._target else 0.0`.",
    fix="Once the episode is over, answer every step with `done=True` and the low end of "
    "the range (or raise a clear error) until `reset`.",
    classes=("BGW-128",),
)

SOLUTION_LEAK = register(
    "EK509",
    "solution-leak",
    Severity.ERROR,
    rfc008="semantic.no_solution_leakage",
    summary="A value readable by the agent (`state`, `metadata`, an observation, a number "
    "inside its text) scores the maximum when submitted (RFC 008 "
    "`semantic.no_solution_leakage`).",
    what="envkit plays one episode of the first seed and collects the string and number "
    "leaves of `state` (after `reset` and at the end), of every observation's `metadata` "
    "and of the terminal observation, then the numbers, quoted parts and cue words of "
    "their texts (`the number was 57`, `expected 73`), then the values the task shows "
    "before the end (the reset and non-terminal observations), leaving out values envkit "
    "sent. It submits each in the action's fields whose type fits (a shown value not in a "
    "field that holds code or an identifier), each in a fresh episode "
    "of the same seed on a new session (at most 32 submissions); reaching the top of "
    "`validation.reward.range` is a finding naming the field that leaked. A value the task "
    "shows counts only when its field is named as the answer (`solution`, `answer`, ...) or "
    "the oracle's winning action does not send that very value (copying it is the task, as "
    "in an echo task; without an oracle it is given the benefit of the doubt). RFC 008: "
    "`semantic.no_solution_leakage`.",
    why="The policy reads everything it can reach: an answer in `state` (HTTP `GET /state`, "
    "the WebSocket `state` message) or revealed at the end of a lost episode and reused "
    "next time with the same seed is learned instead of the task.",
    example="`State(episode_id=..., target=self._target)`; a terminal observation "
    "`solution=self._target` after a lost episode, with the seed picking the same "
    "task again.",
    fix="Keep the solution out of `state`, `metadata` and observations; if the answer must "
    "be shown after the episode, do not let the same seed draw the same task for "
    "training, or put it in a channel the agent never sees.",
    limits="Error frames' messages are not read for values. A value the task shows that the "
    "oracle itself sends as is counts as a copy task (echo), unless its field is named as the "
    "answer.",
    classes=(
        "BGW-115",
        "BGW-116",
        "TerminalWrench:structural-extraction",
        "rl-envdoctor:prompt-leaks-answer",
    ),
)

ANSWER_IN_STATE = register(
    "EK512",
    "answer-in-state",
    Severity.WARNING,
    rfc008="semantic.no_solution_leakage",
    summary="`state` (or an observation's `metadata`) carries a field named as the answer "
    "(`expected_answer`, `solution`, `ground_truth`, ...) that the task does not show.",
    what="In the episode EK509 plays, envkit reads the string and number leaves of `state` "
    "(after `reset` and at the end) and of every observation's `metadata`; a leaf whose "
    "field name says it is the answer (`answer`, `solution`, `ground_truth`, `gold`, "
    "`secret`, `expected_answer`, `correct_move`, `target_word`, ...), with a value the "
    "observations before the end do not show and envkit did not send, is reported when "
    "EK509 could not show it scores (the reward needs a format, or `step` fails). RFC "
    "008: `semantic.no_solution_leakage`.",
    why="`GET /state` and the WebSocket `state` message are open to whatever drives the "
    "environment; a harness or agent with tool access reads the answer instead of "
    "solving the task, and a grader that compares against it is exposed too.",
    example='`DIPGState(expected_answer={"final": "pneumonia", ...})`, answered by '
    "`GET /state` after `reset`.",
    fix="Keep the answer in a private attribute of the environment (`self._expected`), not "
    "in the `State` model or `metadata`.",
    limits="A named answer field that scores when submitted is EK509 (solution-leak), not also "
    "EK512. An answer kept as an option index (`label: 2`) where the agent answers with "
    "letters is not seen.",
    reported_as=("EK509",),
    classes=("BGW-116", "TerminalWrench:structural-extraction"),
)

FRESH_INSTANCE_PAYS = register(
    "EK510",
    "fresh-instance-pays",
    Severity.ERROR,
    summary="HTTP `POST /step` on a fresh, never-reset instance pays a degenerate action at "
    "or near the top of the range.",
    what="openenv's stateless HTTP `POST /step` builds a fresh environment and steps it "
    "without `reset`. envkit sends the degenerate actions (empty, minimum, maximum, the "
    "first fuzzed action) there; none may score within `validation.reward.floor_margin` "
    "of the top of `validation.reward.range`.",
    why="A never-reset instance usually compares the answer with an empty or default target: "
    "the empty answer then scores 1.0, and any client or evaluation harness using the "
    "HTTP endpoints is handed a free maximum.",
    example='`self._target = ""` in `__init__` and no "call reset() first" guard: '
    '`POST /step {"action": {"answer": ""}}` answers reward 1.0.',
    fix="Guard `step` before `reset` (answer `done=True` with the low end of the range, or "
    "raise), and never start from a target a trivial answer matches.",
    classes=("BGW-125",),
)

REWARD_IGNORES_ACTION = register(
    "EK511",
    "reward-ignores-action",
    Severity.WARNING,
    summary="Different actions at the same seed and step got the same reward, every time: "
    "the reward does not depend on the action.",
    what="envkit compares the rewards every policy it played (fuzzed, degenerate, "
    "exploring, oracle) got at the same seed and step index; when at least 5 such "
    "comparisons across the seeds pair different actions, every one got the same "
    "reward, no seed and step ever got two different rewards, and the compared rewards "
    "themselves vary (by step or seed; a constant reward is EK504), the reward ignores "
    "the action.",
    why="A reward fixed by the step index or the seed gives every rollout of a batch the "
    "same return: no advantage, no learning signal, whatever the policy does.",
    example="`reward = step_count / max_steps`, or a rubric reading the episode's progress "
    "instead of the answer.",
    fix="Compute the reward from the action (the answer, the move) and the task, not from "
    "the step counter or the seed.",
    limits="A reward that ignores every action is constant: EK504 reports it. A reward computed "
    "from the previous action (before the move is applied) varies with the actions and is"
    " not seen.",
    reported_as=("EK504",),
    classes=("BGW-125", "rl-envdoctor:completion-independent-reward"),
)


def _fmt(value: Any) -> str:
    return fuzz.short_json(value, 80)


# -- EK508 (and EK417): stepping a finished episode ----------------------------------------
class AfterDone:
    """The probe :attr:`ServerPlayer.on_episode_end` calls: step each finished episode again.

    Args:
        engine: the engine playing the server.
        actions: the fuzzed actions (one of them is sent after ``done``).
        space: the action space (:meth:`explore.ActionSpace.from_pool`); with it the legal
            actions the episode's observations list (``legal_actions``) are sent too.
    """

    def __init__(
        self, engine: ServerPlayer, actions: ActionPool, space: explore.ActionSpace | None = None
    ):
        self.engine = engine
        self.actions = actions
        self.space = space
        self.oracle_actions: dict[int | None, dict[str, Any]] = {}
        self.probed = 0
        self.paid: list[dict[str, Any]] = []  # EK508 evidence
        self.reopened: list[dict[str, Any]] = []  # EK417 evidence
        # (action, reward) of every step answered with done=true after done
        self.after_rewards: list[tuple[dict[str, Any], Any]] = []

    def __call__(self, s: EnvSession, ep: Episode) -> None:
        if not ep.actions:
            return
        last = ep.actions[-1]
        if ep.policy == "oracle":
            self.oracle_actions[ep.seed] = last
        if self.probed >= AFTER_DONE_PROBES:
            return
        self.probed += 1
        sends = [("the episode's last action", last)]
        if ep.seed in self.oracle_actions:
            sends.append(("the oracle's winning action", self.oracle_actions[ep.seed]))
        if self.space is not None:  # what the task says is (or was) playable
            terminal = [a for a in self.space.legal(ep.steps[-1].observation) if a != last]
            if terminal:
                sends.append(("a legal action the terminal observation lists", terminal[0]))
            listed: dict[str, dict[str, Any]] = {}
            for obs in ep.observations():
                for a in self.space.legal(obs):
                    listed.setdefault(fuzz.json_key(a), a)
            sends += [
                ("a legal action listed during the episode", a)
                for a in list(listed.values())[:LEGAL_AFTER_DONE]
            ]
        if self.actions:
            sends.append(("a fuzzed action", self.actions.at(self.probed)))
        unique: dict[str, tuple[str, dict[str, Any]]] = {}
        for what, action in sends:
            unique.setdefault(fuzz.json_key(action), (what, action))
        # a send that reopens the episode ends this probe; starting each finished episode at
        # another send lets the later ones be tried too (connect4_env: one column reopens the
        # game, another pays the win again)
        order = list(unique.values())
        turn = (self.probed - 1) % len(order)
        for what, action in order[turn:] + order[:turn]:
            try:
                res = self.engine.call("`step` after `done`", s.step, action)
            except EnvErrorFrame:
                continue  # refusing a finished episode is fine
            self.engine.latencies.append(res.latency_s)
            evidence = {
                "episode": self.probed,
                "seed": ep.seed,
                "policy": ep.policy,
                "episode_actions": ep.actions,
                "terminal_reward": ep.steps[-1].reward,
                "sent": action,
                "what": what,
                "reward": res.reward,
                "done": res.done,
            }
            if not res.done:
                self.reopened.append(evidence)
                return  # the episode goes on: stepping it further proves nothing more
            self.after_rewards.append((action, res.reward))
            if is_number(res.reward) and float(res.reward) > self.engine.settings.lo + EPS:
                self.paid.append(evidence)

    def verdict(self) -> None:
        """EK508 and EK417 from what the probes saw (evaluated once an episode ended)."""
        engine = self.engine
        if not self.probed:
            return
        engine.ran(REWARD_AFTER_DONE, episodes.STEP_AFTER_DONE)
        if self.reopened:
            e = self.reopened[0]
            engine.add(
                episodes.STEP_AFTER_DONE,
                f"A `step` after `done=true` must keep `done=true` (or answer an "
                f"error); after the {e['policy'] or 'played'} episode of seed "
                f"{e['seed']} ended (actions {_fmt(e['episode_actions'])}), "
                f"`step({_fmt(e['sent'])})` ({e['what']}) got `done=false` with reward "
                f"{e['reward']!r} ({len(self.reopened)} of {self.probed} finished "
                "episodes). Most likely `step` does not check whether the episode is "
                "over.",
                **e,
            )
        if self.paid:
            e = self.paid[0]
            engine.add(
                REWARD_AFTER_DONE,
                after_done_message(
                    e,
                    engine.settings.lo,
                    paid=len({p["episode"] for p in self.paid}),
                    probed=self.probed,
                    after_rewards=self.after_rewards,
                ),
                **e,
            )


def after_done_message(
    e: dict[str, Any],
    lo: float,
    *,
    paid: int,
    probed: int,
    after_rewards: list[tuple[dict[str, Any], Any]],
) -> str:
    """EK508's message from the first paying step after ``done`` (``e``: the
    :class:`AfterDone` evidence: ``policy``, ``seed``, ``episode_actions``, ``sent``,
    ``what``, ``reward``).

    Says what the reward after ``done`` must be: the low end ``lo`` of
    ``validation.reward.range`` (under a negative range a "neutral" 0 is above it), or a
    refusal. The guess that ``step`` computes the reward before checking ``done`` is left
    out when every step after ``done`` got the same reward whatever the action
    (``after_rewards``, at least two different actions): that is a constant, not the task's
    reward.

    Args:
        lo: the low end of the declared range.
        paid: finished episodes that paid again; ``probed``: finished episodes stepped.
        after_rewards: ``(action, reward)`` of every step answered with ``done=true`` after
            ``done``.
    """
    constant = (
        len({fuzz.json_key(a) for a, _ in after_rewards}) >= 2
        and len({fuzz.json_key(r) for _, r in after_rewards}) == 1
    )
    head = (
        f"A finished episode must not pay again: after the {e['policy'] or 'played'} "
        f"episode of seed {e['seed']} ended (`reset(seed={e['seed']})`, actions "
        f"{_fmt(e['episode_actions'])}, `done=true`), `step({_fmt(e['sent'])})` "
        f"({e['what']}) got reward {e['reward']!r} > {lo:g} with `done=true` ({paid} of "
        f"{probed} finished episodes paid again)."
    )
    must = (
        f" After `done` the reward must be the low end of `validation.reward.range` "
        f"({lo:g}), or `step` must refuse (answer an error) until `reset`"
    )
    if lo < 0:
        must += f"; under a negative range 0 is not neutral, it pays {-lo:g} above the floor"
    if constant:
        return (
            f"{head} Every step after `done` got the same reward whatever the action "
            f"({len(after_rewards)} steps, {e['reward']!r}): a fixed reward after the "
            f"episode.{must}."
        )
    return (
        f"{head}{must}. Most likely `step` computes the reward before checking whether "
        "the episode is over."
    )


# -- EK509: solution leakage ----------------------------------------------------------------
def _leaves(value: Any, path: str, out: list[tuple[str, Any]]) -> None:
    """String and number leaves of a JSON value as ``(dotted path, value)``."""
    if len(out) >= LEAF_LIMIT:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            _leaves(v, f"{path}.{k}" if path else str(k), out)
    elif isinstance(value, list):
        for i, v in enumerate(value[:50]):
            _leaves(v, f"{path}[{i}]", out)
    elif isinstance(value, str):
        if value.strip():
            out.append((path, value))
    elif is_number(value) and math.isfinite(float(value)):
        out.append((path, value))


def _leaf_list(value: object) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    _leaves(value, "", found)
    return found


def _values(value: Any) -> set[str]:
    found: list[tuple[str, Any]] = []
    _leaves(value, "", found)
    return {fuzz.json_key(v) for _, v in found}


def _without_metadata(obs: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obs.items() if k != "metadata"}


def _fits(field_schema: dict[str, Any], root: dict[str, Any], value: Any) -> Any:
    """``value`` converted to what the field takes, or ``None`` when it cannot take it."""
    node = fuzz.resolve(field_schema, root)
    options = [node] + [
        fuzz.resolve(o, root) for o in (node.get("anyOf") or node.get("oneOf") or [])
    ]
    for opt in options:
        types = fuzz.types_of(opt)
        if isinstance(opt.get("enum"), list):
            if value in opt["enum"]:
                return value
            continue
        if "string" in types:
            return value if isinstance(value, str) else str(value)
        if "integer" in types:
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            if isinstance(value, str) and value.strip().lstrip("-").isdigit():
                return int(value)
        if "number" in types and is_number(value):
            return value
    return None


@dataclass(frozen=True)
class LeakCandidate:
    """A value the agent could read, to be submitted as the answer (EK509).

    Attributes:
        where: the dotted path it was read at (``state.answer``, ``observation.feedback``).
        when: when it was readable (``after `reset` ``, ``terminal observation``, ...).
        value: the value (a JSON string or number).
        shown: the task shows it before the end (the reset or a non-terminal observation):
            it may be what the task asks to copy, so it leaks only when the oracle answers
            something else or its field is named as the answer (:func:`copy_task`).
        text: the text it is a part of (a number inside a sentence), ``None`` for a whole
            value.
    """

    where: str
    when: str
    value: Any
    shown: bool = False
    text: str | None = None


def _norm(value: object) -> str:
    """``value`` as text for comparing answers: stripped, runs of blanks as one space."""
    return " ".join(str(value).split())


def copy_task(c: LeakCandidate, oracle: dict[str, Any] | None, field: str) -> bool:
    """Whether ``c``, which scored when sent in ``field``, may be the task's own answer:
    a value the task shows (``c.shown``), not named as the answer (:data:`ANSWER_NAME`),
    that the oracle's winning action ``oracle`` sends as is in ``field`` (the echo task:
    copying the target IS the task). Without an oracle every shown value not named as the
    answer is given the benefit of the doubt."""
    if not c.shown or ANSWER_NAME.search(c.where):
        return False
    if oracle is None:
        return True
    return field in oracle and _norm(oracle[field]) == _norm(c.value)


def _oracle_win(engine: ServerPlayer, seed: int | None) -> dict[str, Any] | None:
    """The oracle's first action that reached the top of the range at ``seed``."""
    for ep in engine.episodes:
        if ep.policy != "oracle" or ep.seed != seed:
            continue
        for res, action in zip(ep.steps, ep.actions):
            if is_number(res.reward) and float(res.reward) >= engine.settings.hi - EPS:
                return action
    return None


def leak_candidates(ep: Episode) -> tuple[list[LeakCandidate], list[LeakCandidate]]:
    """What the agent could read in ``ep`` (played ``with_state``), without what envkit sent
    and without repeats, in the order they are submitted:

    1. whole string and number leaves of ``state`` (after ``reset`` and at the end), of
       every observation's ``metadata`` and of the terminal observation that the task does
       not show before the end;
    2. the parts of their texts (:func:`reveal.text_parts`: a number inside a sentence);
    3. the values the task shows before the end (the reset and non-terminal observations,
       ``metadata`` aside), marked ``shown``.

    Returns:
        ``(candidates, hidden)``: every candidate, and those of (1) alone (what EK512 reads).
    """
    shown_leaves: list[tuple[str, str, Any]] = []
    for i, obs in enumerate([ep.reset_obs] + [x.observation for x in ep.steps[:-1]]):
        leaves: list[tuple[str, Any]] = []
        _leaves(_without_metadata(obs), "observation", leaves)
        when = "after `reset`" if i == 0 else f"after step {i}"
        shown_leaves += [(path, when, v) for path, v in leaves]
    shown = {fuzz.json_key(v) for _p, _w, v in shown_leaves}
    sent = set().union(*(_values(a) for a in ep.actions)) if ep.actions else set()
    found: list[tuple[str, str, Any]] = []  # (field path, when, value)

    def collect(value: Any, prefix: str, when: str) -> None:
        leaves: list[tuple[str, Any]] = []
        _leaves(value, prefix, leaves)
        found.extend((path, when, v) for path, v in leaves)

    for when, state in ep.states.items():
        collect(
            {k: v for k, v in (state or {}).items() if k != "episode_id"},
            "state",
            f"after {'`reset`' if when == 'reset' else 'the last step'}",
        )
    for i, obs in enumerate(ep.observations()):
        if obs.get("metadata"):
            collect(
                obs["metadata"],
                "observation.metadata",
                "after `reset`" if i == 0 else f"after step {i}",
            )
    if ep.done and ep.steps:
        collect(_without_metadata(ep.steps[-1].observation), "observation", "terminal observation")
    keys: set[str] = set(shown) | sent
    hidden: list[LeakCandidate] = []
    for path, when, value in found:
        k = fuzz.json_key(value)
        if k not in keys:
            keys.add(k)
            hidden.append(LeakCandidate(path, when, value))
    # a part is compared as text: "57" in a sentence is the number 57 a field showed
    texts = {_norm(v) for _p, _w, v in shown_leaves}
    texts |= {_norm(v) for a in ep.actions for _p, v in _leaf_list(a)}
    texts |= {_norm(c.value) for c in hidden}
    parts: list[LeakCandidate] = []
    for path, when, value in found:
        if not isinstance(value, str) or fuzz.json_key(value) in shown:
            continue
        for part in text_parts(value):
            if _norm(part) not in texts:
                texts.add(_norm(part))
                parts.append(LeakCandidate(path, when, part, text=value))
    shown_out: list[LeakCandidate] = []
    taken = set(sent)  # the shown values are all in `keys`: they were left out above
    for path, when, value in shown_leaves:
        k = fuzz.json_key(value)
        if k not in taken:
            taken.add(k)
            shown_out.append(LeakCandidate(path, when, value, shown=True))
    # the values named as the answer first: the budget may not reach the others
    shown_out.sort(key=lambda c: not ANSWER_NAME.search(c.where))
    return hidden + parts + shown_out, hidden


def _read_as(c: LeakCandidate) -> str:
    """How a finding names where ``c`` was read."""
    if c.text is not None:
        return f"{c.when}, inside the text {_fmt(c.text)}"
    if c.shown:
        return f"{c.when}, shown by the task"
    return c.when


def leak(engine: ServerPlayer, schema: dict[str, Any], actions: ActionPool) -> None:
    """EK509: collect what the agent could read, submit it in fresh episodes of one seed."""
    settings = engine.settings
    seed = settings.seeds[0]
    aschema = fuzz.action_schema(schema)
    props = aschema.get("properties") or {}
    base = fuzz.extreme_value(aschema, aschema, "empty")
    if not props or not isinstance(base, dict):
        return
    engine.progress("solution leakage")
    # 1. one episode with the base (empty) action: a lost episode tells the most.
    ep = engine.play_alone(seed, lambda _o, _i: dict(base), name="leak-collect", with_state=True)
    if ep.best() is not None and ep.best() >= settings.hi - EPS:
        return  # the empty answer already wins: EK505's business, no baseline here
    candidates, hidden = leak_candidates(ep)
    oracle = _oracle_win(engine, seed)
    engine.ran(SOLUTION_LEAK)
    tries = 0
    for c in candidates:
        for fname, fschema in props.items():
            if tries >= LEAK_TRIES:
                break
            if c.shown and CODE_FIELD.search(fname) and not ANSWER_NAME.search(c.where):
                continue  # the prompt sent back as a program or an identifier: a copy at best
            filled = _fits(fschema, aschema, c.value)
            if filled is None:
                continue
            tries += 1
            action = {**base, fname: filled}
            res = _submit(engine, seed, action)
            if res is None or not is_number(res.reward) or float(res.reward) < settings.hi - EPS:
                continue
            if copy_task(c, oracle, fname):
                continue  # the task asks to copy what it shows (echo)
            if (
                c.text is None
                and not ANSWER_NAME.search(c.where)
                and not _wins_elsewhere(
                    engine, c, base, fname, lambda v, f=fschema: _fits(f, aschema, v)
                )
            ):
                continue  # a counter or one of the task's items that happened to match
            if c.shown and ANSWER_NAME.search(c.where):
                likely = f"the observation shows the answer in `{c.where}`"
            elif c.shown:
                likely = (
                    "the verifier accepts a value the task shows without checking how it "
                    "was reached (the oracle submits "
                    f"{_fmt(oracle.get(fname)) if oracle else 'something else'})"
                )
            else:
                likely = f"the solution is exposed in `{c.where.split('.', 1)[0]}`"
            engine.add(
                SOLUTION_LEAK,
                f"No value the agent can read may score the maximum when "
                f"submitted; `{c.where}` ({_read_as(c)}) = {_fmt(c.value)} did: on a "
                f"new session, `reset(seed={seed})` then `step({_fmt(action)})` "
                f"got reward {res.reward!r} (the empty "
                f"answer {_fmt(base)} got {ep.best()!r} in the episode it was "
                f"read from). Most likely {likely}.",
                seed=seed,
                field=c.where,
                when=c.when,
                value=c.value,
                action=action,
                reward=res.reward,
                done=res.done,
                collect_actions=ep.actions,
            )
            return
    _answer_named(engine, seed, [(c.where, c.when, c.value) for c in hidden])


def _wins_elsewhere(
    engine: ServerPlayer,
    c: LeakCandidate,
    base: dict[str, Any],
    fname: str,
    fits: Callable[[object], object],
) -> bool:
    """Whether the value at ``c.where`` wins on another seed too (``fits`` makes the field's
    value): a leak sits in one place; a counter that equals one seed's answer, or one of the
    task's items that is the answer (a median), does not win on the next seed."""
    seeds = engine.settings.seeds
    other = next((s for s in seeds if s != seeds[0]), (seeds[0] or 0) + 1)
    ep = engine.play_alone(other, lambda _o, _i: dict(base), name="leak-confirm", with_state=True)
    same = [x for x in leak_candidates(ep)[0] if (x.where, x.when) == (c.where, c.when)]
    filled = fits(same[0].value) if same else None
    res = _submit(engine, other, {**base, fname: filled}) if filled is not None else None
    return res is not None and is_number(res.reward) and res.reward >= engine.settings.hi - EPS


def _submit(engine: ServerPlayer, seed: int | None, action: dict[str, Any]) -> StepResult | None:
    """``action`` as the first step of a fresh session reset with ``seed`` (some environments
    serve the NEXT task when one session is reset again: reasoning_gym_env,
    docs/realworld.md); ``None`` when the environment refuses the action."""
    t = engine.open()
    try:
        engine.reset(t, seed)
        return engine.call("`step`", t.step, action)
    except EnvErrorFrame as exc:
        if exc.code in ("EXECUTION_ERROR", "VALIDATION_ERROR"):
            return None
        raise
    finally:
        t.close()


def _answer_named(
    engine: ServerPlayer, seed: int | None, candidates: list[tuple[str, str, Any]]
) -> None:
    """EK512: the leak candidates of ``state`` and ``metadata`` named as the answer."""
    engine.ran(ANSWER_IN_STATE)
    named = [
        (p, w, v)
        for p, w, v in candidates
        if p.startswith(("state.", "observation.metadata.")) and ANSWER_NAME.search(p)
    ]
    if not named:
        return
    where, when, value = named[0]
    more = f" (and {', '.join(f'`{p}`' for p, _w, _v in named[1:4])})" if len(named) > 1 else ""
    engine.add(
        ANSWER_IN_STATE,
        f"The answer should not be readable by the agent; `{where}` ({when}, seed "
        f"{seed}) = {_fmt(value)}{more} is named as the answer and is "
        f"not shown by the task's observations. Submitting it as the action did not "
        "score the maximum (the reward may need a format, or `step` failed), so "
        "envkit cannot show it scores. Most likely the expected answer is kept in the "
        f"`{where.split('.', 1)[0]}` model.",
        seed=seed,
        field=where,
        when=when,
        value=value,
        fields=[p for p, _w, _v in named],
    )


# -- EK510: a fresh instance over HTTP -------------------------------------------------------
def fresh_http(
    engine: ServerPlayer,
    schema: dict[str, Any],
    actions: ActionPool,
    after_reset: dict[str, float] | None = None,
) -> None:
    """EK510: ``POST /step`` (never reset) with each degenerate action.

    Args:
        after_reset: the degenerate policies' mean best reward over WebSocket episodes
            (:func:`envkit.validation.rules.reward.degenerate`); a policy that already pays
            the top after ``reset`` is EK505's finding, not this one.
    """
    settings = engine.settings
    policies = fuzz.degenerate_actions(schema, actions.at(0) if actions else None)
    if not policies:
        return
    engine.progress("HTTP /step on a fresh instance")
    top = settings.hi - settings.floor_margin
    checked = False
    for name, action in policies.items():
        if after_reset and after_reset.get(name, settings.lo) >= top - EPS:
            continue
        status, body, text = engine.post_json("/step", {"action": action})
        if status in (404, 405):
            return  # no stateless HTTP endpoint: nothing to probe
        if status != 200 or not isinstance(body, dict):
            continue
        checked = True
        reward = body.get("reward")
        if is_number(reward) and float(reward) >= top - EPS:
            engine.ran(FRESH_INSTANCE_PAYS)
            engine.add(
                FRESH_INSTANCE_PAYS,
                f"A never-reset instance must not pay a degenerate action; "
                f'`POST /step` with `{{"action": {_fmt(action)}}}` (`{name}`, no '
                f"`reset` before) answered reward {reward!r} (done={body.get('done')!r})"
                f", at or within `floor_margin` {settings.floor_margin:g} of the top "
                f"{settings.hi:g}. Most likely `step` compares with a target that is "
                "empty until `reset`.",
                request={"action": action},
                status=status,
                reward=reward,
                done=body.get("done"),
                reply=text,
            )
            return
    if checked:
        engine.ran(FRESH_INSTANCE_PAYS)


# -- EK511: reward independent of the action ------------------------------------------------
MIN_COMPARISONS = 5


def ignores_action(engine: ServerPlayer) -> None:
    """EK511 over :attr:`ServerPlayer.episodes`: rewards at the same (seed, step index) for
    different actions."""
    by_slot: dict[tuple[Any, int], dict[str, tuple[float, dict[str, Any], str]]] = {}
    slot_rewards: dict[tuple[Any, int], set[float]] = {}  # every reward, any action
    numbers: list[float] = []
    for ep in engine.episodes:
        for i, (res, action) in enumerate(zip(ep.steps, ep.actions)):
            if not is_number(res.reward):
                continue
            numbers.append(float(res.reward))
            slot_rewards.setdefault((ep.seed, i), set()).add(float(res.reward))
            by_slot.setdefault((ep.seed, i), {}).setdefault(
                fuzz.json_key(action), (float(res.reward), action, ep.policy)
            )
    if len(numbers) < 5 or max(numbers) - min(numbers) <= EPS:
        return  # too little, or constant (EK504)
    engine.ran(REWARD_IGNORES_ACTION)
    if any(max(r) - min(r) > EPS for r in slot_rewards.values()):
        return  # at some seed and step the reward differed: not a function of them alone
    comparisons = 0
    seeds: set[Any] = set()
    compared: set[float] = set()  # the rewards of the slots where actions were compared
    example: tuple[Any, int, list[tuple[float, dict[str, Any], str]]] | None = None
    for (seed, i), got in by_slot.items():
        if len(got) < 2:
            continue
        comparisons += len(got) - 1
        seeds.add(seed)
        compared |= slot_rewards[(seed, i)]
        if example is None:
            example = (seed, i, list(got.values())[:3])
    if (
        comparisons < MIN_COMPARISONS
        or len(seeds) < min(2, len(engine.settings.seeds))
        or example is None
    ):
        return
    if max(compared) - min(compared) <= EPS:
        return  # one reward wherever actions were compared (a step cost): no sign of a
        # reward that follows the step or the seed; it may still pay the task elsewhere
    seed, i, rows = example
    shown = "; ".join(f"{_fmt(a)} ({p}) -> {r:g}" for r, a, p in rows)
    engine.add(
        REWARD_IGNORES_ACTION,
        f"The reward should depend on the action; at the same seed and step, "
        f"{comparisons} pairs of different actions over seeds {sorted(seeds, key=str)} "
        f"all got the same reward while rewards varied between "
        f"{min(numbers):g} and {max(numbers):g}. For example, step {i + 1} after "
        f"`reset(seed={seed})`: {shown}. Most likely the reward is computed from the "
        "step count or the seed, not from the action.",
        seed=seed,
        step=i + 1,
        examples=[{"action": a, "policy": p, "reward": r} for r, a, p in rows],
        comparisons=comparisons,
    )
