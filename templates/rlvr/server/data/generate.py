"""Regenerate questions.jsonl: procedural arithmetic questions at three difficulty levels.

    python server/data/generate.py        # rewrites server/data/questions.jsonl

The seed is fixed, so the file is reproducible byte for byte (a test checks it). The data
ships inside the package and the image: nothing is downloaded at run time.
Edit the generators below to change the task; keep answers exact (integers).
"""

import json
import random
from pathlib import Path

SEED = 20240601
PER_LEVEL = 40
NAMES = ("Ada", "Ben", "Chen", "Dara", "Eli", "Fay", "Gus", "Hana", "Ivo", "Juno")
ITEMS = ("apples", "pencils", "stamps", "marbles", "books", "tickets", "shells", "coins")


def easy(rng: random.Random) -> tuple:
    a, b = rng.randint(2, 50), rng.randint(2, 50)
    if rng.random() < 0.5:
        return f"What is {a} + {b}?", a + b
    a, b = max(a, b), min(a, b)
    return f"What is {a} - {b}?", a - b


def medium(rng: random.Random) -> tuple:
    a, b, c = rng.randint(3, 25), rng.randint(3, 25), rng.randint(2, 60)
    return f"What is {a} * {b} - {c}?", a * b - c


def hard(rng: random.Random) -> tuple:
    name, item = rng.choice(NAMES), rng.choice(ITEMS)
    boxes, per_box, given, price = (rng.randint(3, 9), rng.randint(4, 12), rng.randint(2, 10),
                                    rng.randint(2, 9))
    question = (f"{name} buys {boxes} boxes of {item} with {per_box} {item} in each box, gives "
                f"away {given} {item}, and sells the rest for {price} coins each. How many "
                f"coins does {name} get?")
    return question, (boxes * per_box - given) * price


def rows() -> list:
    rng = random.Random(SEED)
    out = []
    for level, make in (("easy", easy), ("medium", medium), ("hard", hard)):
        for i in range(PER_LEVEL):
            question, answer = make(rng)
            out.append({"id": f"{level}-{i:03d}", "difficulty": level,
                        "question": question, "answer": str(answer)})
    return out


def write(path: Path) -> None:
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows()),
                    encoding="utf-8")


if __name__ == "__main__":
    write(Path(__file__).with_name("questions.jsonl"))
