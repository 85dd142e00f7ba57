"""``envkit deploy``: serve a pool of environment replicas on a cluster.

``envkit deploy k8s`` lives here. Other targets live in their own modules and attach
themselves to :data:`deploy_app` through :data:`SUBCOMMAND_MODULES`: each entry names a
module under ``envkit.cli`` and its function ``(deploy_app, handled) -> None``.
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from envkit.cli import _output
from envkit.cli._options import EnvDirArg, EnvVarOpt, parse_key_values
from envkit.envdir import EnvDir
from envkit.errors import DestinationError, UsageError, UserError
from envkit.fsutil import write_atomic
from envkit.scale.capacity import CapacityPlan, plan_capacity

#: Subcommands defined in other modules: ``(module under envkit.cli, register function)``,
#: e.g. ``("deploy_ray", "register_ray")`` for ``envkit deploy ray``.
SUBCOMMAND_MODULES: tuple[tuple[str, str], ...] = (("deploy_ray", "register_ray"),)

deploy_app = typer.Typer(
    name="deploy",
    short_help="Serve a pool of environment replicas on a cluster (Kubernetes, Ray Serve).",
    help="Serve a pool of environment replicas behind one URL: `envkit deploy k8s` writes "
    "Kubernetes manifests (and applies them with --apply); `envkit deploy ray` serves it "
    "with Ray Serve on a running Ray cluster. Size the pool with `envkit capacity`; see "
    "docs/scale.md for which target to use.",
    no_args_is_help=True,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def k8s_cmd(
    path: EnvDirArg = Path("."),
    image: Annotated[
        str,
        typer.Option(
            "--image",
            "-i",
            metavar="REF",
            help="The environment's image as the cluster pulls it, e.g. ghcr.io/me/my-env:0.1.0.",
        ),
    ] = "",
    replicas: Annotated[
        int | None,
        typer.Option("--replicas", min=1, metavar="N", help="Replicas N.", show_default=False),
    ] = None,
    sessions: Annotated[
        int | None,
        typer.Option(
            "--sessions",
            "-s",
            min=1,
            metavar="S",
            show_default=False,
            help="Size N for S concurrent sessions instead (as `envkit capacity`).",
        ),
    ] = None,
    headroom: Annotated[
        float,
        typer.Option(
            "--headroom",
            min=0.0,
            metavar="H",
            help="With --sessions: spare fraction of slots (kube-proxy spreads connections "
            "at random: 0.25 is safer).",
        ),
    ] = 0.1,
    env: EnvVarOpt = None,
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            help="Name of every object \\[default: the manifest's name, e.g. guess-env].",
            show_default=False,
        ),
    ] = None,
    namespace: Annotated[
        str | None,
        typer.Option(
            "--namespace",
            help="metadata.namespace \\[default: none: kubectl's current namespace].",
            show_default=False,
        ),
    ] = None,
    hpa: Annotated[
        str | None,
        typer.Option(
            "--hpa",
            metavar="MIN:MAX",
            show_default=False,
            help="Add a HorizontalPodAutoscaler on CPU between MIN and MAX replicas.",
        ),
    ] = None,
    ingress_host: Annotated[
        str | None,
        typer.Option(
            "--ingress",
            metavar="HOST",
            show_default=False,
            help="Add an ingress-nginx Ingress for HOST with one-hour WebSocket timeouts.",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            metavar="DIR",
            show_default=False,
            help="Write DIR/NAME.yaml (all objects, one file, replaced atomically) instead "
            "of printing the manifests.",
        ),
    ] = None,
    apply: Annotated[
        bool,
        typer.Option("--apply", help="Run `kubectl apply -f` on the manifests (your kubectl)."),
    ] = False,
) -> None:
    """Kubernetes manifests for a pool of N replicas of the environment.

    One multi-document YAML: a Deployment (probes on GET /health, the hardened security
    context of `envkit validate --docker`, requests and limits from openenv.yaml's
    validation.resources, MAX_CONCURRENT_ENVS=C, a drain of episode_timeout_s on
    termination), a ClusterIP Service (port 80), a PodDisruptionBudget, and with the options
    an HPA and an Ingress; a NetworkPolicy denying egress for network.mode no-network.
    Printed on stdout unless --out; the capacity plan goes to stderr. Needs Kubernetes 1.30+.

    Examples:
      envkit deploy k8s --image ghcr.io/me/my-env:0.1.0 --replicas 3
      envkit deploy k8s envs/my-env -i REF --sessions 64 --hpa 4:12 --out deploy/
      envkit deploy k8s -i REF --replicas 2 --ingress env.example.com --apply
    """
    from envkit.scale.k8s import (
        DeployOptions,
        build_manifests,
        check_name,
        k8s_name,
        local_only,
        parse_hpa,
    )

    if not image:
        raise UsageError(
            "`envkit deploy k8s` needs --image REF: the cluster pulls the image, it cannot "
            "build it.",
            hint="Build and push it (`envkit build --tag REF` then `docker push REF`), then "
            "pass --image REF.",
        )
    if local_only(image):
        _output.warn(
            f"--image {image} names no registry: a cluster pulls it from Docker Hub, where "
            "your local image is not.",
            hint="Push it to a registry your cluster reaches (e.g. ghcr.io/me/my-env:0.1.0); "
            f"for a local cluster, load it (`kind load docker-image {image}`) and tag it "
            "other than `latest`, so `imagePullPolicy: IfNotPresent` uses the loaded image.",
        )
    envdir = EnvDir(path)
    manifest = envdir.require_manifest()
    bounds = parse_hpa(hpa) if hpa is not None else None
    variables = parse_key_values(env, "--env")
    if replicas is None and sessions is None and bounds is not None:
        replicas = bounds[0]
    plan = plan_capacity(
        envdir, sessions=sessions, replicas=replicas, env_vars=variables, headroom=headroom
    )
    options = DeployOptions(
        image=image,
        name=check_name(name) if name is not None else k8s_name(manifest.name),
        namespace=namespace,
        hpa=bounds,
        ingress_host=ingress_host,
        env=variables,
    )
    _check_hpa(plan, bounds)
    text = _HEADER + _dump(build_manifests(envdir, plan, options))
    _output.info(f"Capacity: {_output.esc(plan.summary())}")
    if sessions is not None and headroom < RANDOM_HEADROOM:
        _output.info(
            f"kube-proxy places connections at random: --headroom {RANDOM_HEADROOM} keeps a "
            "replica from filling up before the others."
        )
    where = f"{options.name}.{namespace or 'NAMESPACE'}.svc"
    _output.info(f"In the cluster: ENV_URL=http://{where} (WebSocket sessions on ws://{where}/ws).")
    target = _write(out, options.name, text) if out is not None else None
    if apply:
        _kubectl_apply(target, text)
    elif target is None:
        _output.Output().text(text.rstrip("\n"))


#: Headroom behind a balancer that places connections at random (docs/scale.md).
RANDOM_HEADROOM = 0.25
_HEADER = "# Generated by `envkit deploy k8s`: regenerate it rather than edit it.\n"


def _dump(docs: list[dict[str, Any]]) -> str:
    from envkit.scale.k8s import dump_manifests

    return dump_manifests(docs)


def _check_hpa(plan: CapacityPlan, bounds: tuple[int, int] | None) -> None:
    """N outside the HPA's range: past MAX is an error, under MIN a warning."""
    if bounds is None:
        return
    low, high = bounds
    if plan.replicas > high:
        raise UsageError(
            f"The pool needs {plan.replicas} replicas but --hpa {low}:{high} allows at most "
            f"{high}.",
            hint=f"Raise MAX to at least {plan.replicas}.",
        )
    if plan.replicas > low:
        _output.warn(
            f"--hpa {low}:{high} may scale down to {low} replicas ({low * plan.per_replica} "
            f"sessions) while the trainer needs {plan.replicas}: the HPA scales on CPU, and "
            "OpenEnv reports no open sessions to scale on.",
            hint=f"Use --hpa {plan.replicas}:{max(high, plan.replicas)} to keep the sessions' "
            "slots.",
        )


