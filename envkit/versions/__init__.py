"""Versions of an environment: two digests that say whether two copies are the same, and a
diff that says what changed and whether a trained policy survives it.

- :mod:`envkit.envdir.digest`: the **environment digest** (the files a Space receives,
  the lock, the manifest) and the **schema digest** (what a policy sees: action, observation
  and state schemas, the reward range, the reset options).
- :mod:`envkit.versions.snapshot`: what one environment looks like (from a directory, a git
  revision or a running server).
- :mod:`envkit.versions.diff`: the changes between two snapshots, each breaking or compatible
  for a trained policy (``envkit diff``).

docs/versions.md is the user's reference (inputs of each digest, the classification table).
"""
