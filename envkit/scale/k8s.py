"""Kubernetes manifests for a pool of environment replicas (``envkit deploy k8s``).

The objects are plain dicts (no Kubernetes client library), dumped as one multi-document YAML
file with ruamel.yaml, the YAML library envkit already uses:

- a Deployment whose pods run as ``envkit validate --docker`` runs the image (uid 65532,
  read-only root with an emptyDir at ``/tmp``, every capability dropped, no privilege
  escalation, seccomp ``RuntimeDefault``; see :mod:`envkit.container.hardening`), with
  requests and limits from the manifest's ``validation.resources``, ``MAX_CONCURRENT_ENVS``
  set to C, probes on ``GET /health`` and a drain on termination;
- a ClusterIP Service (port 80 to the container's named port ``http``);
- a PodDisruptionBudget (``maxUnavailable: 1``: it holds with any replica count, an HPA's too);
- optionally a HorizontalPodAutoscaler (``autoscaling/v2`` on CPU: OpenEnv's ``/health``
  reports no open sessions, so there is no per-session metric to scale on);
- optionally an Ingress with ingress-nginx's WebSocket timeouts;
- a NetworkPolicy denying egress when the manifest declares ``network.mode: no-network``
  (the lane's ``--network none``; enforced only by a network plugin that implements it).

Why a drain: uvicorn closes every WebSocket with code 1012 as soon as it gets SIGTERM
(``uvicorn/server.py``, ``Server.shutdown``), so a pod that is replaced (rolling update, scale
down, eviction) first sleeps ``episode_timeout_s`` in ``preStop`` while it is already out of
the Service's endpoints: an episode in flight can finish, no new session lands on it. The
``preStop`` ``sleep`` action needs Kubernetes 1.30 or later (:data:`MIN_KUBERNETES`).
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.representer import SafeRepresenter
from ruamel.yaml.resolver import VersionedResolver

from envkit.container.hardening import (
    CONTAINER_ENV,
    DEFAULT_CPU,
    DEFAULT_DISK_MB,
    DEFAULT_MEMORY_MB,
    HARDENED_USER,
)
from envkit.envdir import EnvDir
from envkit.errors import UsageError
from envkit.scale.capacity import CAPACITY_VARIABLE, CapacityPlan

#: The oldest Kubernetes the manifests are written for (``preStop.sleep`` is on by default
#: from 1.30); the tests validate against this version's schemas.
MIN_KUBERNETES = "1.30"
#: Seconds an episode may take when the manifest declares no ``episode_timeout_s``.
DEFAULT_EPISODE_TIMEOUT_S = 300.0
#: Seconds past the drain for uvicorn's own shutdown before the kubelet sends SIGKILL.
SHUTDOWN_MARGIN_S = 30
#: Idle seconds ingress-nginx keeps a WebSocket open (its default, 60 s, ends sessions
#: whose model thinks for a minute between two steps).
INGRESS_TIMEOUT_S = 3600
#: CPU utilisation (percent of the request) the HPA keeps replicas at.
HPA_CPU_PERCENT = 70
#: The container's named port; the Service, probes and Ingress refer to it by name.
PORT_NAME = "http"
#: The health endpoint every OpenEnv server answers (``{"status": "healthy"}``).
HEALTH_PATH = "/health"
MANAGED_BY = "envkit"

_DNS_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(
    r"(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
)
_LABEL_VALUE = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")


@dataclass(frozen=True)
class DeployOptions:
    """What ``envkit deploy k8s`` was asked for, beyond the capacity plan.

    Attributes:
        image: the image reference the pods run (``registry/name:tag``).
        name: the objects' name, a DNS-1035 label (:func:`check_name`).
        namespace: ``metadata.namespace``, or ``None`` for kubectl's current namespace.
        hpa: ``(min, max)`` replicas of a HorizontalPodAutoscaler, or ``None``.
        ingress_host: the Ingress's host name, or ``None`` for no Ingress.
        env: extra container variables (``-e KEY=VALUE``), written as plain values.
    """

    image: str
    name: str
    namespace: str | None = None
    hpa: tuple[int, int] | None = None
    ingress_host: str | None = None
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PodFacts:
    """What a pod needs from the environment directory (units as in the manifest).

    Attributes:
        port: the server's port in the container. version: the manifest's version or None.
        cpu: cores. memory_mb: MiB. disk_mb: MiB of ``/tmp`` (ephemeral storage).
        episode_timeout_s: seconds one episode may take (the drain).
        startup_timeout_s: seconds a new server gets to answer ``GET /health``.
        network_mode: ``public``, ``no-network`` or ``allowlist``.
    """

    port: int
    version: str | None
    cpu: float
    memory_mb: int
    disk_mb: int
    episode_timeout_s: float
    startup_timeout_s: float
    network_mode: str


def pod_facts(env: EnvDir) -> PodFacts:
    """Read :class:`PodFacts` from ``env``'s manifest; what it does not declare takes the
    hardened lane's defaults (1 core, 1024 MiB, 1024 MiB of disk) and
    :data:`DEFAULT_EPISODE_TIMEOUT_S`.

    Raises:
        SpecError: ``openenv.yaml`` is missing or fails the schema.
    """
    manifest = env.require_manifest()
    spec = env.spec
    resources = manifest.validation.resources if manifest.validation is not None else None
    disk = getattr(resources, "disk_mb", None)
    return PodFacts(
        port=env.port,
        version=manifest.version,
        cpu=spec.cpu or DEFAULT_CPU,
        memory_mb=spec.memory_mb or DEFAULT_MEMORY_MB,
        disk_mb=int(disk) if disk else DEFAULT_DISK_MB,
        episode_timeout_s=spec.episode_timeout_s or DEFAULT_EPISODE_TIMEOUT_S,
        startup_timeout_s=spec.startup_timeout_s,
        network_mode=spec.network_mode,
    )


def local_only(image: str) -> bool:
    """Whether ``image`` names no registry, so a cluster cannot pull it from one: its first
    path part is not a host (no ``.`` or ``:``, not ``localhost``), as Docker's reference
    grammar reads it (``my-env:0.1.0``, ``me/my-env``; ``ghcr.io/me/my-env`` is not)."""
    first, slash, _rest = image.partition("/")
    if not slash:
        return True
    return not ("." in first or ":" in first or first == "localhost")


def k8s_name(raw: str) -> str:
    """A DNS-1035 label from an environment name: ``guess_env`` -> ``guess-env`` (lower
    case, runs of other characters to one ``-``, starts with a letter, at most 63).

    Raises:
        UsageError: nothing usable is left (e.g. ``"123"``).
    """
    text = re.sub(r"[^a-z0-9]+", "-", raw.lower())
    text = re.sub(r"^[^a-z]+", "", text)[:63].strip("-")
    if not text:
        raise UsageError(
            f"Cannot make a Kubernetes name from {raw!r}.",
            hint="Pass --name NAME (lower-case letters, digits and '-', starting with a letter).",
        )
    return text


def check_name(name: str, option: str = "--name") -> str:
    """``name`` when it is a DNS-1035 label (what a Service name must be).

    Raises:
        UsageError: it is not; the message suggests :func:`k8s_name`'s spelling.
    """
    if len(name) <= 63 and _DNS_LABEL.fullmatch(name):
        return name
    suggestion = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "my-env"
    raise UsageError(
        f"{option} {name!r} is not a Kubernetes name (at most 63 lower-case letters, digits "
        "and '-', starting with a letter and ending with a letter or digit).",
        hint=f"Use e.g. {option} {suggestion}.",
    )


def parse_hpa(text: str) -> tuple[int, int]:
    """``"2:8"`` -> ``(2, 8)``.

    Raises:
        UsageError: not ``MIN:MAX`` with ``1 <= MIN <= MAX``.
    """
    low, sep, high = text.partition(":")
    try:
        bounds = (int(low), int(high)) if sep else None
    except ValueError:
        bounds = None
    if bounds is None or not 1 <= bounds[0] <= bounds[1]:
        raise UsageError(
            f"--hpa {text!r} is not MIN:MAX with 1 <= MIN <= MAX.", hint="Use e.g. --hpa 2:8."
        )
    return bounds


def check_options(options: DeployOptions) -> None:
    """Refuse values the API server would reject, before anything is written.

    Raises:
        UsageError: an empty or spaced image reference, a bad name, namespace or host.
    """
    if not options.image or any(c.isspace() for c in options.image):
        raise UsageError(
            f"--image {options.image!r} is not an image reference.",
            hint="Pass the image your cluster pulls, e.g. --image ghcr.io/me/my-env:0.1.0 "
            "(build and push it first: `envkit build`, then `docker push`).",
        )
    check_name(options.name)
    if options.namespace is not None:
        check_name(options.namespace, "--namespace")
    host = options.ingress_host
    if host is not None and not (len(host) <= 253 and _DNS_SUBDOMAIN.fullmatch(host)):
        raise UsageError(
            f"--ingress {host!r} is not a host name.", hint="Use e.g. --ingress env.example.com."
        )
    for key in options.env:
        if key == CAPACITY_VARIABLE:
            continue
        if not re.fullmatch(r"[-._a-zA-Z][-._a-zA-Z0-9]*", key):
            raise UsageError(f"-e {key}=... is not a valid environment variable name.")


def cpu_quantity(cores: float) -> str:
    """Cores as a Kubernetes quantity: ``1.0`` -> ``"1"``, ``0.5`` -> ``"500m"``."""
    millis = max(1, round(cores * 1000))
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def _labels(name: str, facts: PodFacts) -> dict[str, str]:
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/managed-by": MANAGED_BY}
    if facts.version and len(facts.version) <= 63 and _LABEL_VALUE.fullmatch(facts.version):
        labels["app.kubernetes.io/version"] = facts.version
    return labels


def _metadata(options: DeployOptions, facts: PodFacts, **extra: object) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": options.name}
    if options.namespace:
        meta["namespace"] = options.namespace
    meta["labels"] = _labels(options.name, facts)
    meta.update(extra)
    return meta


def _selector(name: str) -> dict[str, Any]:
    return {"matchLabels": {"app.kubernetes.io/name": name}}


def drain_seconds(facts: PodFacts) -> int:
    """Seconds a terminating pod keeps serving open sessions: the episode timeout."""
    return max(1, math.ceil(facts.episode_timeout_s))


def _probe(period_s: int, timeout_s: int, failures: int) -> dict[str, Any]:
    return {
        "httpGet": {"path": HEALTH_PATH, "port": PORT_NAME},
        "periodSeconds": period_s,
        "timeoutSeconds": timeout_s,
        "failureThreshold": failures,
    }


def _container(plan: CapacityPlan, options: DeployOptions, facts: PodFacts) -> dict[str, Any]:
    """The environment's container: hardened, sized, probed, drained."""
    variables = {**CONTAINER_ENV, **options.env, CAPACITY_VARIABLE: str(plan.per_replica)}
    size = {
        "cpu": cpu_quantity(facts.cpu),
        "memory": f"{facts.memory_mb}Mi",
        "ephemeral-storage": f"{facts.disk_mb}Mi",
    }
    return {
        "name": "env",
        "image": options.image,
        "ports": [{"name": PORT_NAME, "containerPort": facts.port, "protocol": "TCP"}],
        "env": [{"name": k, "value": v} for k, v in sorted(variables.items())],
        "resources": {"requests": dict(size), "limits": dict(size)},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "privileged": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        # Start-up gets the manifest's startup_timeout_s before liveness counts.
        "startupProbe": _probe(2, 2, max(1, math.ceil(facts.startup_timeout_s / 2))),
        "readinessProbe": _probe(5, 3, 3),
        # Generous: one GIL-bound process busy with many sessions can answer /health late;
        # killing it would end every open episode on it. Two minutes of silence.
        "livenessProbe": _probe(20, 5, 6),
        "lifecycle": {"preStop": {"sleep": {"seconds": drain_seconds(facts)}}},
        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
    }