def _write(out: Path, name: str, text: str) -> Path:
    """``out/NAME.yaml``, replaced atomically (the whole set of objects at once: no object
    of an earlier run with other options is left behind)."""
    if out.exists() and not out.is_dir():
        raise DestinationError(
            f"--out {out} is not a directory.", hint="Pass a directory (created if missing)."
        )
    target = out / f"{name}.yaml"
    try:
        write_atomic(target, text)
    except OSError as exc:
        raise DestinationError(
            f"Cannot write {target}: {exc.strerror or exc}.", hint="Pick a writable --out."
        ) from None
    _output.success(f"Wrote {_output.esc(target)}")
    return target


def _kubectl_apply(target: Path | None, text: str) -> None:
    """``kubectl apply -f FILE`` (or ``-f -`` with the text on stdin), output passed through.

    Raises:
        UsageError: no ``kubectl`` on PATH.
        UserError: kubectl exits non-zero (its own message is above).
    """
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        raise UsageError(
            "--apply needs kubectl, and there is none on PATH.",
            hint="Install kubectl (https://kubernetes.io/docs/tasks/tools/) or apply the "
            "written file yourself: envkit deploy k8s ... --out DIR, then kubectl apply -f DIR.",
        )
    argv = [kubectl, "apply", "-f", str(target) if target is not None else "-"]
    done = subprocess.run(argv, input=None if target is not None else text, text=True, check=False)
    if done.returncode != 0:
        raise UserError(
            f"`kubectl apply` exited with {done.returncode}; its message is above.",
            hint="Check the current context (`kubectl config current-context`) and your rights "
            "in the namespace.",
        )
    _output.success("Applied with kubectl.")


def register(app: typer.Typer, handled: Callable[..., Any]) -> None:
    deploy_app.command("k8s")(handled(k8s_cmd))
    for module, function in SUBCOMMAND_MODULES:
        getattr(importlib.import_module(f"envkit.cli.{module}"), function)(deploy_app, handled)
    app.add_typer(deploy_app, name="deploy")
