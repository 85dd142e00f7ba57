"""Which distributions are not installed (run as ``python -I FILE NAMES_JSON``).

Runs in the ENVIRONMENT's interpreter, which may not have envkit: standard library only.
``sys.argv[1]``: a JSON list of distribution names. Prints one JSON line: the names of that
list not installed there (``importlib.metadata`` finds no distribution), in the order given.
Only presence is checked, not versions. :mod:`envkit.programs.deptry_scan` imports
:func:`absent` too (linked into its shim folder), so both ask the same question the same way.
"""

import json
import sys
from importlib import metadata


def absent(names):
    """The names in ``names`` of no installed distribution."""
    missing = []
    for name in names:
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    return missing


if __name__ == "__main__":
    print(json.dumps(absent(json.loads(sys.argv[1]))))