def deployment(plan: CapacityPlan, options: DeployOptions, facts: PodFacts) -> dict[str, Any]:
    """The Deployment; without ``spec.replicas`` when an HPA owns the count (``kubectl
    apply`` would otherwise reset the HPA's choice on every apply)."""
    uid, gid = (int(x) for x in HARDENED_USER.split(":"))
    spec: dict[str, Any] = {}
    if options.hpa is None:
        spec["replicas"] = plan.replicas
    spec["selector"] = _selector(options.name)
    # Surge, never below N: a rollout must not refuse sessions the pool promised.
    spec["strategy"] = {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
    }
    spec["template"] = {
        "metadata": {"labels": _labels(options.name, facts)},
        "spec": {
            "automountServiceAccountToken": False,
            "enableServiceLinks": False,
            "terminationGracePeriodSeconds": drain_seconds(facts) + SHUTDOWN_MARGIN_S,
            "securityContext": {
                "runAsNonRoot": True,
                "runAsUser": uid,
                "runAsGroup": gid,
                "fsGroup": gid,
                "seccompProfile": {"type": "RuntimeDefault"},
            },
            "containers": [_container(plan, options, facts)],
            "volumes": [{"name": "tmp", "emptyDir": {"sizeLimit": f"{facts.disk_mb}Mi"}}],
        },
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _metadata(options, facts),
        "spec": spec,
    }


