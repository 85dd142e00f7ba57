"""Which rules run and how severe they are: ``--select``/``--ignore`` and
``[tool.envkit.validate]`` in the environment's pyproject.toml.

Semantics follow ruff: codes are matched by prefix (``EK5`` = the reward family, ``EK503`` =
one rule, ``ALL`` = every rule); when both a selected and an ignored prefix match, the longer
(more specific) one wins, and ``ignore`` wins a tie. The command line's ``--select`` replaces
the file's ``select``; ``--ignore`` adds to the file's ``ignore``. ``severity`` re-grades rules:
``severity = { EK210 = "info" }``.

.. code-block:: toml

    [tool.envkit.validate]
    select = ["ALL"]
    ignore = ["EK209"]
    severity = { EK210 = "info", EK3 = "warning" }
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from envkit.envdir import EnvDir
from envkit.errors import SpecError, UsageError
from envkit.findings import FAMILIES, RULES, Severity

# The family digits come from the one family table, so a new family is selectable at once.
_PREFIX = re.compile(rf"EK(?:[{''.join(sorted(FAMILIES))}]\d{{0,2}})?")
KNOWN_KEYS = ("select", "ignore", "severity")


@dataclass
class RuleSelection:
    """The effective rule selection.

    Attributes:
        select: prefixes that enable rules (default ``["ALL"]``).
        ignore: prefixes that disable rules.
        severity: prefix -> severity override.
    """

    select: list[str] = field(default_factory=lambda: ["ALL"])
    ignore: list[str] = field(default_factory=list)
    severity: dict[str, Severity] = field(default_factory=dict)

    @staticmethod
    def _match(code: str, prefixes: Iterable[str]) -> int:
        """Length of the longest prefix matching ``code`` (ALL = 0), -1 if none."""
        best = -1
        for p in prefixes:
            if p == "ALL":
                best = max(best, 0)
            elif code.startswith(p):
                best = max(best, len(p))
        return best

    def enabled(self, code: str) -> bool:
        sel = self._match(code, self.select)
        return sel >= 0 and self._match(code, self.ignore) < sel

    def severity_of(self, code: str, default: Severity) -> Severity:
        best, out = -1, default
        for prefix, sev in self.severity.items():
            n = self._match(code, [prefix])
            if n > best:
                best, out = n, sev
        return out

    def wants_stage(self, families: str) -> bool:
        """Whether any enabled registered rule (or an unregistered code of ``families``)
        could be selected: used to skip the runtime stage for ``--select EK1``."""
        codes = [c for c in RULES if c[2] in families] or [f"EK{f}99" for f in families]
        return any(self.enabled(c) for c in codes)


def check_code(value: str, source: str) -> str:
    """Normalise and check one code or prefix.

    Raises:
        SpecError / UsageError: not ``ALL``/``EK`` + up to 3 digits (a family of :data:`envkit.findings.FAMILIES`), or a full
            code that is not registered. ``source`` names where it came from.
    """
    code = str(value).strip().upper()
    err = UsageError if source.startswith("--") else SpecError
    if code == "ALL":
        return code
    if not _PREFIX.fullmatch(code) or code == "EK":
        raise err(
            f"{source}: {value!r} is not a rule code or prefix (expected ALL, EK5, EK50 or EK503).",
            hint="List the rules with `envkit rules`.",
        )
    if len(code) == 5 and code not in RULES:
        close = difflib.get_close_matches(code, list(RULES), n=1)
        raise err(
            f"{source}: unknown rule code {code}{f' (did you mean {close[0]}?)' if close else ''}.",
            hint="List the rules with `envkit rules`.",
        )
    return code


def _codes(values: object, source: str) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str):
        values = [v for v in re.split(r"[,\s]+", values) if v]
    if not isinstance(values, (list, tuple)):
        raise SpecError(
            f"{source} must be a list of rule codes; got {type(values).__name__}.",
            hint='Write e.g. `ignore = ["EK209"]`.',
        )
    return [check_code(v, source) for v in values]


def read_config(envdir: EnvDir | None) -> dict[str, Any]:
    """``[tool.envkit.validate]`` of the environment's ``pyproject.toml`` (``{}`` without a
    directory, and when the file is absent or not TOML: that is reported as finding EK202,
    not as a config error).

    Raises:
        SpecError: the table has unknown keys or wrong types.
    """
    if envdir is None:
        return {}
    # Unreadable or broken: the static rules report it (EK202, EK22x); no config then.
    data = envdir.pyproject
    if data is None:
        return {}
    table = (
        data.get("tool", {}).get("envkit", {}).get("validate", {})
        if isinstance(data.get("tool"), dict) and isinstance(data["tool"].get("envkit"), dict)
        else {}
    )
    if not isinstance(table, dict):
        raise SpecError(
            "pyproject.toml: [tool.envkit.validate] must be a table.",
            hint="See `envkit validate --help`.",
        )
    unknown = [k for k in table if k not in KNOWN_KEYS]
    if unknown:
        raise SpecError(
            f"pyproject.toml: [tool.envkit.validate] has unknown key(s) "
            f"{', '.join(map(repr, unknown))}; known keys: {', '.join(KNOWN_KEYS)}.",
            hint="Fix the key in pyproject.toml.",
        )
    return table


def build_selection(
    envdir: EnvDir | None,
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
) -> RuleSelection:
    """Merge ``[tool.envkit.validate]`` with the command-line options.

    Args:
        envdir: the environment directory whose pyproject.toml is read, or ``None``.
        select: ``--select`` codes; replaces the file's ``select`` when given.
        ignore: ``--ignore`` codes; added to the file's ``ignore``.

    Raises:
        UsageError: a bad code on the command line (exit 2).
        SpecError: a bad code, key or severity in pyproject.toml (exit 2).
    """
    table = read_config(envdir)
    src = "pyproject.toml [tool.envkit.validate]"
    sel = RuleSelection()
    file_select = _codes(table.get("select"), f"{src} select")
    if file_select:
        sel.select = file_select
    sel.ignore = _codes(table.get("ignore"), f"{src} ignore")
    severities = table.get("severity", {}) or {}
    if not isinstance(severities, dict):
        raise SpecError(
            f'{src} severity must be a table such as {{ EK210 = "info" }}.',
            hint="Fix it in pyproject.toml.",
        )
    for key, value in severities.items():
        code = check_code(key, f"{src} severity")
        try:
            sel.severity[code] = Severity(str(value).lower())
        except ValueError:
            raise SpecError(
                f"{src} severity: {key} = {value!r} is not a severity (expected "
                "error, warning or info).",
                hint="Fix it in pyproject.toml.",
            ) from None
    cli_select = [check_code(c, "--select") for v in (select or []) for c in _split(v)]
    cli_ignore = [check_code(c, "--ignore") for v in (ignore or []) for c in _split(v)]
    if cli_select:
        sel.select = cli_select
    sel.ignore = sel.ignore + cli_ignore
    return sel


def _split(value: str) -> list[str]:
    return [v for v in re.split(r"[,\s]+", str(value)) if v]
