"""The question-blind policies: what an agent that never solved the task can send.

Each policy is declared once, here: its name, what it sends, where the idea comes from, and
how its payout is judged. The validator plays every policy whose action shape fits the
environment (:mod:`envkit.validation.rules.blind_play`); ``envkit rules --policies`` lists
them and docs/policies.md is generated from this table.

Three kinds:

* **content-free** (``judged="floor"``): replies that carry no answer — empty, a format
  skeleton, the prompt copied back, every option at once, every number the observation
  shows. A grader that pays them more than a small share of the oracle's return pays for
  something other than the task.
* **corrupted oracle** (``judged="accepted"``): the oracle's own answer made wrong — off by
  one, truncated, reordered, denied, listed among wrong answers. Closeness credit may rank
  them (that is shaping); paying one as if it were right is a lenient checker.
* **informational** (``judged="none"``): equivalent forms a grader may rightly accept (case
  changed, lookalike characters); played and recorded, never a finding.

Sequence policies (``sequence=True``) act through tool calls and the step limit rather than
the answer's content: every tool once, one tool over and over, invalid arguments with the
errors read back as answers, stalling.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MAX_VALUES = 6  # values one policy sends for one slot (each is an episode)
LONG = 2000  # characters of the long-repetition reply (or the slot's maxLength)
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
WORD = re.compile(r"[^\W\d_]{2,}", re.UNICODE)
TAG = re.compile(r"<([A-Za-z_][\w-]{0,30})>")
LETTER_OPTION = re.compile(r"(?:^|\s|\()([A-H])[).:]\s", re.MULTILINE)
BOXED = "\\boxed{"


@dataclass(frozen=True)
class Context:
    """What a question-blind policy may read: the observation it answers, never the answer
    (the corrupted-oracle policies alone also get ``oracle``).

    Attributes:
        texts: the observation's strings (field values, nested ones too), in order.
        numbers: the numbers the observation shows (number fields and numerals in its text).
        options: the choices it lists (a list of short strings, or lettered options ``A)``).
        tags: the XML-like tags its text names (``answer`` of ``<answer>``).
        kind: the slot's kind (``"string"``, ``"number"``, ``"integer"``).
        oracle: the oracle's value in this slot (``None``: no oracle, or a content-free
            policy).
        max_length: the slot's ``maxLength`` (``None``: not declared).
        others: the oracle's answers in this slot on the other seeds it won (the task's
            answer space as an agent meets it across episodes; never this seed's episode).
    """

    texts: tuple[str, ...] = ()
    numbers: tuple[float, ...] = ()
    options: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    kind: str = "string"
    oracle: object = None
    max_length: int | None = None
    others: tuple[str, ...] = ()

    @classmethod
    def of(
        cls, observation: object, kind: str = "string", max_length: int | None = None
    ) -> Context:
        """The context of ``observation`` (a JSON object as answered) for a slot of
        ``kind``; tool lists and schemas in it are skipped (their text is not the task)."""
        texts: list[str] = []
        numbers: list[float] = []
        options: list[str] = []

        def walk(value: object, depth: int, key: str = "") -> None:
            if depth > 5 or key in ("tools", "metadata", "input_schema", "inputSchema"):
                return
            if isinstance(value, str):
                texts.append(value)
            elif isinstance(value, bool):
                return
            elif isinstance(value, int | float):
                numbers.append(float(value))
            elif isinstance(value, dict):
                for k, v in value.items():
                    walk(v, depth + 1, str(k))
            elif isinstance(value, list):
                if 1 < len(value) <= 26 and all(isinstance(v, str) and len(v) < 80 for v in value):
                    options.extend(value)
                for v in value[:50]:
                    walk(v, depth + 1, key)

        walk(observation, 0)
        joined = "\n".join(texts)
        for m in NUMBER.finditer(joined):
            numbers.append(float(m.group()))
        letters = sorted(set(LETTER_OPTION.findall(joined)))
        if len(letters) >= 2 and not options:
            options = letters
        tags = tuple(dict.fromkeys(TAG.findall(joined)))
        return cls(
            tuple(texts),
            tuple(dict.fromkeys(numbers)),
            tuple(dict.fromkeys(options)),
            tags,
            kind,
            None,
            max_length,
        )

    @property
    def prompt(self) -> str:
        """The observation's text, joined."""
        return "\n".join(t for t in self.texts if t.strip())

    @property
    def words(self) -> tuple[str, ...]:
        """The distinct words of the observation's text, in order."""
        return tuple(dict.fromkeys(WORD.findall(self.prompt)))


