# Put first on PYTHONPATH by tests/corpus/corpus.py: the corpus servers start as if gradio
# were not installed, the case OpenEnv's own import handles (it then serves no web UI, which
# the corpus never enables). Importing gradio is ~2.4 s of CPU in every server and oracle.
raise ModuleNotFoundError("gradio is left out of the corpus servers", name="gradio")
