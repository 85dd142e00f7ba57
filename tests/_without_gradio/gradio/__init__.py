# First on PYTHONPATH of every process the test suite starts (tests/conftest.py): they start
# as if gradio were not installed, the case OpenEnv's own import handles (it then serves no
# web UI, which no test enables). Importing gradio is ~1.9 s of ~2.8 s importing
# openenv.core.env_server, paid by every server, oracle and policy process.
raise ModuleNotFoundError("gradio is left out of the test suite's processes", name="gradio")