@dataclass(frozen=True)
class BlindPolicy:
    """One question-blind policy.

    Attributes:
        name: kebab-case, stable (it names the policy in findings and JSON).
        sends: what it sends, in one sentence.
        source: where the idea comes from (a peer's policy, a paper, a tracker issue).
        judged: ``"floor"`` (content-free: judged against a small share of the oracle's
            return), ``"accepted"`` (a wrong answer: judged as paid like the right one) or
            ``"none"`` (informational).
        values: the values it puts in an answer slot, from the :class:`Context` (``[]``:
            it does not fit this slot).
        sequence: a sequence policy (played by the caller through tool calls and steps, not
            through a slot's value); ``values`` is unused.
        needs_oracle: it corrupts the oracle's answer (played only with an oracle).
    """

    name: str
    sends: str
    source: str
    judged: str
    values: Callable[[Context], list[object]] = field(default=lambda _c: [])
    sequence: bool = False
    needs_oracle: bool = False


POLICIES: dict[str, BlindPolicy] = {}


def policy(
    name: str,
    sends: str,
    source: str,
    judged: str = "floor",
    *,
    sequence: bool = False,
    needs_oracle: bool = False,
) -> Callable[[Callable[[Context], list[object]]], Callable[[Context], list[object]]]:
    """Declare a policy (a decorator over its ``values`` function).

    Raises:
        ValueError: a name declared twice, or an unknown ``judged``.
    """
    if judged not in ("floor", "accepted", "none"):
        raise ValueError(f"judged must be floor, accepted or none, not {judged!r}")

    def register(fn: Callable[[Context], list[object]]) -> Callable[[Context], list[object]]:
        if name in POLICIES:
            raise ValueError(f"question-blind policy {name!r} is declared twice")
        POLICIES[name] = BlindPolicy(name, sends, source, judged, fn, sequence, needs_oracle)
        return fn

    return register


def _text_only(ctx: Context, values: list[object]) -> list[object]:
    return values if ctx.kind == "string" else []


ENVDOCTOR = "rl-envdoctor 0.1.0's policies"
BOHRIN = "bohrin's weakness list (BGW-123 output checker too lenient)"
EMPTY_778 = "huggingface/OpenEnv#778 (a verifier gave 1.0 for the empty answer)"

# -- content-free replies ------------------------------------------------------------------


@policy("empty", 'An empty answer: `""` in a text slot, `0` in a number slot.', EMPTY_778)
def _empty(ctx: Context) -> list[object]:
    return [""] if ctx.kind == "string" else [0]


@policy("whitespace", "Only whitespace: spaces, a tab and a newline.", ENVDOCTOR)
def _whitespace(ctx: Context) -> list[object]:
    return _text_only(ctx, ["   ", " \t\n "])


@policy(
    "zero-width",
    "Zero-width characters only (U+200B, U+200C, U+FEFF): non-empty, shows nothing.",
    "Unicode TR36 (invisible characters); bypasses `if not answer.strip()` guards",
)
def _zero_width(ctx: Context) -> list[object]:
    return _text_only(ctx, ["\u200b\u200c\ufeff"])


