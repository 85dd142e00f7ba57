"""The pieces ``evaluate`` is built from, checked without a server: options, the policy plan,
notes, and the names the errors and constants are importable under."""

from __future__ import annotations

import pytest

from envkit.envdir.manifest import EnvSpec
from envkit.errors import UsageError
from envkit.evaluation.factory import PolicyPlan, plan_policy, resolve_key
from envkit.evaluation.options import EVAL_DEFAULT_MAX_STEPS, EvalOptions, Notes


@pytest.fixture
def no_model_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MODEL_NAME", "API_BASE_URL", "HF_TOKEN", "OPENAI_API_KEY", "MY_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("episodes", 0),
        ("group_size", 0),
        ("concurrency", 0),
        ("seed", -1),
        ("max_retries", -1),
        ("episodes", 1.5),
        ("max_steps", 0),
    ],
)
def test_bad_counts_are_usage_errors(field: str, value: object) -> None:
    with pytest.raises(UsageError) as info:
        EvalOptions(**{field: value}).check_counts()  # type: ignore[arg-type]
    assert "--" in info.value.message


def test_default_counts_pass() -> None:
    EvalOptions().check_counts()


def test_notes_keep_order_and_announce_unless_told_not_to() -> None:
    heard: list[str] = []
    notes = Notes(heard.append)
    notes.add("one")
    notes.add("two", announce=False)
    assert notes.items == ["one", "two"]
    assert heard == ["one"]


def test_random_plan_has_no_model_or_key(no_model_env: None) -> None:
    plan = plan_policy(EvalOptions(policy="random", model="m"), None, EnvSpec(), Notes())
    assert plan == PolicyPlan(name="random")


def test_openai_needs_a_model(no_model_env: None) -> None:
    with pytest.raises(UsageError, match="needs a model"):
        plan_policy(EvalOptions(policy="openai"), None, EnvSpec(), Notes())


def test_openai_without_key_notes_it_and_hides_keys(
    no_model_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes = Notes()
    plan = plan_policy(
        EvalOptions(policy="openai", model="m", base_url="http://h/v1/"), None, EnvSpec(), notes
    )
    assert (plan.model, plan.base_url, plan.key, plan.key_env) == ("m", "http://h/v1", None, None)
    assert notes.items and notes.items[0].startswith("No API key")
    monkeypatch.setenv("MY_KEY", "sk-secret")
    plan = plan_policy(
        EvalOptions(policy="openai", model="m", api_key_env="MY_KEY"), None, EnvSpec(), Notes()
    )
    assert (plan.key, plan.key_env) == ("sk-secret", "MY_KEY")
    assert "sk-secret" not in repr(plan)


def test_named_key_variable_must_be_set(no_model_env: None) -> None:
    with pytest.raises(UsageError, match=r"\$MY_KEY is not set"):
        resolve_key("MY_KEY")


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        ("greedy", "unknown policy"),
        ("not a module:x y", "expected module.path:callable"),
        ("oracle", "needs the environment directory"),
    ],
)
def test_bad_policies_are_usage_errors(no_model_env: None, policy: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        plan_policy(EvalOptions(policy=policy), None, EnvSpec(), Notes())


def test_module_callable_plan_runs_it(no_model_env: None) -> None:
    plan = plan_policy(EvalOptions(policy="agents.greedy:policy"), None, EnvSpec(), Notes())
    assert plan.callable_spec == "agents.greedy:policy"
    assert plan.model is None


def test_moved_errors_and_renamed_constant_keep_their_old_names() -> None:
    import envkit.errors
    import envkit.evaluation
    import envkit.policy

    assert envkit.evaluation.EvalAbortedError is envkit.errors.EvalAbortedError
    assert envkit.policy.PolicyError is envkit.errors.PolicyError
    assert issubclass(envkit.errors.PolicyError, envkit.errors.UserError)
    assert EVAL_DEFAULT_MAX_STEPS == envkit.evaluation.DEFAULT_MAX_STEPS == 32
