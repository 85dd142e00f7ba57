"""Oracle: the answer is the clue written backwards (in `<answer>` tags with
`STATE_LEAK_MODE=format`)."""

import os


def policy(observation):
    word = observation["clue"][::-1]
    if os.environ.get("STATE_LEAK_MODE") == "format":
        word = f"<answer>{word}</answer>"
    return {"answer": word}
