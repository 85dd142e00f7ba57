"""``envkit capacity``: how many replicas a number of concurrent sessions needs, and the
commands that start them."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from envkit.cli import _output
from envkit.cli._options import EnvDirArg, EnvVarOpt, FormatOpt, parse_key_values
from envkit.envdir import EnvDir
from envkit.scale.capacity import CAPACITY_VARIABLE, node_size, plan_capacity

if TYPE_CHECKING:
    from envkit.scale.capacity import CapacityPlan

SessionsOpt = Annotated[
    int,
    typer.Option(
        "--sessions",
        "-s",
        min=1,
        metavar="S",
        help="Sessions the trainer holds at once (TRL: its generation_batch_size, over all "
        "processes; how to compute S: docs/scale.md, 'What S is').",
    ),
]
HeadroomOpt = Annotated[
    float,
    typer.Option(
        "--headroom",
        min=0.0,
        metavar="H",
        help="Spare fraction of slots: 0.1 behind a least-connections balancer (the Docker "
        "pool) or Ray Serve; 0.25 behind a random one (kube-proxy).",
    ),
]


def capacity_cmd(
    sessions: SessionsOpt,
    path: EnvDirArg = Path("."),
    headroom: HeadroomOpt = 0.1,
    env: EnvVarOpt = None,
    node_cpu: Annotated[
        float | None,
        typer.Option(
            "--node-cpu",
            min=0.001,
            metavar="CORES",
            show_default=False,
            help="Cores of one node \\[default: this machine's].",
        ),
    ] = None,
    node_memory_mb: Annotated[
        int | None,
        typer.Option(
            "--node-memory-mb",
            min=1,
            metavar="MIB",
            show_default=False,
            help="Memory of one node in MiB \\[default: this machine's].",
        ),
    ] = None,
    fmt: FormatOpt = "text",
) -> None:
    """Size a pool of replicas for S concurrent sessions.

    Prints N = ceil(S x (1 + H) / C), where C is the sessions one server accepts
    (max_concurrent_envs: the app module's MAX_CONCURRENT_ENVS default, or -e
    MAX_CONCURRENT_ENVS=C as the replicas will be started), how many replicas fit one node by
    the manifest's validation.resources, and the commands that start N replicas. Exit 2 when
    the environment does not support concurrent sessions (C < 2).

    Examples:
      envkit capacity --sessions 64
      envkit capacity -s 256 envs/my-env -e MAX_CONCURRENT_ENVS=32 --headroom 0.25
      envkit capacity -s 64 --node-cpu 16 --node-memory-mb 65536 --format json
    """
    variables = parse_key_values(env, "--env")
    envdir = EnvDir(path)
    envdir.require_manifest()
    default_cpu, default_memory = node_size()
    node = (node_cpu or default_cpu, node_memory_mb or default_memory)
    plan = plan_capacity(
        envdir, sessions=sessions, env_vars=variables, headroom=headroom, node=node
    )
    commands = next_commands(path, plan, variables)
    output = _output.Output(fmt)
    if output.is_json:
        source = capacity_source(envdir, variables)
        output.data({**plan.as_dict(), "capacity_source": source, "commands": commands})
        return
    for line in _text(envdir, plan, variables, commands):
        output.text(line)


def capacity_source(envdir: EnvDir, variables: dict[str, str]) -> str:
    """Where C came from: ``-e MAX_CONCURRENT_ENVS=8`` or ``server/app.py:26``."""
    if CAPACITY_VARIABLE in variables:
        return f"-e {CAPACITY_VARIABLE}={variables[CAPACITY_VARIABLE]}"
    cap = envdir.capacity
    return f"{cap.file}:{cap.line}" if cap.line else str(cap.file)


def next_commands(path: Path, plan: CapacityPlan, variables: dict[str, str]) -> dict[str, str]:
    """The command of each way to run N replicas (keys ``docker``, ``k8s``, ``ray``)."""
    tail = [] if path == Path(".") else [str(path)]
    env_flags = [f"-e {shlex.quote(f'{k}={v}')}" for k, v in variables.items()]
    n = str(plan.replicas)

    def line(*words: str) -> str:
        return " ".join(["envkit", *words, *(shlex.quote(t) for t in tail)])

    return {
        "docker": line("run", "--docker", "--replicas", n, *env_flags),
        "k8s": line("deploy", "k8s", "--image", "REF", "--replicas", n, *env_flags),
        "ray": line("deploy", "ray", "--replicas", n),
    }


def _text(
    envdir: EnvDir, plan: CapacityPlan, variables: dict[str, str], commands: dict[str, str]
) -> list[str]:
    spec = envdir.spec
    name = envdir.manifest.name if envdir.manifest else envdir.root.name
    lines = [
        f"environment  {name} ({envdir.root})",
        f"sessions     {plan.sessions} at once, headroom {plan.headroom:.0%}",
        f"per replica  {plan.per_replica} sessions ({capacity_source(envdir, variables)})",
        f"replicas     {plan.summary()}",
    ]
    node = f"{plan.node_cpu:g} CPUs and {plan.node_memory_mb} MiB"
    if plan.per_node is None:
        lines.append(
            f"per node     unknown: openenv.yaml declares no validation.resources (node: {node})"
        )
    else:
        cores = f"{spec.cpu:g}" if spec.cpu else "-"
        lines.append(
            f"per node     {plan.per_node} replicas fit a node of {node} (each: {cores} CPU, "
            f"{spec.memory_mb or '-'} MiB): {plan.nodes} node(s)"
        )
    if plan.headroom < 0.25:
        lines.append(
            "note         kube-proxy places sessions at random: size a Kubernetes pool with "
            "--headroom 0.25"
        )
    lines += [
        "commands",
        f"  pool (one node)   {commands['docker']}",
        f"  Kubernetes        {commands['k8s']}",
        f"  Ray Serve         {commands['ray']}",
    ]
    return lines


def register(app: typer.Typer, handled: Callable[..., Any]) -> None:
    app.command("capacity")(handled(capacity_cmd))
