"""Every rule of ``envkit validate``, one module per family.

Importing this package registers all rules in :data:`envkit.findings.RULES`.
"""

from envkit.validation.rules import (  # noqa: F401 - imported for registration
    container,
    deploy,
    dockerfile,
    manifest,
    project,
    reward,
    runtime,
)
