"""`envkit deploy k8s`: manifests of every built-in template pass kubernetes-validate --strict
offline (Kubernetes 1.30's schemas), one template is pinned by a golden file, and the pod is
what the hardened lane runs: probes, drain, security context, sizes, capacity.

The golden file lives in tests/scale/golden/; regenerate with ENVKIT_UPDATE_SNAPSHOTS=1.
Only the last test talks to a cluster, and only when KUBECONFIG is set.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from envkit.catalog import list_templates
from envkit.scaffold import init_project
from envkit.scale.k8s import MIN_KUBERNETES

GOLDEN = Path(__file__).parent / "golden"
IMAGE = "registry.example.test/envs/guess-env:0.1.0"
FULL = ("--replicas", "2", "--hpa", "2:4", "--ingress", "env.example.test")
TEMPLATES = [t.name for t in list_templates()]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every built-in template rendered once (`envkit init --no-lock`: no venv needed)."""
    parent = tmp_path_factory.mktemp("k8s")
    return {
        t: init_project(f"{t}-env", template=t, output_dir=parent, lock=False).path
        for t in TEMPLATES
    }


def _deploy(cli, env: Path, *args: str) -> list[dict[str, Any]]:
    result = cli("deploy", "k8s", env, "--image", IMAGE, *args)
    assert result.exit_code == 0, result.output
    # PyYAML reads YAML 1.1, as kubectl and the kubernetes-validate CLI do.
    return [d for d in yaml.safe_load_all(result.stdout) if d]


