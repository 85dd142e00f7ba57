"""``envkit validate`` as a library: static lint plus live protocol checks.

.. code-block:: python

    from envkit.validation import validate

    report = validate("envs/my-env", static=True)
    if not report.passed:
        for f in report.errors:
            print(f.code, f.location, f.message)

Two stages: *static* (EK1xx manifest, EK2xx project, EK3xx Dockerfile, EK6xx deployment; reads
files only) and *runtime* (EK4xx protocol, EK5xx reward; starts or contacts a server, see
:mod:`envkit.validation.runtime`). ``envkit build`` and ``envkit push`` run the static stage
as a preflight. The lanes live in :mod:`envkit.validation.lanes` (the docker lane, which
builds and runs an image, in :mod:`envkit.container.lane`); this package only re-exports the
public API.
"""

from __future__ import annotations

from envkit.validation.lanes.source import run_source, run_static_only, validate
from envkit.validation.lanes.stages import raw_app
from envkit.validation.options import RunOptions
from envkit.validation.report import CheckResult, RuntimeNote, ValidationReport

__all__ = [
    "CheckResult",
    "RunOptions",
    "RuntimeNote",
    "ValidationReport",
    "raw_app",
    "run_source",
    "run_static_only",
    "validate",
]
