"""Check by hand, over the wire, that each realworld_* fixture behaves as designed.

Not a test (the probes that must find these defects come later, issue #13 item 2): it starts
each fixture with uvicorn on 127.0.0.1, plays the scenario its README line names over the
WebSocket (and HTTP where the defect lives there), prints what came back and exits 1 when a
fixture does not behave as designed.

    python tests/validation/envs/check_realworld.py [NAME ...]
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from websockets.sync.client import connect

HERE = Path(__file__).resolve().parent


@contextmanager
def serve(name: str) -> Iterator[str]:
    """Start fixture ``name`` on a free loopback port; yield its base URL; stop its group."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "server.app:app", "--host", "127.0.0.1",
         "--port", str(port)], cwd=HERE / name, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit(f"{name}: server did not start")
            time.sleep(0.1)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


class Session:
    """One WebSocket session: reset/step/state, each returning the reply's ``data``."""

    def __init__(self, url: str) -> None:
        self._conn = connect(url.replace("http", "ws", 1) + "/ws")
        self.ws = self._conn.__enter__()

    def _call(self, frame: dict[str, Any]) -> dict[str, Any]:
        self.ws.send(json.dumps(frame))
        reply = json.loads(self.ws.recv(timeout=10))
        return reply["data"]

    def reset(self, seed: int) -> dict[str, Any]:
        return self._call({"type": "reset", "data": {"seed": seed, "episode_id": f"s{seed}"}})

    def step(self, answer: str, field: str = "answer") -> dict[str, Any]:
        return self._call({"type": "step", "data": {field: answer}})

    def state(self) -> dict[str, Any]:
        return self._call({"type": "state"})

    def close(self) -> None:
        self.ws.send(json.dumps({"type": "close"}))
        self._conn.__exit__(None, None, None)


def show(label: str, reply: dict[str, Any]) -> None:
    print(f"    {label}: {json.dumps(reply, sort_keys=True)}")


def check(ok: bool, what: str) -> bool:
    print(f"  {'OK ' if ok else 'BAD'} {what}")
    return ok


def farming(url: str) -> bool:
    s = Session(url)
    obs = s.reset(0)
    answer = obs["observation"]["clue"][::-1]
    first = s.step(answer)
    again = [s.step(answer) for _ in range(3)]
    wrong = s.step("nope")
    s.close()
    show("step(right) ", first)
    show("step(right) after done", again[-1])
    return (check(first["done"] and first["reward"] == 1.0, "the right answer ends with 1.0")
            & check(all(r["done"] and r["reward"] == 1.0 for r in again),
                    "after done, the right answer pays 1.0 again (x3), done stays true")
            & check(wrong["reward"] == 0.0, "after done, a wrong answer pays 0"))


def reveal(url: str) -> bool:
    s = Session(url)
    s.reset(1)
    replies = [s.step("nope") for _ in range(3)]
    solution = replies[-1]["observation"].get("solution", "")
    show("terminal observation", replies[-1])
    after = s.step(solution)
    s.reset(1)
    fresh = s.step(solution)
    s.close()
    show("fresh episode, seed 1, step(solution)", fresh)
    return (check(replies[-1]["done"] and bool(solution), "a lost episode reveals `solution`")
            & check(after["reward"] == 0.0, "after done, submitting it pays 0 (no farming)")
            & check(fresh["reward"] == 1.0, "a fresh episode of the same seed pays 1.0 for it"))


def state_leak(url: str) -> bool:
    s = Session(url)
    s.reset(2)
    state = s.state()
    show("state", state)
    hit = s.step(state.get("target", ""))
    s.close()
    return (check("target" in state, "`state` carries `target`")
            & check(hit["reward"] == 1.0, "submitting state.target pays 1.0"))


def http_fresh(url: str) -> bool:
    r = httpx.post(f"{url}/step", json={"action": {"answer": ""}}, timeout=10).json()
    show("POST /step {answer: ''} (never reset)", r)
    s = Session(url)
    s.reset(0)
    ws = s.step("")
    s.close()
    return (check(r["reward"] == 1.0 and r["done"], "HTTP /step on a fresh instance: 1.0")
            & check(ws["reward"] == 0.0, "after reset, the empty answer pays 0"))