def _by_kind(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {d["kind"]: d for d in docs}


def _validate_strict(docs: list[dict[str, Any]]) -> None:
    """Every object against the pinned version's strict schemas. ``validate`` raises
    SchemaNotFoundError for an unknown kind/apiVersion, which the CLI only warns about."""
    import kubernetes_validate

    for doc in docs:
        kubernetes_validate.validate(doc, f"{MIN_KUBERNETES}.0", strict=True)


def test_every_builtin_template_is_covered() -> None:
    assert {"echo", "rlvr", "guess", "tools", "code", "gymnasium"} <= set(TEMPLATES)


@pytest.mark.parametrize("template", TEMPLATES)
def test_every_template_validates_strictly(cli, rendered: dict[str, Path], template: str) -> None:
    docs = _deploy(cli, rendered[template], *FULL)
    kinds = [d["kind"] for d in docs]
    assert kinds[:5] == [
        "Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler", "Ingress",
    ]  # fmt: skip
    _validate_strict(docs)


def test_strict_validation_catches_an_unknown_field(cli, rendered: dict[str, Path]) -> None:
    import kubernetes_validate

    docs = _deploy(cli, rendered["guess"], "--replicas", "2")
    docs[0]["spec"]["template"]["spec"]["containers"][0]["probe"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        _validate_strict(docs)


def test_golden_guess_manifests(cli, rendered: dict[str, Path]) -> None:
    result = cli("deploy", "k8s", rendered["guess"], "--image", IMAGE, *FULL)
    assert result.exit_code == 0, result.output
    path = GOLDEN / "guess-k8s.yaml"
    if os.environ.get("ENVKIT_UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(result.stdout)
    assert path.is_file(), f"missing golden file {path}; run with ENVKIT_UPDATE_SNAPSHOTS=1"
    assert result.stdout == path.read_text()


def test_the_pod_is_hardened_probed_sized_and_drained(cli, rendered: dict[str, Path]) -> None:
    objects = _by_kind(_deploy(cli, rendered["guess"], "--replicas", "3"))
    deployment = objects["Deployment"]
    assert deployment["spec"]["replicas"] == 3
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == 65532
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "privileged": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    assert container["volumeMounts"] == [{"name": "tmp", "mountPath": "/tmp"}]
    assert pod["volumes"][0]["emptyDir"] == {"sizeLimit": "1024Mi"}
    # guess declares cpu 1, memory_mb 1024, disk_mb 1024, episode_timeout_s 60, port 8000
    size = {"cpu": "1", "memory": "1024Mi", "ephemeral-storage": "1024Mi"}
    assert container["resources"] == {"requests": size, "limits": size}
    assert container["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]
    assert {"name": "MAX_CONCURRENT_ENVS", "value": "16"} in container["env"]
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert container[probe]["httpGet"] == {"path": "/health", "port": "http"}
    live = container["livenessProbe"]
    assert live["periodSeconds"] * live["failureThreshold"] >= 120
    assert container["lifecycle"]["preStop"] == {"sleep": {"seconds": 60}}
    assert pod["terminationGracePeriodSeconds"] >= 60 + 1
    assert objects["Service"]["spec"]["ports"][0]["port"] == 80
    assert objects["PodDisruptionBudget"]["spec"]["maxUnavailable"] == 1
    # guess declares network.mode no-network: egress is denied like the lane's --network none
    assert objects["NetworkPolicy"]["spec"]["egress"] == []


def test_undeclared_resources_take_the_lane_defaults(cli, rendered, copy_env) -> None:
    env = copy_env(rendered["echo"])
    manifest = env / "openenv.yaml"
    text = manifest.read_text()
    head, _, tail = text.partition("\nvalidation:\n")
    manifest.write_text(head + "\n" + tail[tail.index("\nenvkit:") :])
    docs = _deploy(cli, env, "--replicas", "2")
    objects = _by_kind(docs)
    pod = objects["Deployment"]["spec"]["template"]["spec"]
    # no episode_timeout_s: a 300 s drain and 30 s for uvicorn's shutdown
    assert pod["containers"][0]["lifecycle"]["preStop"]["sleep"]["seconds"] == 300
    assert pod["terminationGracePeriodSeconds"] == 330
    assert pod["containers"][0]["resources"]["limits"]["memory"] == "1024Mi"
    assert "NetworkPolicy" not in objects
    _validate_strict(docs)


def test_sessions_and_an_override_size_the_pool(cli, rendered: dict[str, Path]) -> None:
    result = cli(
        "deploy", "k8s", rendered["guess"], "--image", IMAGE, "--sessions", "64",
        "-e", "MAX_CONCURRENT_ENVS=8", "-e", "LOG_LEVEL=debug",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    # ceil(64 x 1.1 / 8) = 9, printed as `envkit capacity` prints it
    assert "9 replicas x 8 sessions (MAX_CONCURRENT_ENVS) = 72 concurrent sessions" in result.stderr
    assert "--headroom 0.25" in result.stderr  # kube-proxy is not least-connections
    assert "ENV_URL=http://guess-env.NAMESPACE.svc" in result.stderr
    deployment = _by_kind(list(yaml.safe_load_all(result.stdout)))["Deployment"]
    assert deployment["spec"]["replicas"] == 9
    env = deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "MAX_CONCURRENT_ENVS", "value": "8"} in env
    assert {"name": "LOG_LEVEL", "value": "debug"} in env


def test_the_hpa_owns_the_count_and_must_hold_the_sessions(cli, rendered) -> None:
    env = rendered["guess"]
    docs = _deploy(cli, env, "--sessions", "64", "--hpa", "2:8")  # N = 5
    objects = _by_kind(docs)
    assert "replicas" not in objects["Deployment"]["spec"]
    hpa = objects["HorizontalPodAutoscaler"]["spec"]
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (2, 8)
    assert hpa["metrics"][0]["resource"]["name"] == "cpu"
    warned = cli("deploy", "k8s", env, "--image", IMAGE, "--sessions", "64", "--hpa", "2:8")
    assert "--hpa 5:8" in warned.stderr
    too_small = cli("deploy", "k8s", env, "--image", IMAGE, "--sessions", "64", "--hpa", "2:4")
    assert too_small.exit_code == 2
    assert "needs 5 replicas" in too_small.output
    bad = cli("deploy", "k8s", env, "--image", IMAGE, "--hpa", "4:2")
    assert bad.exit_code == 2 and "MIN:MAX" in bad.output


def test_the_ingress_keeps_websockets_for_an_hour(cli, rendered: dict[str, Path]) -> None:
    ingress = _by_kind(_deploy(cli, rendered["tools"], *FULL))["Ingress"]
    notes = ingress["metadata"]["annotations"]
    for key in ("proxy-read-timeout", "proxy-send-timeout"):
        assert int(notes[f"nginx.ingress.kubernetes.io/{key}"]) >= 3600
    assert ingress["spec"]["rules"][0]["host"] == "env.example.test"


def test_names_that_yaml_1_1_would_retype_stay_strings(cli, rendered: dict[str, Path]) -> None:
    docs = _deploy(cli, rendered["guess"], "--replicas", "1", "--name", "on", "--namespace", "no")
    assert {d["metadata"]["name"] for d in docs} == {"on"}
    assert {d["metadata"]["namespace"] for d in docs} == {"no"}
    _validate_strict(docs)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--replicas", "2", "--name", "Guess_Env"), "is not a Kubernetes name"),
        (("--replicas", "2", "--ingress", "not a host"), "is not a host name"),
        (("--replicas", "2", "--sessions", "4"), "exactly one"),
        (("--replicas", "2", "--image", "two words"), "is not an image reference"),
    ],
)
def test_bad_options_exit_2(cli, rendered, args: tuple[str, ...], message: str) -> None:
    result = cli("deploy", "k8s", rendered["guess"], "--image", IMAGE, *args)
    assert result.exit_code == 2
    assert message in result.output


def test_the_image_is_required(cli, rendered: dict[str, Path]) -> None:
    result = cli("deploy", "k8s", rendered["guess"], "--replicas", "2")
    assert result.exit_code == 2
    assert "needs --image REF" in result.output


def test_out_replaces_one_file_atomically(cli, rendered: dict[str, Path], tmp_path: Path) -> None:
    env = rendered["guess"]
    out = tmp_path / "deploy"
    first = cli("deploy", "k8s", env, "--image", IMAGE, *FULL, "--out", out)
    assert first.exit_code == 0, first.output
    assert first.stdout == ""
    assert [p.name for p in out.iterdir()] == ["guess-env.yaml"]
    second = cli("deploy", "k8s", env, "--image", IMAGE, "--replicas", "3", "--out", out)
    assert second.exit_code == 0, second.output
    kinds = {d["kind"] for d in yaml.safe_load_all((out / "guess-env.yaml").read_text())}
    assert "HorizontalPodAutoscaler" not in kinds and "Ingress" not in kinds
    assert [p.name for p in out.iterdir()] == ["guess-env.yaml"]
    (tmp_path / "file").write_text("")
    clash = cli(
        "deploy", "k8s", env, "--image", IMAGE, "--replicas", "3", "--out", tmp_path / "file"
    )
    assert clash.exit_code == 2 and "is not a directory" in clash.output


def test_apply_without_kubectl_is_a_clear_error(cli, rendered, tmp_path: Path) -> None:
    result = cli(
        "deploy", "k8s", rendered["guess"], "--image", IMAGE, "--replicas", "2", "--apply",
        env={"PATH": str(tmp_path)},
    )  # fmt: skip
    assert result.exit_code == 2
    assert "--apply needs kubectl" in result.output


def test_apply_pipes_the_manifests_to_kubectl(cli, rendered, tmp_path: Path) -> None:
    # No cluster can run here: a stand-in kubectl records what envkit runs.
    log = tmp_path / "kubectl.log"
    kubectl = tmp_path / "kubectl"
    kubectl.write_text(f'#!/bin/sh\necho "$@" > {log}\ncat >> {log}\nexit ${{KUBECTL_RC:-0}}\n')
    kubectl.chmod(kubectl.stat().st_mode | stat.S_IXUSR)
    path = f"{tmp_path}:{os.environ['PATH']}"
    args = ("deploy", "k8s", rendered["guess"], "--image", IMAGE, "--replicas", "2", "--apply")
    result = cli(*args, env={"PATH": path})
    assert result.exit_code == 0, result.output
    command, _, manifests = log.read_text().partition("\n")
    assert command == "apply -f -"
    assert [d["kind"] for d in yaml.safe_load_all(manifests)][:2] == ["Deployment", "Service"]
    failed = cli(*args, env={"PATH": path, "KUBECTL_RC": "1"})
    assert failed.exit_code == 2 and "`kubectl apply` exited with 1" in failed.output


def test_deploy_lists_its_targets(cli) -> None:
    result = cli("deploy", "--help")
    assert result.exit_code == 0
    assert "k8s" in result.stdout


@pytest.mark.skipif(not os.environ.get("KUBECONFIG"), reason="needs a cluster (KUBECONFIG)")
def test_a_real_api_server_accepts_the_manifests(cli, rendered, tmp_path: Path) -> None:
    kubectl = shutil.which("kubectl")
    assert kubectl, "KUBECONFIG is set but kubectl is not on PATH"
    result = cli("deploy", "k8s", rendered["guess"], "--image", IMAGE, *FULL, "--out", tmp_path)
    assert result.exit_code == 0, result.output
    done = subprocess.run(
        [kubectl, "apply", "--dry-run=server", "-f", str(tmp_path / "guess-env.yaml")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    "image, local",
    [
        ("guess-env:0.1.0", True),
        ("me/guess-env", True),
        ("ghcr.io/me/guess-env:0.1.0", False),
        ("localhost/guess-env:1", False),
        ("127.0.0.1:5000/guess-env", False),
    ],
)
def test_a_local_only_image_reference_is_told(cli, rendered, image: str, local: bool) -> None:
    result = cli("deploy", "k8s", rendered["guess"], "--image", image, "--replicas", "2")
    assert result.exit_code == 0, result.output
    said = f"--image {image} names no registry" in result.stderr
    assert said is local, result.stderr
    if local:
        assert f"kind load docker-image {image}" in result.stderr
