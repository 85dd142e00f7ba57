"""Bridges between envkit and its neighbours' tools.

- :mod:`envkit.bridges.rfc008`: which RFC 008 check ids envkit decides, from which finding
  codes, and how one ``envkit validate`` report answers each (no third-party import).
- :mod:`envkit.bridges.openenv_graders`: those answers as OpenEnv 0.10 graders, registered
  under the entry-point group ``openenv.validation.graders``; only OpenEnv loads it.
- :mod:`envkit.bridges.openenv_validate`: ``python -m envkit.bridges.openenv_validate``,
  OpenEnv's own ``validate`` command with the entry-point graders loaded (0.10's runner does
  not load them itself).
"""
