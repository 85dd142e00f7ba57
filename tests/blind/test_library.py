"""Every question-blind policy of envkit/blind/library.py against two small graders: one
modelled on a real lenient grader (or a task that leaks its answer) that the policy's values
get paid by, and one correct grader that pays none of them. The sequence policies act through
tools and steps, not a value: tests/blind/test_sequences.py plays them on a real server."""

from __future__ import annotations

import ast
import difflib
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

import pytest

from envkit.blind import files, library, slots

Grader = Callable[[object], float]
PAID = 0.45  # a grader "pays" a policy when one of its values earns at least this much


def _text(answer: object) -> str:
    return answer if isinstance(answer, str) else json.dumps(answer)


def _number(answer: object) -> float | None:
    if isinstance(answer, bool):
        return None
    if isinstance(answer, int | float):
        return float(answer)
    try:
        return float(str(answer).strip())
    except ValueError:
        return None


# -- correct graders ---------------------------------------------------------------------------
def exact(expected: str) -> Grader:
    """The reply, stripped, is the reference."""
    return lambda a: 1.0 if _text(a).strip() == expected else 0.0


def exact_number(expected: float) -> Grader:
    """The reply parses as the reference number (within 1e-9)."""

    def grade(a: object) -> float:
        n = _number(a)
        return 1.0 if n is not None and math.isclose(n, expected, abs_tol=1e-9) else 0.0

    return grade


def fenced_function_works(a: object) -> float:
    """The fenced code defines ``square`` and ``square(3) == 9``."""
    m = re.search(r"```[\w-]*\n(.*?)```", _text(a), re.DOTALL)
    namespace: dict = {}
    try:
        exec(m.group(1) if m else _text(a), namespace)  # noqa: S102 - the test's own values
        return 1.0 if namespace["square"](3) == 9 else 0.0
    except Exception:  # noqa: BLE001 - any failure earns nothing
        return 0.0


def json_list_equals(expected: list) -> Grader:
    def grade(a: object) -> float:
        try:
            return 1.0 if json.loads(_text(a)) == expected else 0.0
        except ValueError:
            return 0.0

    return grade


# -- lenient graders, each a pattern met in real environments ---------------------------------
def prefix_of_reference(expected: str) -> Grader:
    """``expected.startswith(answer)``: meant to accept an unfinished long answer."""
    return lambda a: 1.0 if expected.startswith(_text(a).strip()) else 0.0


def format_credit(a: object) -> float:
    """Half the range for any non-blank reply (``if answer.strip()``), however it looks."""
    return 0.5 if _text(a).strip() else 0.0


def tag_format_credit(a: object) -> float:
    """Half the range for the requested answer format, filled or not."""
    text = _text(a)
    ok = re.search(r"<answer>.*</answer>|\\boxed\{.*\}|Answer:", text, re.DOTALL)
    return 0.5 if ok else 0.0


def valid_json_credit(a: object) -> float:
    """Half the range for a reply that parses as JSON."""
    try:
        json.loads(_text(a))
    except ValueError:
        return 0.0
    return 0.5


def code_compiles(a: object) -> float:
    """The fenced code compiles (no test runs it)."""
    m = re.search(r"```[\w-]*\n(.*?)```", _text(a), re.DOTALL)
    try:
        compile(m.group(1) if m else _text(a), "<answer>", "exec")
    except SyntaxError:
        return 0.0
    return 1.0


def markdown_structure(a: object) -> float:
    """A rubric counting sections: a heading, a list, a final-answer line."""
    text = _text(a)
    parts = [r"^#", r"^- ", r"(?i)final answer"]
    return sum(0.33 for p in parts if re.search(p, text, re.MULTILINE))


def token_recall(reference: str) -> Grader:
    """ROUGE-1 recall: the share of the reference's words the reply contains."""
    want = set(re.findall(r"\w+", reference.lower()))
    return lambda a: len(want & set(re.findall(r"\w+", _text(a).lower()))) / len(want)


def contains(expected: str) -> Grader:
    """The reference anywhere in the reply, ignoring case."""
    return lambda a: 1.0 if expected.lower() in _text(a).lower() else 0.0


def contains_word(expected: str) -> Grader:
    """The reference as a whole word anywhere in the reply."""
    return lambda a: 1.0 if re.search(rf"\b{re.escape(expected)}\b", _text(a)) else 0.0


