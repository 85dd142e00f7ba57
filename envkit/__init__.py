"""envkit: scaffold, validate, build, deploy and evaluate OpenEnv environments.

The library is the product; the ``envkit`` command is a thin layer over it. Public functions
return result objects and never print or exit:

    >>> import envkit
    >>> result = envkit.init_project("my-env", template="echo", lock=False)
    >>> report = envkit.validate(result.path)

Attributes are imported lazily so that ``import envkit`` (and ``envkit --help``) stay fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from envkit._version import __version__

# public name -> "module:attribute"
_LAZY = {
    "init_project": "envkit.scaffold:init_project",
    "list_templates": "envkit.catalog:list_templates",
    "InitResult": "envkit.scaffold:InitResult",
    "start_server": "envkit.server:start_server",
    "ServerProcess": "envkit.server:ServerProcess",
    "EnvProject": "envkit.envdir:EnvProject",
    "EnvSession": "envkit.wire:EnvSession",
    "read_manifest": "envkit.envdir.manifest:read_manifest",
    "Manifest": "envkit.envdir.manifest:Manifest",
    "normalise_name": "envkit.names:normalise_name",
    "validate": "envkit.validation:validate",
    "ValidationReport": "envkit.validation:ValidationReport",
    "build_image": "envkit.container:build_image",
    "BuildResult": "envkit.container:BuildResult",
    "run_container": "envkit.container:run_container",
    "RunningContainer": "envkit.container:RunningContainer",
    "stop_containers": "envkit.container:stop_containers",
    "push": "envkit.hub:push",
    "PushResult": "envkit.hub:PushResult",
    "fork": "envkit.hub:fork",
    "evaluate": "envkit.evaluation:evaluate",
    "EvalResult": "envkit.evaluation:EvalResult",
    "install_skills": "envkit.skills:install_skills",
}

__all__ = ["__version__", *_LAZY]  # noqa: PLE0604 - the lazy names are strings


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'envkit' has no attribute {name!r}")
    module, attr = target.split(":")
    value = getattr(import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
