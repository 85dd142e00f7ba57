"""Inspector for ``envkit import`` of a verifiers.v1 taskset (run by envkit.importers._inspect
in an environment with verifiers 0.4 and the package's dependencies; never imported by envkit).

Usage: ``python verifiers_v1_taskset.py BRIDGE_DIR VENDOR_DIR PACKAGE OPTIONS_JSON DISTS_JSON``.
Loads the taskset with the generated environment's own bridge (``verifiers_v1_bridge.py``),
says why it cannot be played when it cannot, plays the oracle (the task's ``answer``) on task 0,
and prints one JSON line: the tasks, rewards and weights, tools, config fields, the oracle's
actions and reward, and ``dist==version`` for each distribution of DISTS_JSON.
"""

import importlib.metadata
import json
import sys
from pathlib import Path


def main(bridge_dir, vendor_dir, package, options, dists):
    sys.path.insert(0, bridge_dir)
    import verifiers_v1_bridge as bridge

    bridge.VENDOR = Path(vendor_dir)
    try:
        loaded = bridge.load(package, options)
    except ValueError as exc:  # pydantic's ValidationError is one
        return {"refused": str(exc).splitlines()[0]}
    refused = loaded.refusal()
    if refused:
        return {"refused": refused}
    lo, hi = loaded.reward_range()
    task = loaded.tasks[0]
    turns = bridge.DEFAULT_MAX_TURNS if loaded.tools else 1
    answer = getattr(task.data, "answer", None)
    actions, reward = [], None
    if answer is not None:
        episode = bridge.Episode(loaded, 0, turns)
        actions.append({"message": str(answer)})
        _, result = episode.act(str(answer))
        reward = None if result is None else result[0]
    config = type(loaded.taskset.config)
    fields = [f for f in config.model_fields if f not in ("id", "task", "system_prompt")]
    return {
        "rows": len(loaded.tasks),
        "max_turns": turns,
        "lo": lo,
        "hi": hi,
        "funcs": [fn.__name__ for fn in task.hooks("reward")],
        "weights": loaded.weights(),
        "tools": sorted(loaded.tools),
        "options": fields,
        "has_answer": answer is not None,
        "actions": actions,
        "oracle_reward": reward,
        "verifiers": importlib.metadata.version("verifiers"),
        "pins": sorted(f"{d}=={importlib.metadata.version(d)}" for d in dists),
    }


if __name__ == "__main__":
    args = sys.argv[1:]
    print(json.dumps(main(args[0], args[1], args[2], json.loads(args[3]), json.loads(args[4]))))
