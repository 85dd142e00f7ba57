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
from typing import TYPE_CHECKING

from envkit._version import __version__

if TYPE_CHECKING:  # what type checkers and IDEs see of the lazy names below (re-exported)
    from envkit.catalog import list_templates as list_templates
    from envkit.container import BuildResult as BuildResult
    from envkit.container import RunningContainer as RunningContainer
    from envkit.container import build_image as build_image
    from envkit.container import run_container as run_container
    from envkit.container import stop_containers as stop_containers
    from envkit.envdir import EnvProject as EnvProject
    from envkit.envdir.manifest import Manifest as Manifest
    from envkit.envdir.manifest import read_manifest as read_manifest
    from envkit.evaluation import EvalResult as EvalResult
    from envkit.evaluation import evaluate as evaluate
    from envkit.hub import PushResult as PushResult
    from envkit.hub import fork as fork
    from envkit.hub import push as push
    from envkit.names import normalise_name as normalise_name
    from envkit.scaffold import InitResult as InitResult
    from envkit.scaffold import init_project as init_project
    from envkit.server import ServerProcess as ServerProcess
    from envkit.server import start_server as start_server
    from envkit.skills import install_skills as install_skills
    from envkit.validation import ValidationReport as ValidationReport
    from envkit.validation import validate as validate
    from envkit.wire import EnvSession as EnvSession

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


def __getattr__(name: str) -> object:
    """Import a lazy public name (:data:`_LAZY`) on first use.

    Raises:
        AttributeError: ``name`` is not one of envkit's public names.
    """
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'envkit' has no attribute {name!r}")
    module, attr = target.split(":")
    value = getattr(import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
