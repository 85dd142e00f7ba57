"""What the verifier pays for besides a right answer (EK514-EK516):

* EK514: the oracle's answer in the same form but with a wrong value earns half the range;
* EK515: a step whose observation reports an error earns more than the low end;
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

MAX_ANSWER_CHARS = 200  # longest oracle answer the brittle-verifier probe varies
#: Observation keys that report an error (``error``, ``last_action_error``, ``invalid_move``).
ERROR_KEY = re.compile(r"(?:^|_)(?:errors?|exceptions?|invalid)(?:_|$)", re.IGNORECASE)
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
        ep = probes.play(seed, win.actions[:-1] + [wrong], "probe:wrong-value")
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
def _error_text(observation: object) -> str | None:
    """The first non-empty error the observation (or its ``metadata``) reports."""
    if not isinstance(observation, dict):
        return None
    places = [observation]
    if isinstance(observation.get("metadata"), dict):
        places.append(observation["metadata"])
    for place in places:
        for key, value in place.items():
            if not (isinstance(key, str) and ERROR_KEY.search(key)):
                continue
            if value is True:
                return key
            if isinstance(value, str) and value.strip():
                return f"{key}: {value.strip()[:120]}"
    return None


def errors_pay(probes: Probes) -> None:
    """EK515: over every step envkit played, a step whose observation reports an error
    earns the low end of the range."""
    engine, lo = probes.engine, probes.engine.settings.lo
    erred = 0
    paid: list[dict[str, Any]] = []
    for ep in engine.episodes:
        for action, res in zip(ep.actions, ep.steps, strict=False):
            error = _error_text(res.observation)
            if error is None:
                continue
            erred += 1
            if is_number(res.reward) and res.reward > lo + EPS:
                paid.append(
                    {"seed": ep.seed, "action": action, "error": error, "reward": res.reward}
                )
    engine.ran(ERRORS_PAY)  # over every step played (none reporting an error passes)
    if paid:
        e = paid[0]
        engine.add(
            ERRORS_PAY,
            f"A step the environment reports as an error should earn the low end of the "
            f"range ({lo:g}); {len(paid)} of {erred} such step(s) earned more, e.g. "
            f"`step({fmt(e['action'])})` with seed {e['seed']} got {e['reward']:g} with "
            f"`{e['error']}`. A trainer learns to send invalid actions. This could be wrong "
            "when the error field reports something else than this action failing.",
            cases=paid[:10],
        )
