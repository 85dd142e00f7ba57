"""envkit.safe_yaml: untrusted YAML parses in bounded time and memory, and every refusal is a
YamlLimitError with a line when one is known (alias bombs, deep nesting, duplicate keys, lone
surrogates, values the loader cannot build), never a traceback."""

from __future__ import annotations

import json
import time

import pytest

from envkit.safe_yaml import MAX_DEPTH, MAX_NODES, YamlLimitError, check_tree, load_bounded

pytestmark = pytest.mark.timeout(30)


def _bomb(levels: int) -> str:
    """A "billion laughs" document: 9**levels strings after alias expansion, a few hundred
    bytes of text."""
    names = "abcdefghijk"
    lines = [f"{names[0]}: &{names[0]} [" + ", ".join(['"lol"'] * 9) + "]"]
    for i in range(1, levels):
        prev = names[i - 1]
        lines.append(f"{names[i]}: &{names[i]} [" + ", ".join([f"*{prev}"] * 9) + "]")
    lines.append(f"variables: *{names[levels - 1]}")
    return "\n".join(lines) + "\n"


def _nested_lists(depth: int) -> object:
    value: object = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def _block_mapping(depth: int) -> str:
    return "".join("  " * i + "k:\n" for i in range(depth)) + "  " * depth + "v\n"


# -- what loads ---------------------------------------------------------------------------------


def test_a_manifest_loads_with_positions() -> None:
    data = load_bounded("name: echo\nport: 8000\nvalidation:\n  seeds: [0, 1, 2]\n")
    assert data == {"name": "echo", "port": 8000, "validation": {"seeds": [0, 1, 2]}}
    assert data.lc.key("validation") == (2, 0)  # ruamel's round-trip loader keeps 0-based marks
    assert data["validation"].lc.key("seeds") == (3, 2)


def test_empty_text_is_none() -> None:
    assert load_bounded("") is None
    assert load_bounded("# only a comment\n") is None


def test_non_string_keys_load_as_their_values() -> None:
    data = load_bounded("1: int\nnull: none\n2.5: float\n? [1, 2]\n: seq\n")
    assert data[1] == "int" and data[None] == "none" and data[2.5] == "float"
    assert data[(1, 2)] == "seq"  # a sequence key becomes a tuple


def test_merge_keys_and_small_aliases_are_fine() -> None:
    data = load_bounded("base: &b {x: 1}\nchild:\n  <<: *b\n  y: 2\nsame: *b\n")
    assert data["child"] == {"x": 1, "y": 2}
    assert data["same"] == {"x": 1}


def test_brackets_inside_strings_and_comments_are_not_nesting() -> None:
    text = f"a: \"{'[' * 500}\"\nb: '{'{' * 500}'\n# {'[' * 500}\n"
    assert load_bounded(text)["a"] == "[" * 500


def test_flow_nesting_at_the_limit_loads() -> None:
    data = load_bounded("b: " + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "\n")
    depth, node = 0, data["b"]
    while node:
        node, depth = node[0], depth + 1
    assert depth == MAX_DEPTH - 1  # the innermost list is empty


# -- what is refused ---------------------------------------------------------------------------


@pytest.mark.parametrize("levels", [5, 9])
def test_alias_bomb_is_refused_fast_with_its_line(levels: int) -> None:
    text = _bomb(levels)
    assert len(text) < 1000
    t0 = time.monotonic()
    with pytest.raises(YamlLimitError) as info:
        load_bounded(text)
    assert time.monotonic() - t0 < 5  # 9**9 strings would take minutes and gigabytes
    assert f"more than {MAX_NODES} values (aliases included)" in info.value.message
    assert "alias bomb" in info.value.message
    assert info.value.line is not None and 1 <= info.value.line <= levels + 1


def test_deep_flow_nesting_is_refused_before_parsing_with_its_line() -> None:
    text = "a: 1\nb: 2\nc: " + "[" * 5000 + "]" * 5000 + "\n"
    t0 = time.monotonic()
    with pytest.raises(YamlLimitError) as info:
        load_bounded(text)
    assert time.monotonic() - t0 < 2
    assert info.value.message == f"values are nested more than {MAX_DEPTH} levels deep"
    assert info.value.line == 3


def test_one_level_past_the_flow_limit_is_refused() -> None:
    with pytest.raises(YamlLimitError, match="nested more than"):
        load_bounded("b: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n")


def test_deep_block_nesting_is_refused_with_a_line() -> None:
    load_bounded(_block_mapping(MAX_DEPTH - 4))
    with pytest.raises(YamlLimitError) as info:
        load_bounded(_block_mapping(MAX_DEPTH + 6))
    assert "nested more than" in info.value.message
    assert info.value.line is not None and info.value.line > MAX_DEPTH // 2


def test_duplicate_keys_are_refused_at_the_second_one() -> None:
    with pytest.raises(YamlLimitError) as info:
        load_bounded("name: a\nport: 1\nname: b\n")
    assert 'duplicate key "name"' in info.value.message
    assert (info.value.line, info.value.column) == (3, 1)


