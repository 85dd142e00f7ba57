"""Oracle: answer the target word (a wrong answer in KNOBS_MODE=oracle_wrong)."""

import os


def policy(observation):
    if os.environ.get("KNOBS_MODE") == "oracle_wrong":
        return {"message": "nope"}
    return {"message": observation["target"]}
