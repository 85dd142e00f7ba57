"""Environment names: one user-given name, every spelling the ecosystem needs.

``my-env`` and ``my_env`` are the same environment: the directory keeps the name as given,
the Python package is snake_case (``my_env``), the Hugging Face Space is kebab-case
(``my-env``), classes are PascalCase (``MyEnv``).
"""

from __future__ import annotations

import keyword
import re
import sys
from dataclasses import dataclass

from envkit.errors import UsageError

# Names that would shadow the environment's own top-level modules or its runtime: a package
# called `server` or `models` breaks the `server.app:app` / `from models import ...` imports
# every OpenEnv environment relies on.
RESERVED_PACKAGE_NAMES = frozenset(
    {"server", "models", "client", "tests", "test", "openenv", "envkit", "app", "inference"}
)

# Top-level modules an environment or envkit imports at run time (besides the standard library,
# :data:`sys.stdlib_module_names`): an environment package of the same name would be imported
# in their place. Source: envkit's and openenv-core's dependencies.
DEPENDENCY_MODULES = frozenset(
    {
        "fastapi",
        "starlette",
        "uvicorn",
        "pydantic",
        "pydantic_core",
        "openenv",
        "openenv_core",
        "envkit",
        "typer",
        "click",
        "rich",
        "httpx",
        "httpcore",
        "requests",
        "urllib3",
        "websockets",
        "anyio",
        "sniffio",
        "h11",
        "jinja2",
        "markupsafe",
        "yaml",
        "ruamel",
        "pathspec",
        "dockerfile_parse",
        "hypothesis",
        "hypothesis_jsonschema",
        "jsonschema",
        "junit_xml",
        "detect_secrets",
        "docker",
        "huggingface_hub",
        "hf_xet",
        "openai",
        "numpy",
        "pandas",
        "torch",
        "transformers",
        "datasets",
        "trl",
        "gymnasium",
        "gym",
        "pytest",
        "uv",
        "matplotlib",
        "tomli",
        "packaging",
        "setuptools",
        "pip",
        "wheel",
        "certifi",
        "idna",
        "filelock",
        "fsspec",
        "tqdm",
        "gradio",
        "mcp",
        "smolagents",
    }
)
# Windows reserves these file names in every directory, with any extension (CON, NUL, COM1...).
WINDOWS_DEVICE_NAMES = frozenset(
    {"con", "prn", "aux", "nul", "conin$", "conout$"}
    | {f"com{i}" for i in range(10)}
    | {f"lpt{i}" for i in range(10)}
    | {f"com{c}" for c in "\u00b9\u00b2\u00b3"}
    | {f"lpt{c}" for c in "\u00b9\u00b2\u00b3"}
)

_MAX_LEN = 64  # well under the Hub's 96-character repo-name limit, leaves room for a namespace
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@dataclass(frozen=True)
class EnvNames:
    """Every spelling of one environment name.

    Attributes:
        raw: the name exactly as the user typed it (used for the directory).
        package: snake_case Python package name, e.g. ``my_env``.
        space: kebab-case Hugging Face Space name, e.g. ``my-env``.
        class_prefix: PascalCase prefix for classes, e.g. ``MyEnv`` -> ``MyEnvAction``.
        title: human title, e.g. ``My Env``.
    """

    raw: str
    package: str
    space: str
    class_prefix: str
    title: str


def normalise_name(raw: str) -> EnvNames:
    """Derive every spelling of an environment name, or refuse it with a clear reason.

    Args:
        raw: a name such as ``my-env``, ``my_env`` or ``MyEnv``. Not a path.

    Returns:
        The :class:`EnvNames` for it.

    Raises:
        UsageError: the name is empty, has leading or trailing white space, is longer than 64
            characters, a path (contains ``/`` or ``\\``, starts with ``.`` or ``~``), not
            ASCII letters/digits/``-``/``_``, does not start with a letter, is a Python
            keyword, a Windows device name (``CON``, ``NUL``, ``COM1``, ...), or shadows a
            module every OpenEnv environment uses (``server``, ``models``, ...), a standard
            library module (``os``, ``json``, ``typing``, ...) or a dependency (``fastapi``,
            ``pydantic``, ...). Source: issues #2 and #12.
    """
    name = raw.strip()
    if not name:
        raise UsageError("The environment name is empty.", hint="Give a name such as `my-env`.")
    if name != raw:
        raise UsageError(
            f"{raw!r} has white space at its start or end; the name would not match its "
            "directory on every system.",
            hint=f"Use `{name}` (without the spaces).",
        )
    if "/" in name or "\\" in name or name.startswith((".", "~")):
        raise UsageError(
            f"`{raw}` is a path, not an environment name.",
            hint="Give a plain name such as `my-env` and choose the parent directory with "
            "`--output-dir`.",
        )
    if len(name) > _MAX_LEN:
        raise UsageError(
            f"`{raw}` is {len(name)} characters long; names are limited to {_MAX_LEN}.",
            hint="Choose a shorter name.",
        )
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
        raise UsageError(
            f"`{raw}` contains characters other than ASCII letters, digits, `-` and `_`.",
            hint="Use a name such as `my-env` or `my_env`.",
        )
    if not name[0].isalpha():
        raise UsageError(
            f"`{raw}` must start with a letter (it becomes a Python package name).",
            hint="Use a name such as `my-env`.",
        )
    words = [w for w in re.split(r"[-_]+", _CAMEL_BOUNDARY.sub("_", name)) if w]
    package = "_".join(w.lower() for w in words)
    if keyword.iskeyword(package) or keyword.issoftkeyword(package):
        raise UsageError(
            f"`{raw}` becomes the Python package `{package}`, which is a Python keyword.",
            hint=f"Choose another name, e.g. `{package}-env`.",
        )
    if name.lower() in WINDOWS_DEVICE_NAMES or package in WINDOWS_DEVICE_NAMES:
        raise UsageError(
            f"`{raw}` is a reserved device name on Windows (like CON, NUL, COM1): a directory "
            "or file of that name cannot be created or cloned there.",
            hint=f"Choose another name, e.g. `{package}-env`.",
        )
    if package in sys.stdlib_module_names:
        raise UsageError(
            f"`{raw}` becomes the Python package `{package}`, which would shadow the standard "
            f"library module `{package}` (imports of it would load the environment instead).",
            hint=f"Choose another name, e.g. `{package}-env`.",
        )
    if package in DEPENDENCY_MODULES:
        raise UsageError(
            f"`{raw}` becomes the Python package `{package}`, which would shadow the `{package}` "
            "module that envkit or openenv-core depends on.",
            hint=f"Choose another name, e.g. `{package}-env`.",
        )
    if package in RESERVED_PACKAGE_NAMES:
        raise UsageError(
            f"`{raw}` becomes the Python package `{package}`, which would shadow a module every "
            "OpenEnv environment imports.",
            hint=f"Choose another name, e.g. `{package}-env`.",
        )
    if not package.isidentifier():  # pragma: no cover - guarded by the regex above
        raise UsageError(f"`{raw}` does not give a valid Python identifier (`{package}`).")
    return EnvNames(
        raw=name,
        package=package,
        space=package.replace("_", "-"),
        class_prefix="".join(w[:1].upper() + w[1:] for w in words),
        title=" ".join(w[:1].upper() + w[1:] for w in words),
    )
