"""An environment directory and the facts envkit reads from it.

- :mod:`envkit.envdir.constants`: names and defaults declared once (the manifest name, the
  default app, the ``module:attr`` pattern, the probe-plan path, the OpenEnv requirement).
- :mod:`envkit.envdir.toml`: the one TOML reader.
- :class:`EnvDir`: one directory, each file read once, facts asked of it.
"""

from envkit.envdir.reader import EnvDir, EnvProject

__all__ = ["EnvDir", "EnvProject"]
