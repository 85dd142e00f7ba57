"""envkit.envdir.launch.root_cause: the line that explains a failed start leads the EK401 message."""

from __future__ import annotations

from envkit.envdir.launch import root_cause

RELATIVE = """\
INFO:     Started server process [4242]
Traceback (most recent call last):
  File "/venv/bin/uvicorn", line 8, in <module>
    sys.exit(main())
             ^^^^^^
  File "/venv/lib/python3.11/site-packages/uvicorn/importer.py", line 19, in import_from_string
    module = importlib.import_module(module_str)
  File "/env/server/app.py", line 3, in <module>
    from ..models import PingAction
ImportError: attempted relative import with no known parent package
"""

CHAINED = """\
Traceback (most recent call last):
  File "/env/server/app.py", line 7, in <module>
    from ..models import Connect4Action
ImportError: attempted relative import beyond top-level package

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/env/server/app.py", line 14, in <module>
    from server.connect4_environment import Connect4Environment
  File "/env/server/connect4_environment.py", line 5, in <module>
    import numpy as np
ModuleNotFoundError: No module named 'numpy'
"""


def test_relative_import_error_is_the_root_cause() -> None:
    cause = root_cause(RELATIVE)
    assert cause is not None
    assert cause.line == "ImportError: attempted relative import with no known parent package"
    assert (cause.exc_type, cause.message) == (
        "ImportError",
        "attempted relative import with no known parent package",
    )


def test_last_exception_of_a_chain_wins_and_the_chain_is_kept() -> None:
    cause = root_cause(CHAINED)
    assert cause is not None
    assert cause.line == "ModuleNotFoundError: No module named 'numpy'"
    assert cause.chain[0].startswith("ImportError: attempted relative import beyond")


def test_shutdown_noise_after_the_real_error_is_ignored() -> None:
    log = (
        RELATIVE + 'Traceback (most recent call last):\n  File "x", line 1\nKeyboardInterrupt\n'
        'Traceback (most recent call last):\n  File "y", line 2\n'
        "asyncio.exceptions.CancelledError\n"
    )
    cause = root_cause(log)
    assert cause is not None and cause.exc_type == "ImportError"


def test_syntax_error_with_caret_lines() -> None:
    log = (
        'Traceback (most recent call last):\n  File "/env/server/app.py", line 3\n'
        "    def f(:\n          ^\nSyntaxError: invalid syntax\n"
    )
    cause = root_cause(log)
    assert cause is not None and cause.line == "SyntaxError: invalid syntax"


def test_uvicorn_error_line_without_a_traceback_and_ansi_colours() -> None:
    log = '\x1b[31mERROR\x1b[0m:    Error loading ASGI app. Could not import module "server.app".\n'
    cause = root_cause(log)
    assert cause is not None
    assert cause.line == 'Error loading ASGI app. Could not import module "server.app".'
    assert cause.exc_type is None


def test_clean_log_has_no_root_cause() -> None:
    assert (
        root_cause(
            "INFO:     Started server process [1]\nINFO:     Waiting for application startup.\n"
        )
        is None
    )


def test_a_tail_that_cut_off_the_traceback_header() -> None:
    tail = "\n".join(RELATIVE.splitlines()[4:])  # starts mid-traceback, as EK401's tail did
    cause = root_cause(tail)
    assert cause is not None and cause.exc_type == "ImportError"


NLTK = """\
Traceback (most recent call last):
  File "/env/server/app.py", line 9, in <module>
    nltk.data.find("tokenizers/punkt")
  File "/venv/lib/python3.11/site-packages/nltk/data.py", line 579, in find
    raise LookupError(resource_not_found)
LookupError: \n\
**********************************************************************
  Resource \x1b[93mpunkt\x1b[0m not found.
  Please use the NLTK Downloader to obtain the resource:

  \x1b[31m>>> import nltk
  >>> nltk.download('punkt')
  \x1b[0m
  Attempted to load \x1b[93mtokenizers/punkt\x1b[0m
**********************************************************************

INFO:     Stopping reloader process [4242]
"""


def test_message_below_an_empty_exception_line() -> None:
    """NLTK prints its LookupError message on the following lines (issue #13: textarena)."""
    cause = root_cause(NLTK)
    assert cause is not None
    assert cause.line == "LookupError: Resource punkt not found."
    assert (cause.exc_type, cause.message) == ("LookupError", "Resource punkt not found.")


def test_empty_message_followed_by_a_log_line_stays_empty() -> None:
    log = (
        'Traceback (most recent call last):\n  File "x", line 1\nRuntimeError:\n'
        "INFO:     Shutting down\n"
    )
    cause = root_cause(log)
    assert cause is not None and (cause.line, cause.message) == ("RuntimeError:", "")
