"""What the verifier pays for besides a right answer (EK514-EK516):

* EK514: the oracle's answer in the same form but with a wrong value earns half the range;
* EK515: a step whose observation reports an error earns more than the low end and than a
  well-formed wrong answer;
* EK516: the oracle's answer varied harmlessly scores the low end (single-step tasks).
"""

from __future__ import annotations

import re
from typing import Any

from envkit.findings import Severity, register
from envkit.validation.engine import EPS, is_number
from envkit.validation.probing import (
    CODE_FIELD,
    KEPT,
    Probes,
    field_schema,
    fits,
    fmt,
    rewrite,
    text_fields,
    wrong_value,
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
    limits="The wrong-value variant of a JSON answer rewrites its keys too, so a rubric that "
    "pays for the keys and the values separately can be under-measured.",
    classes=(
        "BGW-122",
        "BGW-134",
        "BGW-138",
        "TerminalWrench:keyword-gaming",
        "rl-envdoctor:grader-accepts-wrong",
    ),
)

ERRORS_PAY = register(
    "EK515",
    "errors-pay",
    Severity.WARNING,
    summary="A step whose observation reports an error earns more than the low end of the "
    "range and than a well-formed wrong answer.",
    what="In every episode envkit played (among them, on the first seed the oracle won, "
    "its answer replaced by an empty, an unparsable, an off-format and an over-long one, "
    "each in a fresh WebSocket episode), a step whose observation (or its `metadata`) "
    "reports an error must earn no more than the low end of `validation.reward.range` "
    "or, when one earned more, than a well-formed wrong answer of the same seed (the "
    "oracle's answer with a wrong value in the same form, reporting no error). A step reports an error with a "
    "non-empty error field (`error`, `last_action_error`, `errors`, `invalid_action`, "
    "...), a status field saying so (`status='invalid'`), or a feedback text (`feedback`, "
    "`message`, ...) with a line opening with an exception or a traceback "
    "(`SyntaxError: ...`), `Error`, `Invalid` or 'could not parse'; a field that already "
    "reported an error in the reset observation is the task's content, not a failed "
    "step. Heuristic: such a field that reports something else than the action failing "
    "(a stale message kept from an earlier step) is reported too.",
    why="A policy that is paid for invalid actions learns to send them: they are cheap, "
    "never lose, and crowd out real attempts.",
    example="A tool environment returning `reward=0.1` with `error='unknown tool'` as a "
    "participation reward.",
    fix="Answer a rejected or failing action with the low end of the range (or refuse it "
    "before `step`: an invalid action is a VALIDATION_ERROR).",
    classes=("BGW-126",),
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
    limits="No variation changes the Unicode normal form (NFC vs NFD). A task that asks for an "
    "exact form on purpose (an exact lowerCamelCase identifier) is reported anyway: EK516"
    " cannot tell.",
    classes=("BGW-120",),
)

MAX_ANSWER_CHARS = 200  # longest oracle answer the brittle-verifier probe varies
#: Observation keys that report an error (``error``, ``last_action_error``, ``invalid_move``).
ERROR_KEY = re.compile(r"(?:^|_)(?:errors?|exceptions?|invalid)(?:_|$)", re.IGNORECASE)
#: Status fields (``status``, ``verdict``) whose short value can say the action was rejected.
STATUS_KEY = re.compile(r"^(?:status|state|result|outcome|verdict)$", re.IGNORECASE)
ERROR_WORD = re.compile(
    r"(?:invalid|errors?|errored|exception|malformed|unparsable|unparseable|rejected|illegal)\b",
    re.IGNORECASE,
)
#: Free-text fields an environment answers a step with, read for an error report.
FEEDBACK_KEY = re.compile(
    r"feedback|message|msg|info|detail|result|output|stderr|response|reason|comment|log$",
    re.IGNORECASE,
)
#: An error report in a text: a line opening with an exception name or a traceback, with
#: ``Error``/``Invalid``/``Illegal``, or saying the answer could not be parsed.
ERROR_TEXT = re.compile(
    r"(?m)^\s*(?:Traceback \(most recent call last\)|[A-Z]\w*(?:Error|Exception)\b"
    r"|(?i:error|invalid|illegal)\b|(?i:(?:could ?not|can'?t|unable to|failed to) parse))"
)
WRONG_VALUE = "probe:wrong-value"  # the format probe's episodes: a well-formed wrong answer
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")


