"""Oracle: answer the target word."""


def policy(observation):
    return {"message": observation["target"]}
