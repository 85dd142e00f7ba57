"""EK2xx project and packaging rules (pyproject, files, README card, inference script)."""
