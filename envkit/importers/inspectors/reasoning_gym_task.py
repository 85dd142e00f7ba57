"""Inspector for ``envkit import reasoning-gym:TASK`` (run by envkit.importers._inspect in an
environment with reasoning-gym; never imported by envkit).

Prints one JSON line: ``{"tasks": [...]}`` when TASK is not registered (``--list``: every
task with its description's first line, ``{"tasks": [...], "about": {task: line}}``), else the task's
difficulty options (its config dataclass fields less ``seed`` and ``size``) and the item at
seed 0 with its answer and the score ``score_answer`` gives that answer.
"""

import dataclasses
import enum
import json
import sys
import warnings


def _plain(value):
    if isinstance(value, enum.Enum):
        return _plain(value.value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def main(task):
    warnings.simplefilter("ignore")
    import reasoning_gym
    from reasoning_gym.factory import DATASETS

    if task == "--list":
        about = {}
        for name in sorted(DATASETS):
            doc = (DATASETS[name][0].__doc__ or "").strip()
            about[name] = doc.splitlines()[0].strip() if doc else ""
        return {"tasks": sorted(DATASETS), "about": about}
    if task not in DATASETS:
        return {"tasks": sorted(DATASETS)}
    options = []
    for f in dataclasses.fields(DATASETS[task][1]):
        if f.name in ("seed", "size"):
            continue
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = None
        options.append({"name": f.name, "default": json.dumps(_plain(default))})
    dataset = reasoning_gym.create_dataset(task, seed=0, size=1)
    entry = dataset[0]
    answer = str(entry["answer"])
    return {
        "task": task,
        "options": options,
        "answer": answer,
        "question": str(entry["question"]),
        "score": float(dataset.score_answer(answer, entry)),
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