def test_keys_equal_in_python_are_duplicates() -> None:
    # 1 == True in Python, so `1:` and `true:` are the same mapping key.
    with pytest.raises(YamlLimitError, match="duplicate key"):
        load_bounded("1: a\ntrue: b\n")


def test_syntax_error_has_line_and_column() -> None:
    with pytest.raises(YamlLimitError) as info:
        load_bounded("a: [1, 2\nb: 3\n")
    assert (info.value.line, info.value.column) == (2, 2)
    assert "expected ',' or ']'" in info.value.message


def test_tab_indentation_and_undefined_alias_are_located() -> None:
    with pytest.raises(YamlLimitError) as tab:
        load_bounded("a:\n\tb: 1\n")
    assert tab.value.line == 2
    with pytest.raises(YamlLimitError) as alias:
        load_bounded("x: 1\na: *nope\n")
    assert "undefined alias 'nope'" in alias.value.message and alias.value.line == 2


def test_a_second_document_is_refused() -> None:
    with pytest.raises(YamlLimitError, match="another document"):
        load_bounded("a: 1\n---\nb: 2\n")


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("version: !!int '0x'\n", "IndexError"),
        ("extra: " + "1" * 4301 + "\n", "ValueError"),
    ],
)
def test_values_the_loader_cannot_build_are_refused(text: str, kind: str) -> None:
    with pytest.raises(YamlLimitError) as info:
        load_bounded(text)
    assert info.value.message.startswith(f"a value cannot be read ({kind}: ")
    assert len(info.value.message) < 260  # the exception text is cut at 200 characters


def test_an_alias_to_a_collection_as_a_key_is_refused_not_crashed() -> None:
    with pytest.raises(YamlLimitError, match="unhashable"):
        load_bounded("a: &a [1, 2]\n? [*a, *a]\n: x\n")


@pytest.mark.parametrize(
    "text",
    [
        'name: "\\ud800"\n',
        'a: 1\nb: 2\nname: "\\udfff"\n',
        '"\\udc00": key\n',
        'list: [ok, "\\ud83d"]\n',
    ],
)
def test_a_lone_surrogate_is_refused_with_the_line_of_its_escape(text: str) -> None:
    with pytest.raises(YamlLimitError) as info:
        load_bounded(text)
    assert "lone surrogate" in info.value.message
    assert info.value.line == text.count("\n", 0, text.index("\\u")) + 1
    info.value.message.encode("utf-8")  # the message itself is printable


def test_characters_beyond_the_bmp_are_valid_text() -> None:
    assert load_bounded('a: "\\U0001F600"\nb: 😀\n') == {"a": "😀", "b": "😀"}


@pytest.mark.parametrize("text", ['? {k: "\\ud800"}\n: x\n', 's: !!set {"\\ud800"}\n'])
def test_a_lone_surrogate_inside_a_mapping_key_or_a_set_is_refused(text: str) -> None:
    with pytest.raises(YamlLimitError, match="lone surrogate"):
        load_bounded(text)


# -- check_tree on plain Python values ---------------------------------------------------------


def test_node_limit_is_exact() -> None:
    check_tree([0] * (MAX_NODES - 1))  # the list plus its items: MAX_NODES values
    with pytest.raises(YamlLimitError, match=f"more than {MAX_NODES} values"):
        check_tree([0] * MAX_NODES)


def test_node_limit_counts_keys_and_values() -> None:
    check_tree({i: i for i in range((MAX_NODES - 1) // 2)})
    with pytest.raises(YamlLimitError):
        check_tree({i: i for i in range(MAX_NODES // 2)})


def test_shared_references_count_every_time_they_are_reached() -> None:
    inner = list(range(200))
    check_tree([inner] * 10)  # ~2 000 values
    with pytest.raises(YamlLimitError):
        check_tree([inner] * 200)  # ~40 000 values, one list in memory


def test_depth_limit_is_exact() -> None:
    check_tree(_nested_lists(MAX_DEPTH))
    with pytest.raises(YamlLimitError) as info:
        check_tree(_nested_lists(MAX_DEPTH + 1))
    assert info.value.message == f"values are nested more than {MAX_DEPTH} levels deep"
    assert info.value.line is None  # plain values carry no positions


def test_check_tree_walks_tuples_sets_and_keys_for_surrogates() -> None:
    for value in (("\ud800",), {"\ud800"}, {"\ud800": 1}, {"k": ["\udfff"]}):
        with pytest.raises(YamlLimitError, match="lone surrogate"):
            check_tree(value)


def test_check_tree_accepts_plain_scalars() -> None:
    for value in (None, 1, 1.5, True, "text", b"\xff"):
        check_tree(value)


# -- YamlLimitError ----------------------------------------------------------------------------


def test_error_message_with_a_surrogate_is_made_printable() -> None:
    err = YamlLimitError("bad \ud800 value", 3, 4)
    assert err.message == "bad \\ud800 value"
    assert str(err) == err.message
    assert (err.line, err.column) == (3, 4)
    assert isinstance(err, ValueError)
    json.dumps(err.message, ensure_ascii=False).encode("utf-8")
