"""Server side of the {{ cookiecutter.project_name }} environment.

Kept free of imports on purpose: `server.oracle` and the tests import submodules directly,
and nothing here should pull in the web stack.
"""