def constant(url: str) -> bool:
    rewards = []
    for seed, answer in ((0, None), (1, "nope"), (2, "")):
        s = Session(url)
        obs = s.reset(seed)
        a = obs["observation"]["clue"][::-1] if answer is None else answer
        rewards.append([s.step(a)["reward"] for _ in range(3)])
        s.close()
    print(f"    rewards (right, wrong, empty): {rewards}")
    return (check(all(r[:2] == [None, None] for r in rewards), "null before the last step")
            & check({r[2] for r in rewards} == {0.5}, "0.5 at the end whatever the answer"))


def unseeded(url: str) -> bool:
    obs, states = [], []
    for _ in range(2):
        s = Session(url)
        obs.append(s.reset(0))
        states.append(s.state())
        obs.append(s.step("000000"))
        s.close()
    show("state run 1", states[0])
    show("state run 2", states[1])
    return (check(obs[0] == obs[2] and obs[1] == obs[3], "same seed: identical observations")
            & check(states[0]["code_digest"] != states[1]["code_digest"],
                    "same seed: different state.code_digest"))


def fixed(url: str) -> bool:
    seen = []
    for seed in (0, 1, 2, 0):
        s = Session(url)
        seen.append(s.reset(seed))
        s.close()
    show("reset", seen[0])
    s = Session(url)
    s.reset(0)
    hit = s.step(seen[0]["observation"]["clue"][::-1])
    s.close()
    return (check(all(o == seen[0] for o in seen), "identical resets across and within seeds")
            & check(hit["reward"] == 1.0, "the oracle's answer pays 1.0"))


def sparse(url: str) -> bool:
    rewards, codes = [], set()
    for seed in (0, 1, 2):
        s = Session(url)
        s.reset(seed)
        codes.add(json.dumps(s.state(), sort_keys=True))
        rewards += [s.step(a)["reward"] for a in ("", "999999", "123456")]
        s.close()
    print(f"    rewards: {rewards}")
    return (check(set(rewards) == {0.0}, "guesses without the code all pay 0")
            & check(all("code" not in c for c in codes), "the code is not in `state`"))


def timing(url: str) -> bool:
    runs = []
    for _ in range(2):
        s = Session(url)
        s.reset(0)
        runs.append(s.step("nope")["observation"])
        s.close()
    show("run 1", runs[0])
    show("run 2", runs[1])
    stable = [{k: v for k, v in r.items() if k not in ("elapsed_s", "request_id")} for r in runs]
    a, b = Session(url), Session(url)
    a.reset(0)
    b.reset(1)
    a_obs = a.step("nope")["observation"]
    b.step("nope")
    a_again = a.step("nope")["observation"]
    a.close()
    b.close()
    return (check(runs[0]["request_id"] != runs[1]["request_id"], "ids differ run to run")
            & check(stable[0] == stable[1], "every other field is identical")
            & check(a_obs["clue"] == a_again["clue"], "interleaved sessions stay apart"))


def corridor(url: str) -> bool:
    s = Session(url)
    s.reset(0)
    fuzzed = [s.step("xyz", "move")["done"] for _ in range(30)]
    s.reset(0)
    walk = [s.step("right", "move") for _ in range(5)]
    again = s.step("right", "move")
    s.close()
    show("goal", walk[-1])
    show("after done", again)
    return (check(fuzzed[-1] and not any(fuzzed[:-1]), "moves not listed end by the limit")
            & check(walk[-1]["done"] and walk[-1]["reward"] == 1.0, "the listed moves win")
            & check(again["done"] and again["reward"] == 1.0, "a step after done pays again"))


CHECKS: dict[str, Callable[[str], bool]] = {
    "realworld_farming": farming, "realworld_reveal": reveal,
    "realworld_state_leak": state_leak, "realworld_http_fresh": http_fresh,
    "realworld_constant": constant, "realworld_unseeded": unseeded,
    "realworld_fixed": fixed, "realworld_sparse": sparse, "realworld_timing": timing,
    "realworld_corridor": corridor,
}


def main(names: list[str]) -> int:
    bad = 0
    for name in names or list(CHECKS):
        print(name)
        with serve(name) as url:
            bad += not CHECKS[name](url)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