def service(options: DeployOptions, facts: PodFacts) -> dict[str, Any]:
    """ClusterIP, port 80 -> the container's ``http`` port: ``http://NAME.NAMESPACE.svc``."""
    port = {"name": PORT_NAME, "port": 80, "targetPort": PORT_NAME, "protocol": "TCP"}
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _metadata(options, facts),
        "spec": {
            "type": "ClusterIP",
            "selector": {"app.kubernetes.io/name": options.name},
            "ports": [port],
        },
    }


def disruption_budget(options: DeployOptions, facts: PodFacts) -> dict[str, Any]:
    """At most one pod evicted at a time by a node drain."""
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": _metadata(options, facts),
        "spec": {"maxUnavailable": 1, "selector": _selector(options.name)},
    }


def autoscaler(options: DeployOptions, facts: PodFacts) -> dict[str, Any]:
    """CPU-based HPA; scale-down waits at least the drain and removes one pod a minute."""
    low, high = options.hpa or (1, 1)
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": _metadata(options, facts),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": options.name},
            "minReplicas": low,
            "maxReplicas": high,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": HPA_CPU_PERCENT},
                    },
                }
            ],
            "behavior": {
                "scaleDown": {
                    "stabilizationWindowSeconds": max(300, drain_seconds(facts)),
                    "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}],
                }
            },
        },
    }


