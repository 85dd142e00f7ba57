"""EK2xx submission rules: what a Space and a hackathon submission show besides the code:
the README card (the Space's front matter) and the baseline `inference.py`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from envkit.envdir.card import CardSyntaxError, check_card, read_card
from envkit.findings import Finding, Location, Severity, register
from envkit.validation.context import StaticContext

CARD_INVALID = register(
    "EK208",
    "space-card-invalid",
    Severity.ERROR,
    summary="README.md front matter is missing or invalid for a Docker Space.",
    what="README.md starts with YAML front matter with `title`, `sdk: docker`, `app_port` "
    "equal to the manifest port, named colours, `short_description` <= 60 characters "
    "and `tags` including `openenv`.",
    why="The Hub rejects hex colours and long descriptions at upload time, and routes to port "
    "7860 when `app_port` is missing, so the Space never answers.",
    example="`colorFrom: '#00C9FF'` or no `app_port`.",
    fix="Fix the key the message names (`envkit push` repairs the card in its staged copy).",
)
INFERENCE_SCRIPT = register(
    "EK209",
    "inference-script-invalid",
    Severity.WARNING,
    hygiene=True,
    summary="`inference.py` is missing, does not read API_BASE_URL, MODEL_NAME, HF_TOKEN and "
    "LOCAL_IMAGE_NAME, or does not print the hackathon's [START]/[STEP]/[END] lines.",
    what="`inference.py` exists at the root, reads the `API_BASE_URL`, `MODEL_NAME`, "
    "`HF_TOKEN` and `LOCAL_IMAGE_NAME` environment variables, and prints one line of each "
    "kind in the hackathon's layout: `[START] task=<task> env=<env> model=<model>`, "
    "`[STEP] step=<n> action=<action> reward=<0.00> done=<true|false> error=<msg|null>` "
    "(the reward with two decimals) and `[END] success=<true|false> steps=<n> "
    "score=<0..1> rewards=<r1,r2,...>`. Checked by reading the source (the strings it "
    "prints, with each interpolated value as one token); the script is never run.",
    why="Hackathon submissions and baseline reports run `python inference.py` with these "
    "variables set and grade what it prints by these lines: a script that ignores the "
    "variables uses the wrong model or no key, and one that prints another layout scores "
    "nothing. A hygiene warning: environments outside such a submission need no script.",
    example='An `inference.py` that hard-codes `model="gpt-4o"`, or prints '
    '`f"episode {i}: return {total:.3f}"` instead of the `[START]`/`[STEP]`/`[END]` lines.',
    fix="Start from the `inference.py` `envkit init` writes: it reads the four variables, "
    "prints the three lines (`[END]` also after an error) and scores each episode in [0, 1]; "
    "try it offline with `envkit serve-oracle` (docs/offline-openai.md).",
)

INFERENCE_VARS = ("API_BASE_URL", "MODEL_NAME", "HF_TOKEN", "LOCAL_IMAGE_NAME")
# The hackathon's log lines (the OpenEnv hackathon's sample inference.py, copied into many
# Spaces): tag -> (the layout as documented, a regex over one printed line as written in the
# source, every interpolated value rendered as one `{...}` token).
INFERENCE_LINES = {
    "[START]": (
        "[START] task=<task> env=<env> model=<model>",
        re.compile(r"\[START\] task=\S+ env=\S+ model=\S+"),
    ),
    "[STEP]": (
        "[STEP] step=<n> action=<action> reward=<0.00> done=<true|false> error=<msg|null>",
        re.compile(r"\[STEP\] step=\S+ action=\S+ reward=(\S+) done=\S+ error=\S+"),
    ),
    "[END]": (
        "[END] success=<true|false> steps=<n> score=<0..1> rewards=<r1,r2,...>",
        re.compile(r"\[END\] success=\S+ steps=\S+ score=\S+ rewards=\S*"),
    ),
}


def check(ctx: StaticContext) -> Iterator[Finding]:
    yield from _card(ctx)
    yield from _inference(ctx)


def _card(ctx: StaticContext) -> Iterator[Finding]:
    rel = "README.md"
    text = ctx.text(rel)
    if text is None:
        yield CARD_INVALID.finding(
            "Expected `README.md` with Docker Space front matter (the Space card); found none.",
            location=Location(rel),
        )
        return
    try:
        card = read_card(text)
    except CardSyntaxError as exc:
        yield CARD_INVALID.finding(f"`README.md`: {exc}.", location=Location(rel, exc.line))
        return
    if card is None:
        yield CARD_INVALID.finding(
            "`README.md` must start with YAML front matter between `---` lines (the Space "
            "card: title, sdk: docker, app_port, ...); it has none.",
            location=Location(rel, 1),
        )
        return
    for problem in check_card(card, ctx.port):
        yield CARD_INVALID.finding(problem.message, location=Location(rel, problem.line))


def _inference(ctx: StaticContext) -> Iterator[Finding]:
    rel = "inference.py"
    if not ctx.exists(rel):
        yield INFERENCE_SCRIPT.finding(
            "Expected `inference.py` (the baseline agent reading API_BASE_URL, MODEL_NAME, "
            "HF_TOKEN and LOCAL_IMAGE_NAME); found none.",
            location=Location(rel),
        )
        return
    tree = ctx.python(rel)
    if tree is None:
        strings = set(re.findall(r"[A-Z_]+", ctx.text(rel) or ""))
    else:
        strings = {
            n.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        }
    missing = [v for v in INFERENCE_VARS if v not in strings]
    if missing:
        yield INFERENCE_SCRIPT.finding(
            f"`inference.py` must read the environment variables {', '.join(INFERENCE_VARS)}; "
            f"it never mentions {', '.join(f'`{m}`' for m in missing)}.",
            location=Location(rel, 1),
        )
    if tree is None:
        return  # a syntax error is EK2xx's business; the layout cannot be read reliably
    problems, line = _log_line_problems(_printed_lines(tree))
    if problems:
        yield INFERENCE_SCRIPT.finding(
            f"`inference.py` does not print the hackathon's log lines: {'; '.join(problems)}.",
            location=Location(rel, line or 1),
        )


def _rendered(node: ast.AST) -> str | None:
    """The text a string expression prints, each interpolated value as one token (``{}``,
    or ``{:spec}`` with its format spec), or ``None`` when ``node`` is not a string."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                spec = _rendered(value.format_spec) if value.format_spec else ""
                parts.append("{" + (f":{spec}" if spec else "") + "}")
            else:
                parts.append(_rendered(value) or "")
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _rendered(node.left), _rendered(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else "{}") + (right if right is not None else "{}")
    return None


