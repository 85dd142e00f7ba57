"""``envkit migrate``: move an existing environment forward to OpenEnv 0.10.

.. code-block:: python

    from envkit.migrate import migrate

    result = migrate("envs/my-env", dry_run=True)
    print(result.diff())          # unified diff of every file it would change
    result = migrate("envs/my-env")
    for change in result.changes:
        print(change.path, change.summary)

What it does, file by file (each step only when it applies, so a second run changes nothing):

* ``pyproject.toml``, ``requirements*.txt`` (root and ``server/``) and Dockerfile ``RUN`` lines:
  the superseded ``openenv-core`` distribution (and ``openenv[core]``, an extra 0.10 no longer
  has) becomes :data:`~envkit.envdir.constants.OPENENV_REQUIREMENT`; a project that declared both keeps one ``openenv``.
* ``openenv.yaml``: envkit's pre-0.10 keys directly under ``validation:`` move to RFC 008's
  fields (``reward_range`` -> ``validation.reward.range``, ``floor_margin`` ->
  ``validation.reward.floor_margin``) or to envkit's own top-level ``envkit:`` mapping
  (``oracle``, ``max_steps``, ``seeds``, ``step_timeout_s``, ``startup_timeout_s``); the
  blocks RFC 008 requires (``reward``, ``resources``, ``capabilities``, ``types``) are added
  with OpenEnv's defaults when missing; ``version`` is added from ``pyproject.toml``; when a
  root Dockerfile and a probe plan exist, ``validation.execution`` (manifest schema 2) points
  at them.
* ``server/Dockerfile`` moves to the root ``Dockerfile`` when there is no root one (a Docker
  Space and RFC 008's ``execution.dockerfile`` default both want it there).
* ``validation/runtime.json``: OpenEnv's runtime probe plan, made by playing the oracle
  (:func:`envkit.probe_plan.make_probe_plan`) when ``envkit.oracle`` is declared and no plan
  exists. A plan that ``validation.execution`` already declares is re-recorded the same way
  when it is missing, breaks OpenEnv's plan schema, or is stale: the served environment
  refuses one of its actions (the plan was recorded before the action changed), which is
  what EK431 reports.

Round trips keep user content: YAML through ruamel's round-trip mode and TOML through tomlkit
keep comments, key order and unknown keys. Nothing is written until every file has been read
and parsed: a file that cannot be parsed stops the migration with its location and nothing
changes. Writes are atomic per file.
"""

from envkit.errors import MigrationRefused  # its old home is here
from envkit.migrate.changes import FileChange, MigrationResult
from envkit.migrate.plan import PlanChecker, PlanMaker
from envkit.migrate.run import migrate

__all__ = [
    "FileChange",
    "MigrationRefused",
    "MigrationResult",
    "PlanChecker",
    "PlanMaker",
    "migrate",
]