def char_overlap(reference: str) -> Grader:
    """Half the range times the share of the reference's characters (case folded) the reply
    holds."""
    want = set(reference.casefold())
    return lambda a: 0.5 * len(want & set(_text(a).casefold())) / len(want)


def literal_eval_equals(expected: object) -> Grader:
    """``ast.literal_eval(answer) == expected``: ``True == 1`` in Python."""

    def grade(a: object) -> float:
        try:
            return 1.0 if ast.literal_eval(_text(a).strip()) == expected else 0.0
        except (ValueError, SyntaxError):
            return 0.0

    return grade


def no_wrong_items(expected: list) -> Grader:
    """Precision only: every listed item is right (``json.loads`` of ``null`` lists none)."""

    def grade(a: object) -> float:
        try:
            items = json.loads(_text(a))
        except ValueError:
            return 0.0
        if items is not None and not isinstance(items, list):
            return 0.0
        return 1.0 if all(x in expected for x in items or []) else 0.0

    return grade


def not_too_far(expected: float, tolerance: float) -> Grader:
    """``not abs(x - expected) > tolerance``: every comparison with NaN is false."""

    def grade(a: object) -> float:
        n = _number(a)
        return 0.0 if n is None or abs(n - expected) > tolerance else 1.0

    return grade


def within(expected: float, tolerance: float) -> Grader:
    def grade(a: object) -> float:
        n = _number(a)
        return 1.0 if n is not None and abs(n - expected) <= tolerance else 0.0

    return grade


def relative_to_answer(expected: float) -> Grader:
    """A 1 % tolerance taken of the reply, not of the reference: ``inf`` is within it."""

    def grade(a: object) -> float:
        n = _number(a)
        return 1.0 if n is not None and abs(n - expected) <= 0.01 * abs(n) else 0.0

    return grade


def small_cost(a: object) -> float:
    """A cost to minimise, paid as ``1 - |x| / 100``: the reply's size, not its truth."""
    n = _number(a)
    return max(0.0, 1.0 - abs(n) / 100) if n is not None and math.isfinite(n) else 0.0


def abstention_bonus(a: object) -> float:
    """An honesty bonus: half the range for admitting not knowing (never hallucinate)."""
    text = _text(a).lower()
    return 0.5 if "don't know" in text or "cannot" in text else 0.0


def log_says_passed(a: object) -> float:
    """The reply is read as a test log: ``passed`` or ``PASS`` in it is a pass."""
    return 1.0 if re.search(r"(?i)\bpass(ed)?\b|correct", _text(a)) else 0.0


def same_words(expected: str) -> Grader:
    """Set-of-words comparison: the order of the words is lost."""
    return lambda a: 1.0 if set(_text(a).lower().split()) == set(expected.lower().split()) else 0.0


def date_format(a: object) -> float:
    """Only the form is checked: ``YYYY-MM-DD``."""
    return 1.0 if re.fullmatch(r"\d{4}-\d{2}-\d{2}", _text(a).strip()) else 0.0


def fuzzy(expected: str, at_least: float = 0.75) -> Grader:
    """``difflib`` similarity at or above ``at_least``."""
    return lambda a: (
        1.0 if difflib.SequenceMatcher(None, _text(a), expected).ratio() >= at_least else 0.0
    )


def proof_lines(rules: tuple[str, ...]) -> Grader:
    """A proof of justified lines (``{formula, rule, refs}``) checked line by line, its last
    line the goal ``R``; ``rules`` the justifications it accepts (``sorry``: one left in
    for authors testing partial proofs)."""

    def grade(a: object) -> float:
        try:
            lines = json.loads(_text(a))
        except ValueError:
            return 0.0
        seen: list[str] = []
        for line in lines if isinstance(lines, list) else [None]:
            if not isinstance(line, dict) or line.get("rule") not in rules:
                return 0.0
            refs = line.get("refs") or []
            if line["rule"] == "hyp" and line.get("formula") not in ("P", "(P -> R)"):
                return 0.0
            if line["rule"] == "mp" and (
                len(refs) != 2 or [seen[i] for i in refs] != ["P", f"(P -> {line['formula']})"]
            ):
                return 0.0
            seen.append(str(line.get("formula")))
        return 1.0 if seen and seen[-1] == "R" else 0.0

    return grade


