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
        ("  spaced  ", "spaced", "spaced", "Spaced"),
    ],
)
def test_spellings(raw, package, space, class_prefix):
    names = normalise_name(raw)
    assert (names.package, names.space, names.class_prefix) == (package, space, class_prefix)
    assert names.raw == raw.strip()


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
    ],
)
def test_refusals(raw, reason):
    with pytest.raises(UsageError) as exc:
        normalise_name(raw)
    assert reason in exc.value.message
    assert exc.value.hint  # every refusal says what to do instead
