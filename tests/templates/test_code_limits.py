"""The code template's sandbox, proven over the wire: an infinite loop, a memory bomb, a fork
attempt and a 10 MB print each score 0 with a message, and the server keeps serving."""

from __future__ import annotations

import httpx
import pytest

from envkit.wire import EnvSession

pytestmark = pytest.mark.timeout(300)

CORRECT_GCD = "import math\n\n\ndef solve(a, b):\n    return math.gcd(a, b)\n"


@pytest.mark.parametrize(
    "source, words",
    [
        ("while True:\n    pass\n", "Time limit"),
        ("blob = []\nwhile True:\n    blob.append(bytearray(10 ** 7))\n", "memory limit"),
        ("import os\nos.fork()\n", "start a process"),
        ("print('x' * 10_000_000)\n", "Output limit"),
        (
            "import glob\nprint(open(glob.glob('/**/tasks.py', recursive=True)[0]).read())\n",
            "outside its sandbox",
        ),
    ],
)
def test_hostile_submission_scores_zero_and_server_survives(served, source, words):
    url = served["code"]
    with EnvSession(url, timeout_s=30) as session:
        obs = session.reset(seed=0)
        task = obs.observation
        result = session.step({"source": source + "\ndef solve(*args):\n    return 0\n"})
        assert result.reward == 0.0, result
        assert words in result.observation["feedback"], result.observation["feedback"]
        # The session and the server are still fine: a correct answer still scores.
        if task["task_id"] == "gcd":
            assert session.step({"source": CORRECT_GCD}).reward == 1.0
    assert httpx.get(f"{url}/health", timeout=5).json()["status"] == "healthy"
