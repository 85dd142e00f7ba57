"""Server side of the Prices environment.

Kept free of imports on purpose: `server.oracle` and the tests import submodules directly,
and nothing here should pull in the web stack.
"""
