"""Inspector for ``envkit import`` of a verifiers module (run by envkit.importers._inspect in
an environment with the module's pinned packages; never imported by envkit).

Usage: ``python verifiers_module.py BRIDGE_DIR MODULE_PATH LOAD_KWARGS_JSON``. Loads the
module's environment with the generated environment's own bridge (``verifiers_bridge.py``),
plays the oracle (the row's answer every turn) on row 0, and prints one JSON line: the
dataset size, turns, rubric (functions, weights, reward range), the oracle's actions and the
reward they earned.
"""

import importlib.util
import json
import sys


def main(bridge_dir, module_path, load_kwargs):
    sys.path.insert(0, bridge_dir)
    import verifiers_bridge as bridge

    spec = importlib.util.spec_from_file_location("source_env", module_path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["source_env"] = module
    spec.loader.exec_module(module)
    env = module.load_environment(**load_kwargs)
    lo, hi = bridge.reward_range(env)
    funcs, weights, _, _ = bridge._rubric_parts(env)
    turns = bridge.max_turns(env)
    episode = bridge.Episode(env, 0)
    answer = str(episode.item.get("answer", ""))
    actions, result = [], None
    while result is None and len(actions) < turns:
        actions.append({"message": answer})
        _, result = episode.act(answer)
    return {
        "rows": len(bridge.rows(env)),
        "max_turns": turns,
        "lo": lo,
        "hi": hi,
        "funcs": [getattr(f, "__name__", repr(f)) for f in funcs],
        "weights": weights,
        "actions": actions,
        "oracle_reward": None if result is None else result[0],
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))))
