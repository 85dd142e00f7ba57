"""Name normalisation: every spelling from one user-given name, refusals with reasons."""

import pytest

from envkit.errors import UsageError
from envkit.names import normalise_name


@pytest.mark.parametrize(
    ("raw", "package", "space", "class_prefix"),
    [
        ("my-env", "my_env", "my-env", "MyEnv"),
        ("my_env", "my_env", "my-env", "MyEnv"),
        ("MyEnv", "my_env", "my-env", "MyEnv"),
        ("wordle2", "wordle2", "wordle2", "Wordle2"),
        ("a--b__c", "a_b_c", "a-b-c", "ABC"),
    ],
)
def test_spellings(raw, package, space, class_prefix):
    names = normalise_name(raw)
    assert (names.package, names.space, names.class_prefix) == (package, space, class_prefix)
    assert names.raw == raw


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("", "empty"),
        ("../x", "is a path"),
        ("/abs/env", "is a path"),
        ("a/b", "is a path"),
        (".hidden", "is a path"),
        ("~home", "is a path"),
        ("1env", "must start with a letter"),
        ("my env", "characters other than"),
        ("envé", "characters other than"),
        ("class", "Python keyword"),
        ("match", "Python keyword"),
        ("server", "shadow a module"),
        ("Models", "shadow a module"),
        ("x" * 65, "limited to 64"),
        ("  spaced  ", "white space"),
        ("spaced ", "white space"),
        ("CON", "device name"),
        ("nul", "device name"),
        ("Com1", "device name"),
        ("LPT9", "device name"),
        ("os", "standard library"),
        ("json", "standard library"),
        ("typing", "standard library"),
        ("Asyncio", "standard library"),
        ("fastapi", "depends on"),
        ("pydantic", "depends on"),
        ("uvicorn", "depends on"),
        ("openenv-core", "depends on"),
    ],
)
def test_refusals(raw, reason):
    with pytest.raises(UsageError) as exc:
        normalise_name(raw)
    assert reason in exc.value.message
    assert exc.value.hint  # every refusal says what to do instead


# YAML 1.1 readers (PyYAML) read these unquoted as booleans or null; YAML 1.2 (ruamel) some of
# them. Issue #12, defect 6.
YAML_LOOKALIKES = ["True", "False", "yes", "No", "on", "OFF", "null", "Null", "y", "n"]


@pytest.mark.parametrize("raw", YAML_LOOKALIKES)
def test_yaml_lookalike_names_stay_strings(raw, tmp_path):
    import yaml
    from ruamel.yaml import YAML

    from envkit.scaffold import init_project

    names = normalise_name(raw)
    init_project(raw, output_dir=tmp_path, lock=False, skills=False)
    manifest = (tmp_path / raw / "openenv.yaml").read_text()
    card = (tmp_path / raw / "README.md").read_text().split("---")[1]
    assert yaml.safe_load(manifest)["name"] == names.package
    assert YAML(typ="safe", pure=True).load(manifest)["name"] == names.package
    assert yaml.safe_load(card)["title"] == names.title
    assert YAML(typ="rt").load(card)["title"] == names.title
    v11 = YAML(typ="safe", pure=True)
    v11.version = (1, 1)
    assert v11.load(manifest)["name"] == names.package


def test_every_spelling_of_a_refused_name_says_why():
    with pytest.raises(UsageError) as exc:
        normalise_name("Json")
    assert "`json`" in exc.value.message and "json-env" in exc.value.hint