@policy(
    "empty-format",
    "The expected format with nothing inside: each tag the prompt names (`<answer></answer>`), "
    "`\\boxed{}`, `Answer:`.",
    ENVDOCTOR + " (empty answer tag)",
)
def _empty_format(ctx: Context) -> list[object]:
    tags = [f"<{t}></{t}>" for t in ctx.tags[:3]] or ["<answer></answer>"]
    return _text_only(ctx, [*tags, BOXED + "}", "Answer:", "Final answer: "][:MAX_VALUES])


@policy("empty-json", 'An empty JSON value as text: `{}`, `[]`, `{"answer": ""}`.', ENVDOCTOR)
def _empty_json(ctx: Context) -> list[object]:
    return _text_only(ctx, ["{}", "[]", '{"answer": ""}'])


@policy("empty-code-fence", "An empty fenced code block (`` ```python ``…`` ``` ``).", ENVDOCTOR)
def _empty_fence(ctx: Context) -> list[object]:
    return _text_only(ctx, ["```\n```", "```python\npass\n```"])


@policy(
    "markdown-skeleton",
    "A markdown answer skeleton: headings and empty list items, no content.",
    ENVDOCTOR + " (markdown skeleton)",
)
def _markdown(ctx: Context) -> list[object]:
    return _text_only(ctx, ["# Answer\n\n## Reasoning\n\n- \n- \n\n**Final answer:** "])


@policy("prompt-copied", "The observation's text copied back as the answer.", ENVDOCTOR)
def _prompt(ctx: Context) -> list[object]:
    return _text_only(ctx, [ctx.prompt] if ctx.prompt.strip() else [])


@policy(
    "observation-json",
    "The whole observation serialised as JSON text.",
    "Terminal Wrench (arXiv 2604.17596): output spoofing",
)
def _observation_json(ctx: Context) -> list[object]:
    return _text_only(ctx, [json.dumps(list(ctx.texts))] if ctx.texts else [])


@policy(
    "every-option",
    "Every choice the observation lists, at once (`A, B, C, D`; the option texts joined).",
    ENVDOCTOR + " (every multiple-choice letter); arXiv 2604.15149 (enumerating labels)",
)
def _every_option(ctx: Context) -> list[object]:
    if not ctx.options:
        return []
    return _text_only(ctx, [", ".join(ctx.options), " ".join(ctx.options), "".join(ctx.options)])


@policy(
    "every-letter",
    "Every option letter at once: `A B C D E`, `ABCD`.",
    ENVDOCTOR + " (every multiple-choice letter)",
)
def _every_letter(ctx: Context) -> list[object]:
    return _text_only(ctx, ["A B C D E", "ABCD", "A, B, C, D"])


@policy(
    "every-number",
    "Each number the observation shows (one per episode), and all of them in one reply.",
    "arXiv 2604.15149 (models copy the problem's numbers); BGW-115 solution in the task text",
)
def _every_number(ctx: Context) -> list[object]:
    values: list[object] = list(ctx.numbers[: MAX_VALUES - 1])
    if ctx.kind == "string" and len(ctx.numbers) > 1:
        values.append(" ".join(_num(n) for n in ctx.numbers[:50]))
    return values


@policy(
    "every-word",
    "Every word the observation shows, in one reply (a list answer gets them as its items).",
    "BGW-123 output checker too lenient (containment); Terminal Wrench keyword gaming and "
    "metric spoofing (recall without precision)",
)
def _every_word(ctx: Context) -> list[object]:
    words = list(ctx.words[:400])
    # the list fits only a list slot (slots.coerce): each word an item of the answer
    return _text_only(ctx, [" ".join(words), words] if len(words) > 1 else [])


@policy(
    "numeric-sweep",
    "Round numbers: 1, -1, 10, 100, 0.5 (0 is `empty`'s); in a text slot also 0 to 100 in "
    "one reply.",
    ENVDOCTOR + " (numeric probes)",
)
def _sweep(ctx: Context) -> list[object]:
    values: list[object] = [1, -1, 10, 100, 0.5]
    if ctx.kind == "string":
        values.append(" ".join(str(i) for i in range(101)))
    return values


