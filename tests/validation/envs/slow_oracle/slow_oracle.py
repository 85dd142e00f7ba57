"""The echo template's oracle behind a slow import: importing this module first sleeps
``SLOW_ORACLE_IMPORT_S`` seconds (as a heavy import such as openenv does on a busy machine).

tests/validation/test_oracle_load.py copies it into an echo environment and points
``envkit.oracle`` at ``slow_oracle:policy``.
"""

import os
import time

time.sleep(float(os.environ.get("SLOW_ORACLE_IMPORT_S", "0")))

from server.oracle import policy  # noqa: E402  (after the sleep on purpose)

__all__ = ["policy"]