# -- observations as a server would answer them ------------------------------------------------
CAPITAL = {
    "question": "What is the capital of France? Reply with the city inside <answer></answer>.",
    "attempts_left": 3,
}
MATH = {"question": "What does print(6 * 7) output?"}
MATH_LEAKED = {**MATH, "log": "expected output: 42"}  # the test's own output in the task
COLOUR = {
    "question": "Pick the colour of a clear daytime sky.",
    "choices": ["red", "blue", "green"],
}
PLANET = {"question": "Which planet is the largest?\nA) Mars\nB) Jupiter\nC) Venus\nD) Earth"}
FRUIT = {"question": "Which of these is a fruit: hammer, apple or chair?"}
WEEK = {"question": "How many days are there in a week?"}
CODE = {"question": "Write a Python function square(x) returning x * x, in a ```python fence."}
PRIMES = {"question": "List the primes below 10 as a JSON list."}
MOONS = {"question": "How many moons does Earth have?"}
PI = {"question": "Give pi to two decimals."}
BUDGET = {"question": "How many spare parts should the depot order this week?"}
CITY = {"question": "Which US city is called the Big Apple?"}
PROOF = {"question": "Prove R from P and (P -> R): lines {formula, rule, refs}, rules hyp, mp."}
PROOF_ORACLE = json.dumps(
    [
        {"formula": "P", "rule": "hyp", "refs": []},
        {"formula": "(P -> R)", "rule": "hyp", "refs": []},
        {"formula": "R", "rule": "mp", "refs": [0, 1]},
    ]
)
INCIDENT = {"question": "One service is failing: read its logs and report the cause."}
DATE = {"question": "On which date (YYYY-MM-DD) did the 2024 spring equinox dinner take place?"}


@dataclass(frozen=True)
class Case:
    """One policy's pair: ``pays`` earns from its values on ``observation`` (or on
    ``paid_on`` when the environment, not the grader, is what pays), ``holds`` pays none."""

    observation: dict
    pays: Grader
    holds: Grader
    kind: str = "string"
    oracle: object = None
    paid_on: dict | None = None
    others: tuple[str, ...] = ()


CASES: dict[str, Case] = {
    "empty": Case(CAPITAL, prefix_of_reference("Paris"), exact("Paris")),
    "whitespace": Case(CAPITAL, prefix_of_reference("Paris"), exact("Paris")),
    "zero-width": Case(CAPITAL, format_credit, exact("Paris")),
    "empty-format": Case(CAPITAL, tag_format_credit, exact("Paris")),
    "empty-json": Case(PRIMES, valid_json_credit, json_list_equals([2, 3, 5, 7])),
    "empty-code-fence": Case(CODE, code_compiles, fenced_function_works),
    "markdown-skeleton": Case(CAPITAL, markdown_structure, exact("Paris")),
    "prompt-copied": Case(CAPITAL, token_recall("The capital of France is Paris"), exact("Paris")),
    "observation-json": Case(
        CAPITAL, token_recall("The capital of France is Paris"), exact("Paris")
    ),
    "every-option": Case(COLOUR, contains("blue"), exact("blue")),
    "every-letter": Case(PLANET, contains_word("B"), exact("B")),
    "every-number": Case(MATH, exact_number(42), exact_number(42), paid_on=MATH_LEAKED),
    "every-word": Case(FRUIT, contains("apple"), exact("apple")),
    "numeric-sweep": Case(WEEK, contains_word("7"), exact("7")),
    "long-repetition": Case(CAPITAL, char_overlap("Paris"), exact("Paris")),
    "special-true": Case(MOONS, literal_eval_equals(1), exact("1")),
    "special-null": Case(PRIMES, no_wrong_items([2, 3, 5, 7]), json_list_equals([2, 3, 5, 7])),
    "special-nan": Case(PI, not_too_far(3.14, 0.005), within(3.14, 0.005)),
    "special-inf": Case(PI, relative_to_answer(3.14), within(3.14, 0.005)),
    "negative-zero": Case(BUDGET, small_cost, exact_number(17), kind="number"),
    "well-formed-placeholder": Case(DATE, date_format, exact("2024-03-20")),
    "refusal": Case(CAPITAL, abstention_bonus, exact("Paris")),
    "other-seeds-answers": Case(
        INCIDENT,
        contains("disk full"),
        exact("disk full"),
        others=("out of memory", "disk full", "connection timeout"),
    ),
    "claimed-verdict": Case(CODE, log_says_passed, fenced_function_works),
    "off-by-one": Case(MATH, within(42, 1.5), exact_number(42), kind="number", oracle=42),
    "truncated": Case(CAPITAL, prefix_of_reference("Paris"), exact("Paris"), oracle="Paris"),
    "reordered": Case(CITY, same_words("New York"), exact("New York"), oracle="New York"),
    "with-wrong-suffix": Case(CAPITAL, contains("Paris"), exact("Paris"), oracle="Paris"),
    "denied": Case(CAPITAL, contains("Paris"), exact("Paris"), oracle="Paris"),
    "among-wrong": Case(CAPITAL, contains("Paris"), exact("Paris"), oracle="Paris"),
    "wrong-value": Case(DATE, date_format, exact("2024-03-20"), oracle="2024-03-20"),
    "proof-placeholder": Case(
        PROOF,
        proof_lines(("hyp", "mp", "sorry")),
        proof_lines(("hyp", "mp")),
        oracle=PROOF_ORACLE,
    ),
    "case-changed": Case(
        CAPITAL,
        lambda a: float(_text(a).strip().lower() == "paris"),
        exact("Paris"),
        oracle="Paris",
    ),
    "lookalike-unicode": Case(CAPITAL, fuzzy("Paris"), exact("Paris"), oracle="Paris"),
}
SEQUENCES = {
    "every-tool-once",
    "one-tool-repeated",
    "invalid-arguments-read-back",
    "give-up",
    "repeat-last",
    "stall",
    "write-shown-paths",
    "fix-commented-out",
}


