"""Print the OpenEnv runtime modules an interpreter cannot import (run as ``python -c <this
text>`` in the environment directory), for :func:`envkit.envdir.project.check_runtime`.

Runs in the ENVIRONMENT's interpreter, which may not have envkit: standard library only.
Prints one line: the missing names of ``openenv``, ``uvicorn``, ``fastapi``, comma-separated
(empty when all are there). ``find_spec`` only: nothing is imported.
"""

import importlib.util

missing = [m for m in ("openenv", "uvicorn", "fastapi") if importlib.util.find_spec(m) is None]
print(",".join(missing))