def ingress(options: DeployOptions, facts: PodFacts) -> dict[str, Any]:
    """An ingress-nginx Ingress for ``options.ingress_host`` with WebSocket timeouts."""
    timeout = str(max(INGRESS_TIMEOUT_S, drain_seconds(facts)))
    annotations = {
        "nginx.ingress.kubernetes.io/proxy-read-timeout": timeout,
        "nginx.ingress.kubernetes.io/proxy-send-timeout": timeout,
    }
    backend = {"service": {"name": options.name, "port": {"name": PORT_NAME}}}
    path = {"path": "/", "pathType": "Prefix", "backend": backend}
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": _metadata(options, facts, annotations=annotations),
        "spec": {
            "ingressClassName": "nginx",
            "rules": [{"host": options.ingress_host, "http": {"paths": [path]}}],
        },
    }


def deny_egress(options: DeployOptions, facts: PodFacts) -> dict[str, Any]:
    """No egress at all (``network.mode: no-network``); ingress stays open to the Service."""
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": _metadata(options, facts),
        "spec": {"podSelector": _selector(options.name), "policyTypes": ["Egress"], "egress": []},
    }


def build_manifests(
    env: EnvDir, plan: CapacityPlan, options: DeployOptions
) -> list[dict[str, Any]]:
    """Every object of the deployment, in apply order.

    Args:
        env: the environment directory (its manifest is read).
        plan: the capacity plan (N replicas, C sessions each).
        options: image, name, namespace, HPA, Ingress, variables.

    Raises:
        SpecError: no valid ``openenv.yaml``.
        UsageError: an option the API server would reject (:func:`check_options`).
    """
    check_options(options)
    facts = pod_facts(env)
    docs = [
        deployment(plan, options, facts),
        service(options, facts),
        disruption_budget(options, facts),
    ]
    if options.hpa is not None:
        docs.append(autoscaler(options, facts))
    if options.ingress_host is not None:
        docs.append(ingress(options, facts))
    if facts.network_mode == "no-network":
        docs.append(deny_egress(options, facts))
    return docs


def dump_manifests(docs: list[dict[str, Any]], header: str = "") -> str:
    """``docs`` as one multi-document YAML text (``---`` between documents).

    Strings that a YAML 1.1 reader would take for something else (``yes``, ``on``, ``1:20``,
    ``0o17``) are quoted: Kubernetes reads manifests with a YAML 1.1 parser while ruamel
    writes YAML 1.2, so an environment named ``on`` would otherwise become ``true``.

    Args:
        docs: the objects. header: comment lines put before the first document.
    """
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.width = 4096
    yaml.Representer = _quoting_representer()
    stream = io.StringIO()
    stream.write(header)
    yaml.dump_all(docs, stream)
    return stream.getvalue()


def _quoting_representer() -> type:
    string = "tag:yaml.org,2002:str"
    readers = (VersionedResolver(version=(1, 1)), VersionedResolver(version=(1, 2)))

    class _Representer(SafeRepresenter):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)
            # Kubernetes' own order (apiVersion, kind, metadata, spec; name first), as built.
            self.sort_base_mapping_type_on_output = False

        def represent_str(self, data: str) -> ScalarNode:
            ambiguous = any(r.resolve(ScalarNode, data, (True, False)) != string for r in readers)
            return self.represent_scalar(string, data, style="'" if ambiguous else None)

    _Representer.add_representer(str, _Representer.represent_str)
    return _Representer