def sent(name: str, observation: dict) -> list[object]:
    """The values policy ``name`` sends on ``observation``, as the validator puts them in a
    slot of the case's kind (:func:`envkit.blind.slots.coerce`)."""
    case = CASES[name]
    p = library.POLICIES[name]
    ctx = replace(library.Context.of(observation, case.kind), others=case.others)
    if p.needs_oracle:
        ctx = replace(ctx, oracle=case.oracle)
    slot = slots.Slot(("answer",), case.kind, "", {})
    values = [slots.coerce(v, slot) for v in library.values_for(p, ctx)]
    return [v for v in values if v is not None]


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_policy_is_paid_by_a_lenient_grader(name: str) -> None:
    case = CASES[name]
    values = sent(name, case.paid_on or case.observation)
    assert values, f"{name} sends nothing on its paying case"
    assert max(case.pays(v) for v in values) >= PAID, values


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_policy_earns_nothing_from_a_correct_grader(name: str) -> None:
    case = CASES[name]
    values = sent(name, case.observation)
    assert values, f"{name} sends nothing on its case"
    assert max(case.holds(v) for v in values) == 0.0, values


def test_every_policy_has_its_pair_of_tests() -> None:
    """A policy added to the library without a case here (or a sequence policy without its
    end-to-end test in test_sequences.py) fails this test."""
    declared = set(library.POLICIES)
    assert set(CASES).isdisjoint(SEQUENCES)
    assert declared == set(CASES) | SEQUENCES, sorted(declared ^ (set(CASES) | SEQUENCES))
    assert {n for n, p in library.POLICIES.items() if p.sequence} == SEQUENCES


def test_at_least_thirty_judged_policies_each_documented() -> None:
    judged = [p for p in library.POLICIES.values() if p.judged in ("floor", "accepted")]
    assert len(judged) >= 30
    for p in library.POLICIES.values():
        assert p.sends.strip() and p.source.strip(), p.name
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", p.name), p.name
        assert p.judged in ("floor", "accepted", "none")
    assert [r["name"] for r in library.listing()] == list(library.POLICIES)


def test_corruptions_need_the_oracle_and_sequences_send_no_value() -> None:
    ctx = library.Context.of(CAPITAL)
    for p in library.POLICIES.values():
        if p.needs_oracle or p.sequence:
            assert library.values_for(p, ctx) == [], p.name
        if p.needs_oracle:
            assert p.judged in ("accepted", "none"), p.name


def test_values_are_capped_and_distinct() -> None:
    ctx = replace(library.Context.of(CAPITAL), oracle="Paris")
    for p in library.POLICIES.values():
        values = library.values_for(p, ctx)
        assert len(values) <= library.MAX_VALUES, p.name
        keys = [json.dumps(v, sort_keys=True) for v in values]
        assert len(keys) == len(set(keys)), p.name