# -- EK514: format over correctness ------------------------------------------------------------
def format_over_correctness(probes: Probes) -> None:
    """EK514: per seed the oracle won, its winning action with every free text field given a
    wrong value in the same form, sent at the same point of a fresh episode, earns less
    than the middle of the range."""
    engine, settings = probes.engine, probes.engine.settings
    middle = settings.lo + (settings.hi - settings.lo) / 2
    found: list[dict[str, Any]] = []
    tried = 0
    for seed, win in probes.wins.items():
        final = win.actions[-1]
        fields = text_fields(probes, final)
        wrong = {**final, **{f: wrong_value(final[f]) for f in fields}}
        if (
            not fields
            or wrong == final
            or not all(fits(field_schema(probes, f), wrong[f]) for f in fields)
        ):
            continue
        if not probes.time_left("format probe"):
            break
        ep = probes.play(seed, win.actions[:-1] + [wrong], WRONG_VALUE)
        tried += 1
        paid = ep.rewards[-1] if len(ep.steps) == len(win.steps) else None
        if is_number(paid) and paid >= middle - EPS:
            found.append({"seed": seed, "sent": wrong, "oracle": final, "reward": paid})
    if not tried:
        return
    engine.ran(FORMAT_OVER_CORRECTNESS)
    if found:
        e = found[0]
        engine.add(
            FORMAT_OVER_CORRECTNESS,
            f"A wrong answer in the right format should earn less than half of the reward "
            f"range (below {middle:g}); with seed {e['seed']}, `{fmt(e['sent'])}` (the "
            f"oracle's `{fmt(e['oracle'])}` with its value changed, its form kept) earned "
            f"{e['reward']:g} ({len(found)} of {tried} seed(s)). A trainer learns the format "
            "and stops there. This could be wrong when the changed value is still a right "
            "answer (a task with many right answers).",
            cases=found,
        )


# -- EK516: brittle verifier -------------------------------------------------------------------
def variations(text: str) -> list[tuple[str, str]]:
    """Harmless rewrites of a one-line answer, each with what it changed: surrounding
    whitespace, upper and lower case (tags kept), a lead-in, equivalent number forms."""
    out = [("surrounding whitespace", f"  {text}\n"), ("a lead-in", f"The answer is {text}")]
    for what, change in (("upper case", str.upper), ("lower case", str.lower)):
        varied = rewrite(text, change)
        if varied != text:
            out.append((what, varied))
    kept = [k.span() for k in KEPT.finditer(text)]
    m = next(
        (
            n
            for n in NUMBER.finditer(text)
            if not any(a < n.end() and n.start() < b for a, b in kept)
        ),
        None,
    )
    if m:
        number = m.group()
        if "." in number:
            other = number.rstrip("0").rstrip(".") if number.endswith("0") else number + "0"
        else:
            other = number + ".0"
        out.append(("an equivalent number form", text[: m.start()] + other + text[m.end() :]))
    return out


def brittle_verifier(probes: Probes) -> None:
    """EK516: in single-step answer tasks, the oracle's answer varied harmlessly must not
    score the low end when it ends the episode (fresh episode of the same seed for each
    variation)."""
    engine, settings = probes.engine, probes.engine.settings
    found: list[dict[str, Any]] = []
    tried = 0
    for seed, win in probes.wins.items():
        final = win.actions[-1]
        fields = [
            f
            for f in text_fields(probes, final)
            if not CODE_FIELD.search(f)
            and "\n" not in final[f].strip()
            and len(final[f]) <= MAX_ANSWER_CHARS
        ]
        if len(win.steps) != 1 or len(fields) != 1:
            continue  # multi-step tasks and actions without one answer field are not judged
        name = fields[0]
        for what, varied in variations(final[name]):
            node = field_schema(probes, name)
            if not fits(node, varied) or not probes.time_left("brittle verifier probe"):
                continue
            ep = probes.play(seed, [{**final, name: varied}], "probe:harmless-variation")
            tried += 1
            # judged when the answer ended the episode: a task that lets the agent try again
            # has not rejected it yet
            paid = ep.rewards[0] if ep.steps and ep.steps[0].done else None
            if is_number(paid) and paid <= settings.lo + EPS:
                found.append({"seed": seed, "what": what, "sent": varied, "reward": paid})
    if not tried:
        return
    engine.ran(BRITTLE_VERIFIER)
    if found:
        kinds = sorted({e["what"] for e in found})
        e = found[0]
        engine.add(
            BRITTLE_VERIFIER,
            f"The oracle's answer with a harmless variation should still score above the "
            f"low end ({settings.lo:g}); {len(found)} of {tried} variation(s) scored it: "
            f"{'; '.join(kinds)} (e.g. with seed {e['seed']}, {fmt(e['sent'])}). The "
            "trainer punishes right answers for their form. This could be wrong when the "
            "task asks for an exact form (a case-sensitive code, an exact string).",
            cases=found,
        )


# -- EK515: errors pay -------------------------------------------------------------------------
def _reports(place: dict[str, Any]) -> dict[str, str]:
    """The fields of ``place`` (an observation or its ``metadata``) that report an error, each
    with what it says: a non-empty error field, a status field saying ``invalid``/``error``,
    a feedback text opening a line with an exception (``SyntaxError: ...``, a traceback),
    ``Error``, ``Invalid`` or "could not parse"."""
    out: dict[str, str] = {}
    for key, value in place.items():
        if not isinstance(key, str):
            continue
        text = value.strip() if isinstance(value, str) else ""
        if ERROR_KEY.search(key):
            if value is True or text:
                out[key] = key if value is True else f"{key}: {text[:120]}"
        elif (STATUS_KEY.search(key) and len(text) <= 40 and ERROR_WORD.match(text)) or (
            FEEDBACK_KEY.search(key) and ERROR_TEXT.search(text[:4000])
        ):
            out[key] = f"{key}: {text[:120]}"
    return out