def _printed_lines(tree: ast.Module) -> list[tuple[str, int]]:
    """(text, line) of every one-line string in the script that starts with a log tag: string
    literals and f-strings, and ``print(a, b, ...)`` calls joined with spaces as print does."""
    out = []
    for node in ast.walk(tree):
        text = None
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print":
            parts = [_rendered(a) for a in node.args if not isinstance(a, ast.Starred)]
            text = " ".join(p if p is not None else "{}" for p in parts)
        elif isinstance(node, ast.Constant | ast.JoinedStr | ast.BinOp):
            text = _rendered(node)
        if text is None:
            continue
        text = text.strip()
        if "\n" not in text and text.startswith(tuple(INFERENCE_LINES)):
            out.append((text, getattr(node, "lineno", 1)))
    return out


def _log_line_problems(lines: list[tuple[str, int]]) -> tuple[list[str], int | None]:
    """What keeps ``lines`` (from :func:`_printed_lines`) from the hackathon's layout, and
    the line of the first offending string (``None`` when no tag is printed at all)."""
    problems: list[str] = []
    first_bad: int | None = None
    for tag, (layout, pattern) in INFERENCE_LINES.items():
        mine = [(text, line) for text, line in lines if text.startswith(tag)]
        if not mine:
            problems.append(f"no `{tag}` line is printed (expected `{layout}`)")
            continue
        matched = [(m, line) for text, line in mine if (m := pattern.fullmatch(text))]
        if not matched:
            problems.append(f"its `{tag}` line reads `{mine[0][0]}`, expected `{layout}`")
            first_bad = first_bad or mine[0][1]
            continue
        if tag == "[STEP]" and not any(_two_decimals(m.group(1)) for m, _ in matched):
            problems.append(
                f"its `[STEP]` reward is `{matched[0][0].group(1)}`; the contract prints it "
                "with two decimals (`{reward:.2f}`)"
            )
            first_bad = first_bad or matched[0][1]
    return problems, first_bad


def _two_decimals(value: str) -> bool:
    """Whether a rendered reward prints two decimals: ``{:.2f}``, ``%.2f``, a two-decimal
    literal, or a value formatted elsewhere (a plain ``{}`` or ``%s``)."""
    if value in ("{}", "%s", "{:.2f}", "%.2f"):
        return True
    return re.fullmatch(r"-?\d+\.\d\d", value) is not None
