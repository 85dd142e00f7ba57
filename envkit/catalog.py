"""The bundled templates: ``templates/<name>/template.toml`` read into :class:`TemplateInfo`.

``envkit init`` renders them (:mod:`envkit.scaffold`), ``envkit templates`` lists them, and
the EK224 check asks which sentences of a template's README describe its own task.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit.envdir.toml import TomlError, parse_toml
from envkit.errors import TemplateError
from envkit.resources import templates_dir

DEFAULT_TEMPLATE = "echo"


# `_import`: the hidden templates `envkit import` renders (envkit.importers).
_SPECIAL_DIRS = {"_common", "_partials", "_import"}


@dataclass(frozen=True)
class TemplateOption:
    """A template option, set with ``envkit init --set KEY=VALUE`` (or a dedicated flag).

    Attributes:
        key: option name (``gym_id``).
        default: value used when not given.
        help: one line for ``envkit templates``.
        choices: allowed values, empty for free text.
    """

    key: str
    default: str
    help: str
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class TemplateInfo:
    """A bundled template.

    Attributes:
        name: ``echo``, ``guess`` ...
        description: one line.
        path: its directory.
        options: its options by key.
        validation: values for the manifest (``reward_range``, ``max_steps``, RFC 008
            ``tags``, ``declared_tools``, ``network``, ``cpu``, ``memory_mb``, ``disk_mb``,
            ``episode_timeout_s``; see ``templates/_common/openenv.yaml.jinja``).
        probe_actions: the oracle's actions for one episode at reset seed 0 with the default
            options (template.toml ``[probe] actions``): the ``validation/runtime.json`` plan
            ``envkit init`` writes. Recorded with :func:`envkit.probe_plan.make_probe_plan`;
            the template tests check they still equal a fresh recording.
        dependencies: extra runtime requirements (PEP 508 strings) beyond ``openenv``.
        vars: any further template-specific values.
    """

    name: str
    description: str
    path: Path
    options: dict[str, TemplateOption] = field(default_factory=dict)
    validation: dict[str, Any] = field(default_factory=dict)
    dependencies: tuple[str, ...] = ()
    vars: dict[str, Any] = field(default_factory=dict)
    probe_actions: tuple[dict[str, Any], ...] = ()


def _load_template(path: Path) -> TemplateInfo:
    meta_path = path / "template.toml"
    try:
        meta = parse_toml(meta_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, TomlError) as exc:
        raise TemplateError(
            f"Template `{path.name}` has an unreadable template.toml: {exc}."
        ) from None
    options = {}
    for key, spec in (meta.get("options") or {}).items():
        options[key] = TemplateOption(
            key=key,
            default=str(spec.get("default", "")),
            help=str(spec.get("help", "")),
            choices=tuple(str(c) for c in spec.get("choices", ())),
        )
    known = {"description", "options", "validation", "dependencies", "probe"}
    return TemplateInfo(
        name=path.name,
        description=str(meta.get("description", "")).strip(),
        path=path,
        options=options,
        validation=dict(meta.get("validation") or {}),
        dependencies=tuple(meta.get("dependencies") or ()),
        vars={k: v for k, v in meta.items() if k not in known},
        probe_actions=tuple(dict(a) for a in (meta.get("probe") or {}).get("actions", ())),
    )


def load_template(path: Path) -> TemplateInfo:
    """The template in directory ``path`` (a ``template.toml`` and its files), rendered with
    ``_common`` and ``_partials`` like a built-in one; ``envkit import`` keeps its hidden
    templates under ``templates/_import/``.

    Raises:
        TemplateError: ``template.toml`` cannot be read.
    """
    return _load_template(path)


def list_templates() -> list[TemplateInfo]:
    """Every bundled template, the default first, then alphabetical."""
    root = templates_dir()
    found = [
        _load_template(p)
        for p in sorted(root.iterdir())
        if p.is_dir() and p.name not in _SPECIAL_DIRS and (p / "template.toml").is_file()
    ]
    return sorted(found, key=lambda t: (t.name != DEFAULT_TEMPLATE, t.name))


def get_template(name: str) -> TemplateInfo:
    """The template called ``name``.

    Raises:
        TemplateError: no such template; the message lists the available ones.
    """
    templates = {t.name: t for t in list_templates()}
    if name not in templates:
        raise TemplateError(
            f"No template named `{name}`.",
            hint=f"Available: {', '.join(templates)} (see `envkit templates`).",
        )
    return templates[name]


def template_phrases(template: str) -> tuple[str, ...]:
    """The sentences of a bundled template's README that describe its own task
    (template.toml ``readme_phrases``); ``()`` for a template envkit does not ship."""
    try:
        tpl = get_template(template)
    except TemplateError:
        return ()
    return tuple(str(p) for p in tpl.vars.get("readme_phrases") or ())
