"""Oracle: the answer is the clue written backwards."""


def policy(observation):
    return {"answer": observation["clue"][::-1]}