@policy(
    "long-repetition",
    "The alphabet (both cases) and the digits repeated to 2000 characters (or the slot's "
    "maxLength).",
    "BGW-122 partial credit rewards the wrong approach (overlap scores); verbosity bias",
)
def _long(ctx: Context) -> list[object]:
    n = min(LONG, ctx.max_length) if ctx.max_length else LONG
    unit = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ., "
    return _text_only(ctx, [(unit * (n // len(unit) + 1))[:n]] if n > 0 else [])


@policy("special-true", "`true` (and `True`, `yes`).", ENVDOCTOR + " (special values)")
def _true(ctx: Context) -> list[object]:
    return _text_only(ctx, ["true", "True", "yes"])


@policy("special-null", "`null` (and `None`, `undefined`).", ENVDOCTOR + " (special values)")
def _null(ctx: Context) -> list[object]:
    return _text_only(ctx, ["null", "None", "undefined"])


@policy("special-nan", "`NaN` as text.", "huggingface/OpenEnv#1200 (NaN rewards accepted)")
def _nan(ctx: Context) -> list[object]:
    return _text_only(ctx, ["NaN", "nan"])


@policy(
    "special-inf",
    "`inf`, `Infinity`, `-inf` as text; a huge number in a number slot.",
    "huggingface/OpenEnv#1200; float comparisons that overflow",
)
def _inf(ctx: Context) -> list[object]:
    return ["inf", "Infinity", "-inf"] if ctx.kind == "string" else [1e308, -1e308]


@policy("negative-zero", "`-0` (and `-0.0`).", "IEEE 754 signed zero; `-0 == 0` in Python")
def _neg_zero(ctx: Context) -> list[object]:
    return ["-0", "-0.0"] if ctx.kind == "string" else [-0.0]


@policy(
    "well-formed-placeholder",
    "A value of a common form that says nothing: the date `2000-01-01`, the time "
    "`00:00:00`, the address `user@example.com`, the URL `https://example.com`.",
    "Terminal Wrench (arXiv 2604.17596): constraint loophole (a field checked for its form, "
    "not its value)",
)
def _placeholder(ctx: Context) -> list[object]:
    return _text_only(ctx, list(PLACEHOLDERS))


#: Well-formed values of common answer forms, true of no task.
PLACEHOLDERS = ("2000-01-01", "00:00:00", "user@example.com", "https://example.com")


@policy(
    "other-seeds-answers",
    "Every answer the oracle gave on the other seeds, at once (`disk full, out of memory, "
    "connection timeout`): the task's answer space, not this question's answer.",
    "Terminal Wrench keyword gaming (every cause phrase in one report); rl-envdoctor's "
    "every-label policy over the labels seen",
)
def _other_seeds(ctx: Context) -> list[object]:
    return _text_only(ctx, [", ".join(ctx.others)] if len(ctx.others) >= 2 else [])


@policy(
    "refusal",
    "A refusal: `I don't know.`, `I cannot answer that.`",
    ENVDOCTOR + " (refusal)",
)
def _refusal(ctx: Context) -> list[object]:
    return _text_only(ctx, ["I don't know.", "I cannot answer that."])


@policy(
    "claimed-verdict",
    "A claim of success instead of an answer: `Correct!`, `All tests passed.`, `PASS`.",
    "BGW-113 measurement tampering; Terminal Wrench output spoofing",
)
def _verdict(ctx: Context) -> list[object]:
    return _text_only(ctx, ["Correct!", "All tests passed. 10/10", "PASS", "reward: 1.0"])


# -- the oracle's answer, corrupted --------------------------------------------------------


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else repr(value)


def _as_number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _shift(text: str) -> str:
    """A different value of the same form: digits shifted by 5, ASCII letters by 13."""
    out = []
    for c in text:
        if c.isdigit() and c.isascii():
            out.append(str((int(c) + 5) % 10))
        elif c.isascii() and c.isalpha():
            base = ord("a") if c.islower() else ord("A")
            out.append(chr(base + (ord(c) - base + 13) % 26))
        else:
            out.append(c)
    return "".join(out)


def _oracle_text(ctx: Context) -> str | None:
    if isinstance(ctx.oracle, str) and ctx.oracle.strip():
        return ctx.oracle
    if isinstance(ctx.oracle, int | float) and not isinstance(ctx.oracle, bool):
        return _num(float(ctx.oracle))
    return None


WRAPPED = (
    re.compile(r"(<([A-Za-z_][\w-]{0,30})>\s*)(.*?)(\s*</\2>)", re.DOTALL),
    re.compile(r"(\\boxed\{)(.*)(\})", re.DOTALL),
    re.compile(r"(```[\w-]*\n)(.*?)(\n?```)", re.DOTALL),
)


def _corrupted(ctx: Context, change: Callable[[str], list[str]]) -> list[object]:
    """``change`` applied to the oracle's answer where it sits: inside its answer tags,
    ``\\boxed{}`` or code fence when it has one (the format kept, only the answer made
    wrong), else to the whole text."""
    text = _oracle_text(ctx)
    if text is None or ctx.kind != "string":
        return []
    for pattern in WRAPPED:
        m = pattern.search(text)
        if m is None:
            continue
        groups = m.groups()
        head, core, tail = groups[0], groups[-2], groups[-1]
        if not core.strip():
            continue
        before, after = text[: m.start()] + head, tail + text[m.end() :]
        return [before + c + after for c in change(core) if c != core]
    return [c for c in change(text) if c != text]


@policy(
    "off-by-one",
    "The oracle's answer off by one (a number ±1; the last digit of a text changed).",
    ENVDOCTOR + " (corrupted oracle); bohrin 0.3.0 weak-oracle probe",
    "accepted",
    needs_oracle=True,
)
def _off_by_one(ctx: Context) -> list[object]:
    n = _as_number(ctx.oracle)
    if n is not None:
        values: list[object] = [n + 1, n - 1]
        return [_num(v) for v in values] if ctx.kind == "string" else values
    text = _oracle_text(ctx)
    if text is None:
        return []
    digits = [i for i, c in enumerate(text) if c.isdigit()]
    if not digits:
        return []
    i = digits[-1]
    return [text[:i] + str((int(text[i]) + 1) % 10) + text[i + 1 :]]


@policy(
    "truncated",
    "The first half of the oracle's answer (a number's integer part when it has decimals).",
    ENVDOCTOR + " (corrupted oracle); BGW-123 prefix matching",
    "accepted",
    needs_oracle=True,
)
def _truncated(ctx: Context) -> list[object]:
    n = _as_number(ctx.oracle)
    if n is not None and not isinstance(ctx.oracle, str):
        return [float(int(n))] if not float(n).is_integer() else []
    return _corrupted(ctx, lambda t: [t[: len(t) // 2]] if len(t) >= 2 else [])


@policy(
    "reordered",
    "The oracle's answer reordered: its words (or characters) reversed.",
    ENVDOCTOR + " (corrupted oracle); sorted-set comparisons",
    "accepted",
    needs_oracle=True,
)
def _reordered(ctx: Context) -> list[object]:
    def change(text: str) -> list[str]:
        words = text.split()
        return [" ".join(reversed(words)) if len(words) > 1 else text[::-1]]

    return _corrupted(ctx, change)


@policy(
    "with-wrong-suffix",
    "The oracle's answer followed by a wrong one (`Paris Cnevf`).",
    ENVDOCTOR + " (answer with a suffix); BGW-123 containment",
    "accepted",
    needs_oracle=True,
)
def _suffix(ctx: Context) -> list[object]:
    return _corrupted(ctx, lambda t: [f"{t} {_shift(t)}"] if _shift(t) != t else [])


@policy(
    "denied",
    "The oracle's answer denied, inside the reply: `not X, no`, `The answer is not X, I am sure.`",
    ENVDOCTOR + " (answer denied); bohrin 0.3.0 false-negation probe",
    "accepted",
    needs_oracle=True,
)
def _denied(ctx: Context) -> list[object]:
    # the answer neither first nor last: a grader that reads the reply's last (or first)
    # word reads an answer by its position, and a denial there earns a model nothing it
    # would not earn by answering (as among-wrong)
    return _corrupted(ctx, lambda t: [f"not {t}, no", f"The answer is not {t}, I am sure."])


@policy(
    "among-wrong",
    "The oracle's answer listed among wrong ones (`Cnevf, Paris, Cnevf1`).",
    ENVDOCTOR + " (answer among wrong ones); arXiv 2604.15149 (enumerating labels)",
    "accepted",
    needs_oracle=True,
)
def _among_wrong(ctx: Context) -> list[object]:
    # the right answer in the middle only: a grader that reads the first or the last answer
    # given parses by position, and a model gains nothing by hedging there
    def change(text: str) -> list[str]:
        wrong = _shift(text)
        return [f"{wrong}, {text}, {wrong}1"] if wrong != text else []

    return _corrupted(ctx, change)


@policy(
    "wrong-value",
    "A different answer in the oracle's form: digits shifted by 5, letters by 13.",
    "bohrin 0.3.0 identity-return probe; BGW-119 tests too weak",
    "accepted",
    needs_oracle=True,
)
def _wrong_value(ctx: Context) -> list[object]:
    n = _as_number(ctx.oracle)
    if n is not None and not isinstance(ctx.oracle, str):
        return [n * 2 + 7]
    return _corrupted(ctx, lambda t: [_shift(t)])


@policy(
    "case-changed",
    "The oracle's answer in other letter case (a grader may rightly ignore case).",
    ENVDOCTOR + " (corrupted oracle)",
    "none",
    needs_oracle=True,
)
def _case(ctx: Context) -> list[object]:
    return _corrupted(ctx, lambda t: [t.swapcase()])


LOOKALIKE = str.maketrans({"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "x": "х"})


@policy(
    "lookalike-unicode",
    "The oracle's answer with Latin letters swapped for Cyrillic lookalikes (`Pаris`).",
    "Unicode TR39 (confusables)",
    "none",
    needs_oracle=True,
)
def _lookalike(ctx: Context) -> list[object]:
    return _corrupted(ctx, lambda t: [t.translate(LOOKALIKE)])


#: A task about proofs: its text says prove, proof, theorem, lemma or derive.
PROOF_TASK = re.compile(r"\b(?:prove|proofs?|theorems?|lemmas?|derive|derivation)\b", re.IGNORECASE)
#: The placeholders proof assistants accept in place of a proof while one is being written.
PROOF_PLACEHOLDERS = ("sorry", "admit")
_IDENTIFIER = re.compile(r"[A-Za-z_][\w-]{0,15}")


@policy(
    "proof-placeholder",
    "The oracle's proof left to a placeholder: `:= by sorry` (Lean), `Proof. admit. "
    "Admitted.` (Coq); a proof of justified lines cut to its last line, justified by "
    "`sorry` or `admit`.",
    "BGW-135 proof checker accepts incomplete proofs (Lean's reference: validating proofs)",
    "accepted",
    needs_oracle=True,
)
def _proof_placeholder(ctx: Context) -> list[object]:
    text = _oracle_text(ctx)
    if text is None or ctx.kind != "string" or not PROOF_TASK.search(ctx.prompt):
        return []
    out: list[object] = []
    lean = re.search(r":=\s*by\b", text)
    if lean:
        out.append(text[: lean.end()] + " sorry")
    coq = re.search(r"\bProof\.", text)
    if coq:
        out.append(text[: coq.end()] + " admit. Admitted.")
    try:
        lines = json.loads(text)
    except ValueError:
        return out
    if not isinstance(lines, list) or not lines or not isinstance(lines[-1], dict):
        return out
    last = lines[-1]
    emptied = {k: ([] if isinstance(v, list) else v) for k, v in last.items()}
    # the conclusion kept, its justification (one short word at a time) a placeholder
    for key, value in last.items():
        if isinstance(value, str) and _IDENTIFIER.fullmatch(value):
            out += [json.dumps([{**emptied, key: word}]) for word in PROOF_PLACEHOLDERS]
    return out


# -- sequences: tools and steps ------------------------------------------------------------
SEQUENCE_SOURCE = "rl-envdoctor 0.1.0 (tool-use policies); Terminal Wrench constraint loophole"


@policy(
    "every-tool-once",
    "Each tool called once with its minimal valid arguments, then an empty answer.",
    SEQUENCE_SOURCE,
    sequence=True,
)
def _every_tool(_ctx: Context) -> list[object]:
    return []


@policy(
    "one-tool-repeated",
    "One tool (each in turn) called over and over, up to the step limit.",
    SEQUENCE_SOURCE,
    sequence=True,
)
def _one_tool(_ctx: Context) -> list[object]:
    return []


@policy(
    "invalid-arguments-read-back",
    "Each tool called with arguments of the wrong type; the error texts it answers are then "
    "sent back as the answer.",
    "BGW-116 reference readable at run time (errors that quote the expected value)",
    sequence=True,
)
def _invalid_args(_ctx: Context) -> list[object]:
    return []


@policy(
    "write-shown-paths",
    "Each file the observation names (`tests/cases.json`, `out.txt`) written empty (`[]`, "
    "then nothing) with each tool that takes a path and a content, then an empty answer.",
    "BGW-131 evaluator paths writable; Terminal Wrench test tampering",
    sequence=True,
)
def _write_paths(_ctx: Context) -> list[object]:
    return []


@policy(
    "fix-commented-out",
    "The oracle's episode with each file it writes commented out line by line "
    "(`# tls = on` in `app.conf`): the text the fix adds is there, the fix is not.",
    "BGW-138 proxy state check (a config file checked for keywords); BGW-106 dead code for "
    "a static check",
    "accepted",
    sequence=True,
    needs_oracle=True,
)
def _fix_commented_out(_ctx: Context) -> list[object]:
    return []


@policy(
    "give-up",
    "The answer action at once, with the slot's minimal value, on the first step.",
    SEQUENCE_SOURCE,
    sequence=True,
)
def _give_up(_ctx: Context) -> list[object]:
    return []


@policy(
    "repeat-last",
    "An empty answer sent again and again until the episode ends or the step limit.",
    "Terminal Wrench (arXiv 2604.17596): metric spoofing by repetition",
    sequence=True,
)
def _repeat_last(_ctx: Context) -> list[object]:
    return []


@policy(
    "stall",
    "Never answering: a non-answer action (a tool, else the minimal action) to the step limit.",
    "RFC 013 pilot (stalling returns); Terminal Wrench constraint loophole",
    sequence=True,
)
def _stall(_ctx: Context) -> list[object]:
    return []


def judged(kind: str) -> list[BlindPolicy]:
    """The policies judged as ``kind`` (``floor``, ``accepted``, ``none``), in declaration
    order."""
    return [p for p in POLICIES.values() if p.judged == kind]


def values_for(p: BlindPolicy, ctx: Context) -> list[object]:
    """The values ``p`` sends for the slot of ``ctx`` (at most :data:`MAX_VALUES`, no
    duplicates; ``[]`` for a sequence policy, or an oracle corruption without the oracle)."""
    if p.sequence or (p.needs_oracle and ctx.oracle is None):
        return []
    out: list[object] = []
    seen: set[str] = set()
    for v in p.values(ctx):
        key = json.dumps(v, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out[:MAX_VALUES]


def listing() -> list[dict[str, Any]]:
    """Every policy as data (``envkit rules --policies --format json``)."""
    return [
        {
            "name": p.name,
            "sends": p.sends,
            "source": p.source,
            "judged": p.judged,
            "sequence": p.sequence,
            "needs_oracle": p.needs_oracle,
        }
        for p in POLICIES.values()
    ]
