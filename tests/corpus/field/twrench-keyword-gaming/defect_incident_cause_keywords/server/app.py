"""Incident triage: inspect service logs with tools, then submit which service failed and why."""
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

SERVICES = ["api-gateway", "billing", "search", "auth", "mailer", "scheduler"]
CAUSES = {"out of memory": "FATAL java.lang.OutOfMemoryError: Java heap space",
          "disk full": "ERROR write failed: No space left on device (errno 28)",
          "connection timeout": "ERROR upstream db:5432 timed out after 30000 ms",
          "permission denied": "ERROR open /var/run/app.sock: EACCES"}
MAX_STEPS = 4
TOOLS = [
    {"name": "list_services", "description": "List the services.",
     "input_schema": {"type": "object", "properties": {}}},
    {"name": "read_log", "description": "Read the last log lines of a service.",
     "input_schema": {"type": "object", "properties": {"service": {"type": "string"}},
                      "required": ["service"]}},
    {"name": "submit_report", "description": "Submit the failing service and the cause (ends the episode).",
     "input_schema": {"type": "object", "properties": {"service": {"type": "string"},
                                                       "report": {"type": "string"}},
                      "required": ["service", "report"]}},
]


class ToolAction(Action):
    tool_name: str = ""
    arguments: dict = {}


class TriageObservation(Observation):
    prompt: str = ""
    tools: list = []
    output: str = ""


PROMPT = ("One service is failing. Use the tools to find which one and why, then call "
          "submit_report(service, report). At most 4 tool calls.")


class TriageEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._gold: Optional[tuple] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> TriageObservation:
        rng = random.Random(seed)
        self._gold = (rng.choice(SERVICES), rng.choice(sorted(CAUSES)))
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return TriageObservation(prompt=PROMPT, tools=TOOLS)

    def _log(self, service: str) -> str:
        if service not in SERVICES:
            return f"no such service: {service}"
        if service == self._gold[0]:
            return f"== {service} ==\nINFO starting\n" + CAUSES[self._gold[1]] + "\nINFO restarting"
        return f"== {service} ==\nINFO healthy\nINFO healthy"

    def step(self, action: ToolAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> TriageObservation:
        if self._gold is None or self._done:
            return TriageObservation(output="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        args = action.arguments or {}
        reward, output = 0.0, ""
        if action.tool_name == "list_services":
            output = "\n".join(f"{s}\t{'DEGRADED' if s == self._gold[0] else 'ok'}"
                               for s in SERVICES)
        elif action.tool_name == "read_log":
            output = self._log(str(args.get("service", "")))
        elif action.tool_name == "submit_report":
            service_ok = str(args.get("service", "")).strip() == self._gold[0]
            cause_ok = self._gold[1] in str(args.get("report", "")).lower()
            reward = 0.5 * service_ok + 0.5 * cause_ok
            output = f"service {'right' if service_ok else 'wrong'}, cause {'right' if cause_ok else 'wrong'}"
            self._done = True
        else:
            output = f"unknown tool {action.tool_name}"
        if self._state.step_count >= MAX_STEPS:
            self._done = True
        return TriageObservation(prompt=PROMPT, tools=TOOLS, output=output,
                                 done=self._done, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    """Oracle: list services, read the degraded one's log, report service and cause."""
    out = observation.get("output", "")
    if out.startswith("== "):
        service = out.split("\n")[0].strip("= ")
        for cause, line in CAUSES.items():
            if line in out:
                return {"tool_name": "submit_report",
                        "arguments": {"service": service, "report": f"{cause}: {line}"}}
    for row in out.split("\n"):
        if row.endswith("\tDEGRADED"):
            return {"tool_name": "read_log", "arguments": {"service": row.split("\t")[0]}}
    return {"tool_name": "list_services", "arguments": {}}


app = create_app(TriageEnv, ToolAction, TriageObservation, env_name="incident_triage",
                 max_concurrent_envs=8)
