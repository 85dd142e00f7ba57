"""The README's YAML front matter as a Hugging Face Docker Space card.

Facts (docs/protocol.md): a Docker Space needs ``sdk: docker``;
``app_port`` defaults to 7860 on the Hub, so it must name the port the server binds; the Hub
accepts only the named colours red, yellow, green, blue, indigo, purple, pink, gray for
``colorFrom``/``colorTo`` (OpenEnv's push once wrote hex colours the Hub rejected);
``short_description`` is capped at 60 characters.

Shared by the EK2xx README rules of ``envkit validate`` and by ``envkit push``, which repairs
the card in its staged copy (never in the user's files).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap

from envkit.safe_yaml import YamlLimitError, load_bounded

NAMED_COLOURS = ("red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray")
SHORT_DESCRIPTION_MAX = 60
DEFAULT_APP_PORT = 7860  # the Hub's default when app_port is missing


@dataclass
class CardProblem:
    """One problem with the card.

    Attributes:
        key: the front-matter key concerned (``colorFrom``), or ``""`` for the whole card.
        message: expectation first, then the actual value.
        line: 1-based line in README.md, when known.
    """

    key: str
    message: str
    line: int | None = None


@dataclass
class Card:
    """A parsed README.

    Attributes:
        data: the front matter mapping (ruamel ``CommentedMap``, positions kept).
        body: the Markdown after the closing ``---``.
        offset: 0-based line number of the first front-matter line inside README.md.
    """

    data: Any
    body: str
    offset: int = 1
    problems: list[CardProblem] = field(default_factory=list)

    def line_of(self, key: str) -> int | None:
        lc = getattr(self.data, "lc", None)
        if lc is not None and isinstance(self.data, dict) and key in self.data:
            return int(lc.key(key)[0]) + self.offset + 1
        return None


class CardSyntaxError(ValueError):
    """The front matter is not YAML (``line`` is 1-based in README.md)."""

    def __init__(self, message: str, line: int | None):
        super().__init__(message)
        self.line = line


def split_front_matter(text: str) -> tuple[str, str] | None:
    """``(front_matter_yaml, body)`` or ``None`` when README.md has no front matter."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            return "".join(lines[1:i]), "".join(lines[i + 1 :])
    return None


def read_card(text: str) -> Card | None:
    """Parse README text.

    Returns:
        The :class:`Card`, or ``None`` when there is no front matter.

    Raises:
        CardSyntaxError: the front matter is not YAML or not a mapping.
    """

    parts = split_front_matter(text)
    if parts is None:
        return None
    fm, body = parts
    try:
        data = load_bounded(fm)
    except YamlLimitError as exc:
        raise CardSyntaxError(
            f"the front matter is not valid YAML: {exc.message}",
            (exc.line + 1) if exc.line else None,
        ) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise CardSyntaxError("the front matter must be a YAML mapping", 2)
    return Card(data=data, body=body)


def check_card(card: Card, port: int) -> list[CardProblem]:
    """Every way the card would fail as a Docker Space card serving on ``port``."""
    d = card.data
    problems: list[CardProblem] = []

    def add(key: str, message: str) -> None:
        problems.append(CardProblem(key, message, card.line_of(key) or 1))

    if d.get("sdk") != "docker":
        add("sdk", f"`sdk` must be `docker` for a Docker Space; got {d.get('sdk')!r}.")
    app_port = d.get("app_port")
    if app_port is None:
        add(
            "app_port",
            f"`app_port` is missing: the Hub then routes to {DEFAULT_APP_PORT}, "
            f"but the server binds {port}.",
        )
    elif app_port != port:
        add("app_port", f"`app_port` must equal the manifest port {port}; got {app_port!r}.")
    for key in ("colorFrom", "colorTo"):
        value = d.get(key)
        if value is not None and value not in NAMED_COLOURS:
            add(
                key,
                f"`{key}` must be one of {', '.join(NAMED_COLOURS)}; got {value!r} "
                "(the Hub rejects anything else).",
            )
    sd = d.get("short_description")
    if sd is not None and len(str(sd)) > SHORT_DESCRIPTION_MAX:
        add(
            "short_description",
            f"`short_description` must be at most "
            f"{SHORT_DESCRIPTION_MAX} characters; got {len(str(sd))}.",
        )
    if not d.get("title"):
        add("title", "`title` is missing.")
    tags = d.get("tags") or []
    if not isinstance(tags, list) or "openenv" not in tags:
        add("tags", "`tags` must include `openenv` (how the Hub lists OpenEnv environments).")
    return problems


def repair_card(
    text: str, port: int, *, title: str, required_tags: tuple[str, ...] = ("openenv", "envkit")
) -> tuple[str, list[str]]:
    """Return README text whose front matter is a valid Docker Space card, and what changed.

    Missing front matter is created; ``sdk``, ``app_port``, colours, ``short_description``,
    ``title`` and ``tags`` are fixed; every other key and the body are kept.

    Raises:
        CardSyntaxError: the existing front matter is not YAML (it cannot be repaired safely).
    """
    card = read_card(text)
    changes: list[str] = []
    if card is None:
        data: Any = CommentedMap()
        body = text
        changes.append("added Space front matter")
    else:
        data, body = card.data, card.body
    if data.get("title") in (None, ""):
        data["title"] = title
        changes.append(f"title: set to {title!r}")
    if data.get("sdk") != "docker":
        changes.append(f"sdk: {data.get('sdk')!r} -> 'docker'")
        data["sdk"] = "docker"
    if data.get("app_port") != port:
        changes.append(f"app_port: {data.get('app_port')!r} -> {port}")
        data["app_port"] = port
    for key, default in (("colorFrom", "blue"), ("colorTo", "indigo")):
        if data.get(key) is not None and data.get(key) not in NAMED_COLOURS:
            changes.append(f"{key}: {data.get(key)!r} -> {default!r}")
            data[key] = default
    sd = data.get("short_description")
    if sd is not None and len(str(sd)) > SHORT_DESCRIPTION_MAX:
        cut = str(sd)[: SHORT_DESCRIPTION_MAX - 1].rstrip() + "…"
        changes.append(f"short_description: shortened to {SHORT_DESCRIPTION_MAX} characters")
        data["short_description"] = cut
    tags = data.get("tags")
    if not isinstance(tags, list):
        tags = [] if tags is None else [str(tags)]
    missing = [t for t in required_tags if t not in tags]
    if missing:
        data["tags"] = list(tags) + missing
        changes.append(f"tags: added {', '.join(missing)}")
    if not changes:
        return text, []
    yaml = YAML(typ="rt")
    yaml.width = 4096
    buf = io.StringIO()
    yaml.dump(data, buf)
    sep = "" if body.startswith("\n") else "\n"
    return f"---\n{buf.getvalue()}---\n{sep}{body}", changes