def _places(observation: object) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(observation, dict):
        return []
    out = [("", observation)]
    if isinstance(observation.get("metadata"), dict):
        out.append(("metadata.", observation["metadata"]))
    return out


def _error_text(observation: object, before: object = None) -> str | None:
    """The first error the observation (or its ``metadata``) reports (:func:`_reports`),
    leaving out a field that already reported an error in ``before`` (the reset
    observation: an error shown before any action is the task's content, such as the
    traceback a debugging task asks about)."""
    earlier = {f"{at}{k}" for at, place in _places(before) for k in _reports(place)}
    for at, place in _places(observation):
        for key, text in _reports(place).items():
            if f"{at}{key}" not in earlier:
                return text
    return None


def _wrong_answers(probes: Probes) -> dict[int | None, float]:
    """Seed -> the least a well-formed wrong answer earned on it: the last step of the
    format probe's episodes (the oracle's answer with a wrong value in the same form) that
    reports no error."""
    out: dict[int | None, float] = {}
    for ep in probes.engine.episodes:
        if ep.policy != WRONG_VALUE or not ep.steps:
            continue
        last = ep.steps[-1]
        if is_number(last.reward) and _error_text(last.observation, ep.reset_obs) is None:
            out[ep.seed] = min(float(last.reward), out.get(ep.seed, float("inf")))
    return out


OVERLONG_CHARS = 1000  # the over-long answer EK515 sends: a verbose completion


def _bad_answers(probes: Probes) -> None:
    """On the first seed the oracle won, its final action with its first free text field
    replaced by answers a verifier cannot read (empty, unparsable, off-format: the value
    without its tags, over-long: the oracle's answer repeated to :data:`OVERLONG_CHARS`, or
    the schema's ``maxLength`` when shorter), each in a fresh episode
    of the same seed (recorded in :attr:`ServerPlayer.episodes` for :func:`errors_pay`)."""
    for seed, win in list(probes.wins.items())[:1]:
        final = win.actions[-1]
        for name in text_fields(probes, final)[:1]:
            node = field_schema(probes, name)
            cap = node.get("maxLength") if isinstance(node.get("maxLength"), int) else None
            # a verbose answer, not a stress test (EK517 sends 200 KB): a slow server must not
            # time out here and end the stage before EK517 judges it
            longest = min(cap or OVERLONG_CHARS, OVERLONG_CHARS)
            text = final[name]
            bad = {
                "empty": "",
                "unparsable": "?!#~",
                "off-format": KEPT.sub(" ", text).strip(),
                "over-long": (text * (longest // max(len(text), 1) + 1))[:longest],
            }
            for what, answer in bad.items():
                if answer == text or not fits(node, answer):
                    continue
                if not probes.time_left("errors probe"):
                    return
                probes.play(seed, win.actions[:-1] + [{**final, name: answer}], f"probe:{what}")


def errors_pay(probes: Probes) -> None:
    """EK515: over every step envkit played (with :func:`_bad_answers`), a step whose
    observation reports an error earns no more than the low end of the range or, when one earned more, than a well-formed
    wrong answer of the same seed (:func:`_wrong_answers`)."""
    engine, lo = probes.engine, probes.engine.settings.lo
    _bad_answers(probes)
    wrong = _wrong_answers(probes)
    erred = 0
    paid: list[dict[str, Any]] = []
    for ep in engine.episodes:
        for action, res in zip(ep.actions, ep.steps, strict=False):
            error = _error_text(res.observation, ep.reset_obs)
            if error is None:
                continue
            erred += 1
            bar = max(lo, wrong.get(ep.seed, lo))
            if is_number(res.reward) and res.reward > bar + EPS:
                paid.append(
                    {"seed": ep.seed, "action": action, "error": error, "reward": res.reward}
                    | ({"wrong_answer_earned": wrong[ep.seed]} if ep.seed in wrong else {})
                )
    engine.ran(ERRORS_PAY)  # over every step played (none reporting an error passes)
    if paid:
        e = paid[0]
        than = (
            f"; a well-formed wrong answer earned {e['wrong_answer_earned']:g} on that seed"
            if "wrong_answer_earned" in e
            else ""
        )
        engine.add(
            ERRORS_PAY,
            f"A step the environment reports as an error should earn the low end of the "
            f"range ({lo:g}), or no more than a well-formed wrong answer; {len(paid)} of "
            f"{erred} such step(s) earned more, e.g. `step({fmt(e['action'])})` with seed "
            f"{e['seed']} got {e['reward']:g} with `{e['error']}`{than}. A trainer learns to "
            "send invalid actions. This could be wrong when that field reports something else "
            "than this action failing.",
            cases=paid[:10],
        )
