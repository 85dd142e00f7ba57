"""`envkit serve-oracle`: the echo template's oracle behind a real OpenAI-compatible HTTP
server on 127.0.0.1, driven by the real `openai` client and by `envkit eval --policy openai`."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import httpx
import pytest

from envkit.errors import ExitCode
from envkit.evaluation import evaluate
from envkit.evaluation.oracle_server import (
    NoObservation,
    OracleHTTPServer,
    observation_from,
    open_oracle_server,
)
from envkit.evaluation.parsing import parse_action
from envkit.evaluation.prompts import observation_message

if TYPE_CHECKING:
    import openai

ECHO_ACTION_SCHEMA = {"properties": {"message": {"type": "string"}}, "required": ["message"]}


@pytest.fixture(scope="module")
def openai_sdk() -> ModuleType:
    """The `openai` package, imported by the tests that use it: importing it costs ~0.7 s of
    CPU, which every pytest worker would pay to collect this module, fast tier included."""
    import openai

    return openai


@pytest.fixture(scope="module")
def oracle_server(echo_env: Path) -> Iterator[OracleHTTPServer]:
    """The echo template's oracle served on a free 127.0.0.1 port for the module."""
    server = open_oracle_server(echo_env, port=0, python=sys.executable)
    thread = threading.Thread(target=server.serve_forever, daemon=True, name="oracle-model")
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        server.oracle.close()
        thread.join(timeout=10)


def _client(sdk: ModuleType, server: OracleHTTPServer) -> openai.OpenAI:
    return sdk.OpenAI(base_url=server.base_url, api_key="any-key", max_retries=0)


def test_observation_is_read_from_the_last_user_message() -> None:
    first = observation_message({"target": "old"}, reward=None, step=0)
    last = observation_message({"target": "new phrase"}, reward=0.5, step=1)
    messages = [
        {"role": "system", "content": 'Reply with ```json\n{"message": "..."}\n```'},
        {"role": "user", "content": first},
        {"role": "assistant", "content": '```json\n{"message": "old"}\n```'},
        {"role": "user", "content": [{"type": "text", "text": last}]},  # content parts
    ]
    assert observation_from(messages) == {"target": "new phrase"}
    with pytest.raises(NoObservation, match="no observation"):
        observation_from([{"role": "user", "content": "What is the target?"}])
    with pytest.raises(NoObservation, match="no user message"):
        observation_from([{"role": "system", "content": "hi"}])


def test_completion_is_the_oracles_action(
    oracle_server: OracleHTTPServer, openai_sdk: ModuleType
) -> None:
    assert oracle_server.server_address[0] == "127.0.0.1"
    assert oracle_server.base_url == f"http://127.0.0.1:{oracle_server.port}/v1"
    observation = {"target": "the quick brown fox", "feedback": "", "attempts_left": 5}
    with _client(openai_sdk, oracle_server) as client:
        reply = client.chat.completions.create(
            model="oracle",
            messages=[
                {"role": "system", "content": "You echo."},
                {"role": "user", "content": observation_message(observation, reward=None, step=0)},
            ],
        )
        assert [m.id for m in client.models.list()] == ["oracle"]
    text = reply.choices[0].message.content
    assert parse_action(text, ECHO_ACTION_SCHEMA) == {"message": "the quick brown fox"}
    assert text.startswith("```json\n") and reply.usage.completion_tokens >= 1


def test_errors_come_in_openais_format(
    oracle_server: OracleHTTPServer, openai_sdk: ModuleType
) -> None:
    shown = observation_message({"target": "x"}, reward=None, step=0)
    with _client(openai_sdk, oracle_server) as client:
        with pytest.raises(openai_sdk.NotFoundError, match="serves `oracle`"):
            client.chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": shown}]
            )
        with pytest.raises(openai_sdk.BadRequestError, match="no observation"):
            client.chat.completions.create(
                model="oracle", messages=[{"role": "user", "content": "Guess a number."}]
            )
        with pytest.raises(openai_sdk.BadRequestError, match="Streaming"):
            client.chat.completions.create(
                model="oracle", messages=[{"role": "user", "content": shown}], stream=True
            )
    bad = httpx.post(oracle_server.base_url + "/chat/completions", content=b"{not json", timeout=5)
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_body"