def test_a_corrupted_answer_keeps_its_format() -> None:
    """The oracle's answer inside tags is changed inside them; the tags are kept."""
    p = library.POLICIES["wrong-value"]
    ctx = replace(library.Context.of(CAPITAL), oracle="<answer>Paris</answer>")
    assert library.values_for(p, ctx) == ["<answer>Cnevf</answer>"]


def test_context_reads_the_observation_not_its_tools() -> None:
    obs = {
        **PLANET,
        "tools": [{"name": "secret_tool", "input_schema": {"type": "object"}}],
        "step": 3,
    }
    ctx = library.Context.of(obs)
    assert ctx.options == ("A", "B", "C", "D")
    assert 3.0 in ctx.numbers
    assert not any("secret_tool" in t for t in ctx.texts)
    assert library.Context.of(CAPITAL).tags == ("answer",)


def test_a_number_slot_gets_numbers_only() -> None:
    ctx = library.Context.of(MATH, "number")
    for p in library.POLICIES.values():
        for v in library.values_for(p, ctx):
            assert isinstance(v, int | float) and not isinstance(v, bool), (p.name, v)


def test_policy_declared_twice_or_badly_judged_is_refused() -> None:
    with pytest.raises(ValueError, match="declared twice"):
        library.policy("empty", "x", "y")(lambda _c: [])
    with pytest.raises(ValueError, match="judged must be"):
        library.policy("brand-new", "x", "y", "sometimes")
    assert "brand-new" not in library.POLICIES


def test_every_word_fills_a_list_answer_with_every_word() -> None:
    """Recall without precision (Terminal Wrench's metric spoofing): a list answer is sent
    every word of the observation as its items; a text slot gets them in one reply."""
    ctx = library.Context.of({"prompt": "Find the palindromes: level, kayak and river."})
    values = library.values_for(library.POLICIES["every-word"], ctx)
    words = ["Find", "the", "palindromes", "level", "kayak", "and", "river"]
    assert values == [" ".join(words), words]
    text = slots.Slot(("answer",), "string", "x", {})
    many = slots.Slot(("words",), "array", ["x"], {})
    assert [slots.coerce(v, text) for v in values] == [" ".join(words), None]
    assert slots.coerce(values[1], many) == words


def test_the_files_an_observation_names() -> None:
    texts = [
        "Write out.txt: the words of in.txt. tests/cases.json holds the checks run on submit.",
        "See e.g. version 3.5 and ./x and config.yaml.",
    ]
    assert files.shown_paths(texts) == ["out.txt", "in.txt", "tests/cases.json", "config.yaml"]


def test_a_written_file_is_commented_out_in_its_own_language() -> None:
    assert files.commented_out("app.conf", "port = 1\n\ntls = on\n") == "# port = 1\n\n# tls = on\n"
    assert files.commented_out("src/main.go", "x := 1") == "// x := 1"
    assert files.commented_out("q.sql", "SELECT 1;\n") == "-- SELECT 1;\n"
    assert files.commented_out("Dockerfile", "FROM python") == "# FROM python"
    # no line comment envkit knows (JSON, Markdown, plain text), or nothing to comment
    assert files.commented_out("data.json", '{"a": 1}') is None
    assert files.commented_out("notes.md", "# Title") is None
    assert files.commented_out("app.conf", "  \n") is None


def test_a_proof_assistants_proof_is_left_to_its_placeholder() -> None:
    p = library.POLICIES["proof-placeholder"]
    lean = "theorem t (p : Prop) (h : p) : p := by\n  exact h\n"
    ctx = replace(library.Context.of({"task": "Prove the theorem in Lean 4."}), oracle=lean)
    assert library.values_for(p, ctx) == ["theorem t (p : Prop) (h : p) : p := by sorry"]
    coq = "Lemma l : True.\nProof. exact I. Qed."
    ctx = replace(ctx, oracle=coq)
    assert library.values_for(p, ctx) == ["Lemma l : True.\nProof. admit. Admitted."]
    # not a task about proofs: nothing is sent
    other = replace(library.Context.of(CAPITAL), oracle=lean)
    assert library.values_for(p, other) == []