def test_oracle_that_raises_is_a_500(
    echo_env: Path, copy_env, monkeypatch: pytest.MonkeyPatch, openai_sdk: ModuleType
) -> None:
    env = copy_env(echo_env)
    (env / "server" / "oracle.py").write_text(
        "def policy(observation):\n    raise RuntimeError('the oracle broke')\n"
    )
    server = open_oracle_server(env, port=0, python=sys.executable)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with (
            _client(openai_sdk, server) as client,
            pytest.raises(openai_sdk.InternalServerError, match="broke"),
        ):
            client.chat.completions.create(
                model="oracle",
                messages=[
                    {"role": "user", "content": observation_message({}, reward=None, step=0)}
                ],
            )
    finally:
        server.shutdown()
        server.server_close()
        server.oracle.close()


def test_eval_openai_reaches_the_oracles_reward(
    echo_env: Path, echo_server, oracle_server: OracleHTTPServer, monkeypatch, tmp_path: Path
) -> None:
    """`envkit eval --policy openai` against the oracle model scores what `--policy oracle`
    scores, with no API key set."""
    for name in ("HF_TOKEN", "OPENAI_API_KEY", "API_BASE_URL", "MODEL_NAME"):
        monkeypatch.delenv(name, raising=False)
    common = {"url": echo_server.url, "episodes": 3, "python": sys.executable}
    oracle = evaluate(echo_env, policy="oracle", out_dir=tmp_path / "oracle", **common)
    model = evaluate(
        echo_env,
        policy="openai",
        base_url=oracle_server.base_url,
        model="oracle",
        out_dir=tmp_path / "openai",
        **common,
    )
    s, o = model.summary, oracle.summary
    assert s["parse_failures"] == 0 and s["episode_errors"] == 0 and s["invalid_actions"] == 0
    assert s["return"]["mean"] == o["return"]["mean"] == 1.0
    assert s["success_rate"] == o["success_rate"] == 1.0
    assert [[x.action for x in e.steps] for e in model.episodes] == [
        [x.action for x in e.steps] for e in oracle.episodes
    ]


@pytest.mark.slow
def test_serve_oracle_command_serves_until_sigterm(echo_env: Path) -> None:
    envkit = Path(sys.executable).with_name("envkit")
    proc = subprocess.Popen(
        [str(envkit), "serve-oracle", str(echo_env), "--port", "0", "--python", sys.executable],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = proc.stdout.readline().strip()  # the base URL, once the oracle is loaded
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1"), proc.stderr.read()
        models = httpx.get(url + "/models", timeout=5).json()
        assert models["data"][0]["id"] == "oracle"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        assert "Stopped." in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_oracle_user_errors_are_one_line(echo_env: Path, copy_env, cli) -> None:
    env = copy_env(echo_env)
    manifest = env / "openenv.yaml"
    text = manifest.read_text()
    assert "  oracle: server.oracle:policy\n" in text, "fixture drift"
    manifest.write_text(text.replace("  oracle: server.oracle:policy\n", ""))
    result = cli("serve-oracle", env, "--port", "0")
    assert result.exit_code == int(ExitCode.ERROR), result.output
    assert "names no oracle" in result.output and "Traceback" not in result.output

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = cli("serve-oracle", echo_env, "--port", str(port), "--python", sys.executable)
    assert result.exit_code == int(ExitCode.ERROR), result.output
    assert f"Cannot listen on 127.0.0.1:{port}" in result.output


def test_reply_is_json_the_generated_inference_parser_accepts(
    oracle_server: OracleHTTPServer, openai_sdk: ModuleType
) -> None:
    """The generated inference.py's user message ends with the observation as a json block;
    the oracle model answers it (the inference.py parser is tested end to end in
    tests/templates/test_inference_contract.py)."""
    user = 'Target phrase: hi there\nFeedback: \nObservation:\n```json\n{"target": "hi there"}\n```'
    with _client(openai_sdk, oracle_server) as client:
        reply = client.chat.completions.create(
            model="oracle", messages=[{"role": "user", "content": user}], max_tokens=64
        )
    text = reply.choices[0].message.content
    assert json.loads(text.removeprefix("```json\n").removesuffix("\n```")) == {
        "message": "hi there"
    }
