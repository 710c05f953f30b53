"""`jaxmap diff BASE..HEAD`: a change between two commits of a small git repository
(revision_trees.py), reviewed in each output form, with its errors and its cache."""

from __future__ import annotations

import json
import textwrap
import re
from pathlib import Path

import pytest
from revision_trees import (TESTS, base_files, changed_files, commit, git, make_repo,
                            primitive)
from test_cli import assert_one_line_error

from jaxmap.cli import main

OPS = "jax/_src/lax/ops.py"


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo")


def review(capsys, repo, *argv):
    code = main(["diff", *argv, "--repo", str(repo)])
    out, err = capsys.readouterr()
    return code, out, err


def review_json(capsys, repo, span="HEAD~1..HEAD") -> dict:
    code, out, err = review(capsys, repo, span, "--json")
    assert code == 0, err
    return json.loads(out)


def test_a_change_reviewed_in_full(capsys, repo):
    document = review_json(capsys, repo)
    assert document["base"]["commit"] == git(repo, "rev-parse", "HEAD~1").strip()
    assert document["files"] == ["jax/_src/lax/ops.py", "jax/lax/__init__.py"]
    assert document["primitives"] == {"added": ["tan"], "removed": [], "renamed": []}
    removed, *added = document["rules"]
    assert (removed["primitive"], removed["kind"], removed["change"]) == \
        ("cos", "lowering", "removed")
    assert {(r["primitive"], r["change"]) for r in added} == {("tan", "added")}
    assert len(added) == 5 and all(r["new"][0].startswith(f"{OPS}:") for r in added)
    assert removed["old"][0].startswith(f"{OPS}:") and removed["new"] == []
    reach = {(r["function"], r["change"]): r for r in document["reach"]}
    assert reach.keys() == {("jax.lax.tan", "started"), ("jax.lax.exp", "chain")}
    assert reach["jax.lax.exp", "chain"]["chain"] == \
        ["jax.lax.exp", "jax._src.lax.ops._exp", "exp_p.bind"]
    assert reach["jax.lax.exp", "chain"]["old_chain"] == ["jax.lax.exp", "exp_p.bind"]
    (message,) = document["messages"]
    assert message["change"] == "reworded" and message["new"]["function"].endswith(".sin")
    assert (message["old"]["text"], message["new"]["text"]) == \
        ("sin needs an array, not None", "sin takes an array; got None")
    assert {(g["primitive"], g["what"]) for g in document["gaps"]} == \
        {("tan", "batching"), ("cos", "lowering")}
    assert document["uncovered"] == ["cos", "tan"]


def test_the_work_tree_is_left_as_it_was(capsys, repo):
    (repo / "jax/_src/core.py").write_text("# an edit not committed\n")
    review_json(capsys, repo)
    assert git(repo, "status", "--porcelain") == " M jax/_src/core.py\n"
    assert (repo / "jax/_src/core.py").read_text() == "# an edit not committed\n"


def test_the_reverse_range_reads_as_the_opposite_change(capsys, repo):
    review_json(capsys, repo)
    document = review_json(capsys, repo, "HEAD..HEAD~1")
    assert document["primitives"]["removed"] == ["tan"]
    assert [(r["primitive"], r["change"]) for r in document["rules"]] == \
        [("cos", "added")] + [("tan", "removed")] * 5
    assert {(r["function"], r["change"]) for r in document["reach"]} == \
        {("jax.lax.tan", "stopped"), ("jax.lax.exp", "chain")}


def test_moved_and_retargeted_rules_from_a_warm_cache(capsys, repo):
    review_json(capsys, repo)  # both ends cached; the next commit starts from HEAD's tree
    ops = changed_files()[OPS]
    ops = ops.replace("mlir.register_lowering(neg_p, _neg_lowering)\n", "")
    ops = ops.replace("mlir.register_lowering(sin_p, _sin_lowering)",
                      "mlir.register_lowering(sin_p, _sin_batcher)")
    moved = "from jax._src.interpreters import mlir\nfrom jax._src.lax.ops import " \
            "_neg_lowering, neg_p\n\nmlir.register_lowering(neg_p, _neg_lowering)\n"
    commit(repo, {OPS: ops, "jax/_src/lax/neg_lowering.py": moved}, "move")
    rules = {(r["primitive"], r["change"]): r for r in review_json(capsys, repo)["rules"]}
    assert rules.keys() == {("neg", "moved"), ("sin", "retargeted")}
    assert rules["neg", "moved"]["new"][0].startswith("jax/_src/lax/neg_lowering.py:4")
    assert rules["sin", "retargeted"]["new"][0].endswith("(_sin_batcher)")


@pytest.mark.parametrize("renamed", ["_sin_jvp_x", "_sin_jvp_y"])
def test_renaming_any_jvp_function_of_defjvp_retargets_its_rule(capsys, repo, renamed):
    """`ad.defjvp` takes one JVP function per operand: each is the rule's."""
    jvps = "\n\ndef _sin_jvp_x(g, x, y):\n  return g\n\n\ndef _sin_jvp_y(g, x, y):\n  return g\n"
    ops = changed_files()[OPS].replace("ad.defjvp(sin_p, lambda g, x: g)",
                                       "ad.defjvp(sin_p, _sin_jvp_x, None, _sin_jvp_y)") + jvps
    commit(repo, {OPS: ops}, "sin's jvp: a function per operand")
    commit(repo, {OPS: ops.replace(renamed, "_sin_jvp_renamed")}, f"rename {renamed}")
    rules = review_json(capsys, repo)["rules"]
    assert [(r["primitive"], r["kind"], r["change"]) for r in rules] == \
        [("sin", "jvp", "retargeted")]
    assert rules[0]["old"][0].endswith("(_sin_jvp_x, _sin_jvp_y)")
    assert rules[0]["new"][0].endswith(
        "(_sin_jvp_renamed, _sin_jvp_y)" if renamed == "_sin_jvp_x"
        else "(_sin_jvp_x, _sin_jvp_renamed)")
    _code, out, _err = review(capsys, repo, "HEAD~1..HEAD")
    assert "rules retargeted (1):" in out and "no change to the primitives" not in out


def test_a_public_name_dropped_stops_its_reach(capsys, repo):
    review_json(capsys, repo)
    public = changed_files()["jax/lax/__init__.py"].replace("cos as cos, ", "")
    commit(repo, {"jax/lax/__init__.py": public}, "cos is private now")
    document = review_json(capsys, repo)
    assert [(r["function"], r["primitive"], r["change"]) for r in document["reach"]] == \
        [("jax.lax.cos", "cos", "stopped")]


def test_reach_a_changed_function_returns_to_untouched_code_is_the_change(capsys, repo):
    """`chosen` now returns sin, not neg, and `pick`, which the change did not touch,
    calls what it returns: pick calls other functions than it did, so it is reached,
    and the primitives walked include what it calls now (chosen calls neither)."""
    pick = ("from jax._src.lax.table import chosen\n\n\ndef pick(x):\n"
            "  return chosen()(x)\n")
    public = changed_files()["jax/lax/__init__.py"] + \
        "from jax._src.lax.pick import pick as pick\n"
    commit(repo, {"jax/_src/lax/pick.py": pick, "jax/lax/__init__.py": public,
                  "jax/_src/lax/table.py": _table("neg")},
           "pick through a table")
    commit(repo, {"jax/_src/lax/table.py": _table("sin")}, "the table picks sin")
    reach = {(r["function"], r["primitive"], r["change"]): (r["chain"], r["touched"])
             for r in review_json(capsys, repo)["reach"]}
    assert reach == {
        ("jax.lax.pick", "neg", "stopped"): (["jax.lax.pick", "jax.lax.neg", "neg_p.bind"],
                                             True),
        ("jax.lax.pick", "sin", "started"): (["jax.lax.pick", "jax.lax.sin", "sin_p.bind"],
                                             True)}
    code, out, err = review(capsys, repo, "HEAD~1..HEAD", "--fail-on", "reach")
    assert code == 1 and "reach (2)" in err
    assert "reach changed (2 findings):" in out
    assert "jax.lax.pick started reaching sin: jax.lax.pick -> jax.lax.sin -> sin_p.bind" in out


def _rebound_name(repo):
    """`pick`, in another file, calls through a module-level name that the last commit
    rebinds from neg to sin."""
    pick = ("from jax._src.lax.table import CHOSEN\n\n\ndef pick(x):\n"
            "  return CHOSEN(x)\n")
    public = changed_files()["jax/lax/__init__.py"] + \
        "from jax._src.lax.pick import pick as pick\n"
    table = "from jax._src.lax.ops import {0}\n\nCHOSEN = {0}\n"
    commit(repo, {"jax/_src/lax/pick.py": pick, "jax/lax/__init__.py": public,
                  "jax/_src/lax/table.py": table.format("neg")}, "pick through a name")
    commit(repo, {"jax/_src/lax/table.py": table.format("sin")}, "the name holds sin")


def test_a_call_through_a_rebound_name_is_the_changes(capsys, repo):
    """A call through a module-level name is also a call of that variable, whose
    lines the change edits: the findings are the change's."""
    _rebound_name(repo)
    reach = {(r["function"], r["primitive"], r["change"]): r["touched"]
             for r in review_json(capsys, repo)["reach"]}
    assert reach == {("jax.lax.pick", "neg", "stopped"): True,
                     ("jax.lax.pick", "sin", "started"): True}
    code, out, err = review(capsys, repo, "HEAD~1..HEAD", "--fail-on", "reach")
    assert code == 1 and "reach (2)" in err
    assert "reach changed (2 findings):" in out


def test_reach_through_untouched_code_is_told_apart(capsys, repo, monkeypatch):
    """A finding whose chain steps through no definition the change reaches is listed
    on its own and trips no --fail-on check (on a checkout, mostly where the solve cut
    a cycle elsewhere): here the change is taken to reach no definition (what it
    moved is still walked for primitives)."""
    from jaxmap.commands import reach_touched

    _rebound_name(repo)
    monkeypatch.setattr(reach_touched, "reached", lambda *args: frozenset())
    reach = {(r["function"], r["primitive"], r["change"]): r["touched"]
             for r in review_json(capsys, repo)["reach"]}
    assert reach == {("jax.lax.pick", "neg", "stopped"): False,
                     ("jax.lax.pick", "sin", "started"): False}
    code, out, _err = review(capsys, repo, "HEAD~1..HEAD", "--fail-on", "reach")
    assert code == 0
    assert "reach changed (" not in out  # none: named on the last line with the others
    assert "reach changed" in out.rpartition("nothing in: ")[2].split(", ")
    assert "reach changed through untouched code only (2 findings):" in out
    assert "jax.lax.pick started reaching sin: jax.lax.pick -> jax.lax.sin -> sin_p.bind" in out
    code, out, _err = review(capsys, repo, "HEAD~1..HEAD", "--format", "markdown")
    assert "<summary>Reach through untouched code only (2)</summary>" in out
    assert "<summary>Reach (" not in out


def test_a_changed_chain_counts_only_the_calls_it_does_not_share():
    from jaxmap.commands.reach import _moved_touched

    old = (("f", "g", "core.h", "p_p.bind"), (False, False, True, False))
    new = (("f", "k", "g", "core.h", "p_p.bind"), (False, False, False, True, False))
    assert not _moved_touched(old, new)  # f -> k -> g for f -> g; core.h shared
    assert _moved_touched(old, (new[0], (False, True, False, True, False)))  # k changed
    assert _moved_touched(old, (("f", "core.m", "p_p.bind"), (False, True, False)))


def _table(name: str) -> str:
    return f"from jax._src.lax.ops import {name}\n\n\ndef chosen():\n  return {name}\n"


def test_reach_through_a_changed_file_trips_the_reach_check(capsys, repo):
    document = review_json(capsys, repo)
    assert {r["function"]: r["touched"] for r in document["reach"]} == \
        {"jax.lax.tan": True, "jax.lax.exp": True}
    code, _out, err = review(capsys, repo, "HEAD~1..HEAD", "--fail-on", "reach")
    assert code == 1 and "reach (2)" in err


@pytest.mark.parametrize("variable", ["neg_p", "negative_p"])
def test_a_renamed_primitive_is_no_reach_change(capsys, repo, variable):
    ops = changed_files()[OPS].replace("Primitive('neg')", "Primitive('negative')")
    commit(repo, {OPS: ops.replace("neg_p", variable)}, "neg is negative now")
    document = review_json(capsys, repo)
    assert document["primitives"]["renamed"] == [{"old": "neg", "new": "negative"}]
    assert document["reach"] == []


def test_a_renamed_primitive_trips_the_removed_primitive_check(capsys, repo):
    """Its old name is gone for every user of it, as a removed primitive's is."""
    ops = changed_files()[OPS].replace("Primitive('neg')", "Primitive('negative')")
    commit(repo, {OPS: ops}, "neg is negative now")
    code, out, err = review(capsys, repo, "HEAD~1..HEAD", "--fail-on", "removed-primitive")
    assert "primitives renamed (1): neg -> negative" in out
    assert code == 1 and err == "jaxmap: review fails on removed-primitive (1)\n"


def test_a_test_file_listing_the_operations_it_runs_covers_them(capsys, repo):
    """A parameterised test runs what its module lists (`OPS = [spec(lax.cos)]`), not
    what its own calls reach: the file still tests cos."""
    listing = ("\n\nimport pytest\n\n\ndef spec(op):\n  return op\n\n\n"
               "OPS = [spec(lax.cos)]\n\n\n@pytest.mark.parametrize('op', OPS)\n"
               "def test_op(op):\n  op(1.0)\n")
    commit(repo, {"tests/ops_test.py": TESTS + listing}, "a test of the listed ops")
    ops = changed_files()[OPS] + "\nmlir.register_lowering(cos_p, _cos_lowering)\n"
    commit(repo, {OPS: ops}, "cos is lowered again")
    document = review_json(capsys, repo)
    assert [(r["primitive"], r["change"]) for r in document["rules"]] == [("cos", "added")]
    assert document["tests"] == [{"primitive": "cos", "files": ["tests/ops_test.py"]}]
    assert document["uncovered"] == []


def test_a_change_to_comments_alone_walks_no_reach(capsys, repo, monkeypatch):
    review_json(capsys, repo)  # both ends cached: HEAD's rows are moved, not solved again
    ops = changed_files()[OPS].replace("def neg(x):\n", "# Negation.\n\ndef neg(x):\n")
    commit(repo, {OPS: ops}, "a comment: the lines below move")

    def walked(*_args):
        raise AssertionError("a review of moved lines walked the call graph")

    monkeypatch.setattr("jaxmap.commands.reach.Reach", walked)
    document = review_json(capsys, repo)
    assert document["files"] == [OPS] and document["reach"] == []


def test_three_dots_compare_with_the_merge_base(capsys, repo):
    first = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "side", first)
    commit(repo, {"jax/_src/extra.py": "X = 1\n"}, "side work")
    git(repo, "checkout", "-q", "-")
    document = review_json(capsys, repo, "side...HEAD")
    assert document["base"]["commit"] == first
    assert document["primitives"]["added"] == ["tan"]
    assert "jax/_src/extra.py" not in document["files"]


def test_markdown_is_one_comment_with_links_at_each_side(capsys, repo):
    base, head = (git(repo, "rev-parse", ref).strip() for ref in ("HEAD~1", "HEAD"))
    code, out, _ = review(capsys, repo, "HEAD~1..HEAD", "--format", "markdown",
                          "--link-base", "https://example.com/jax/blob/")
    assert code == 0
    assert out.startswith("<!-- jaxmap review -->\n**jaxmap review** · HEAD~1")
    assert out.count("<details>") == out.count("</details>") == 6
    assert f"](https://example.com/jax/blob/{base}/{OPS}#L" in out  # cos's old lowering
    assert f"](https://example.com/jax/blob/{head}/{OPS}#L" in out  # tan, at HEAD


def test_text_says_each_finding_on_a_line(capsys, repo):
    code, out, _ = review(capsys, repo, "HEAD~1..HEAD")
    assert code == 0
    assert "; primitives added 1, rules changed 6, reach changes 2" in out.splitlines()[0]
    assert "  jax.lax.tan started reaching tan: jax.lax.tan -> tan_p.bind" in out
    assert "lacks a batching rule; 4 of its 4 siblings have one" in out


def test_fail_on_trips_with_a_line_saying_why(capsys, repo):
    code, out, err = review(capsys, repo, "HEAD~1..HEAD", "--fail-on", "removed-rule,uncovered")
    assert code == 1 and out
    assert err == "jaxmap: review fails on removed-rule (1), uncovered (2)\n"
    assert review(capsys, repo, "HEAD~1..HEAD", "--fail-on", "removed-primitive")[0] == 0
    # --json says which checks were asked for and which tripped, as stderr does
    code, out, _err = review(capsys, repo, "HEAD~1..HEAD", "--json",
                             "--fail-on", "removed-rule,removed-primitive")
    assert code == 1 and json.loads(out)["fail_on"] == {
        "checks": ["removed-rule", "removed-primitive"],
        "tripped": [{"check": "removed-rule", "findings": 1}]}
    assert review_json(capsys, repo)["fail_on"] == {"checks": [], "tripped": []}


@pytest.mark.parametrize("argv", [
    ["no-such-ref..HEAD"], ["HEAD~1..HEAD", "--fail-on", "everything"],
    ["HEAD~5..HEAD"], ["HEAD~5", "--format", "markdown"],
    ["-x..HEAD"], ["HEAD~1..HEAD", "--json", "--limit", "1"],
    ["HEAD~1..HEAD", "--link-base", "https://example.com/blob/"],
    ["HEAD~1..HEAD", "--format", "markdown", "--link-base", "not a url"]])
def test_bad_input_is_one_line(capsys, repo, argv):
    assert_one_line_error(*review(capsys, repo, *argv))


def test_json_and_a_format_together_are_one_line(capsys, repo):
    assert_one_line_error(*review(capsys, repo, "HEAD~1..HEAD", "--json", "--format",
                                  "markdown"))


def test_a_directory_outside_git_is_one_line(capsys, tmp_path):
    (tmp_path / "plain").mkdir()
    assert_one_line_error(*review(capsys, tmp_path / "plain", "HEAD~1..HEAD"))


def test_base_files_hold_the_siblings_a_gap_needs():
    assert base_files()[OPS].count("core.Primitive(") == 4


def test_the_readme_documents_every_key(capsys, repo):
    from jaxmap.commands.edited_rules import EditedRule

    document = review_json(capsys, repo)
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    schema = readme.split("`jaxmap diff BASE..HEAD --json` prints ", 1)[1].split("`", 2)[1]
    documented = set(re.findall(r'"(\w+)"', schema))
    keys = set(document) | set(document["primitives"]) | set(document["base"]) \
        | {k for name in ("rules", "reach", "gaps") for k in document[name][0]} \
        | set(document["messages"][0]) | set(document["tests"][0]) \
        | set(document["fail_on"]) | {"check", "findings"} | set(EditedRule._fields)
    assert keys <= documented, keys - documented


class _Messages:
    """An index that holds only messages: (file, line, function, exception, pieces)."""

    def __init__(self, *rows):
        self.rows = [(*row, False) for row in rows]

    def messages(self):
        return self.rows


@pytest.mark.parametrize(("old", "new", "expected"), [
    (("f", "E", ("a needs an array",), 3), ("f", "E", ("a takes an array",), 4),
     ["reworded"]),
    (("f", "E", ("same text",), 3), ("f", "E", ("same text",), 30), []),
    (("f", "E", ("psum takes unreduced inputs, got ",), 3),
     ("g", "E", ("", " takes unreduced inputs, got ",), 9), ["reworded"]),
    (("f", "E", ("psum takes unreduced inputs",), 3), ("g", "E", ("no axis named ",), 9),
     ["added", "removed"]),
    (("f", "E", ("a needs an array",), 3), ("f", "T", ("a needs an array",), 3),
     ["added", "removed"]),
    (("f", "E", ("a needs an array",), 3), ("g", "E", ("a needs an array",), 80), []),
])
def test_messages_pair_as_reworded_by_function_then_by_likeness(old, new, expected):
    from jaxmap.commands.message_diff import compare

    before = _Messages(("m.py", old[3], old[0], old[1], old[2]))
    after = _Messages(("m.py", new[3], new[0], new[1], new[2]))
    assert sorted(c.change for c in compare(before, after, ["m.py"])) == expected


def test_long_chains_show_their_ends():
    from jaxmap.render.review_text import short_chain

    chain = tuple("abcdefghij")
    assert short_chain(chain) == ("a", "b", "c", "d", "…", "i", "j")
    assert short_chain(chain[:7]) == chain[:7]


def test_reach_findings_group_by_primitive_nearest_first():
    from jaxmap.commands.reach import ReachChange
    from jaxmap.render.review_text import shown_groups

    far = ReachChange("p", "jax.far", "started", ("jax.far", "g", "h", "p_p.bind"))
    near = ReachChange("p", "jax.near", "started", ("jax.near", "p_p.bind"))
    other = ReachChange("q", "jax.near", "stopped", ("jax.near", "q_p.bind"))
    assert shown_groups([far, other, near]) == [("p", "started", 2, [near, far]),
                                                ("q", "stopped", 1, [other])]
    many = [near._replace(function=f"jax.f{i}") for i in range(5)]
    assert [(size, len(shown)) for _p, _c, size, shown in shown_groups(many)] == [(5, 3)]


def test_a_bare_clone_reviews_too_and_a_change_without_python_says_so(capsys, repo, tmp_path):
    commit(repo, {"README.md": "reworded\n"}, "docs only")
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    code, out, _ = review(capsys, bare, "HEAD~1..HEAD")
    assert code == 0
    assert out.splitlines()[0].endswith(": 0 Python files changed; no change to the primitives")
    assert review_json(capsys, bare, "HEAD~2..HEAD~1")["primitives"]["added"] == ["tan"]


def test_a_range_without_python_changes_indexes_nothing(capsys, repo, monkeypatch):
    commit(repo, {"README.md": "reworded\n"}, "docs only")

    def indexed(*_args):
        raise AssertionError("a range with no Python change laid or indexed a tree")

    monkeypatch.setattr("jaxmap.revisions.materialise.indexes", indexed)
    for span in ("HEAD..HEAD", "HEAD~1..HEAD"):
        code, out, err = review(capsys, repo, span)
        assert code == 0, err
        assert out.splitlines()[0].endswith(": 0 Python files changed; no change to the "
                                            "primitives")


def test_the_ci_example_runs_the_review_it_posts(capsys, repo):
    workflow = (Path(__file__).parent.parent / "docs/ci/jaxmap-review.yml").read_text()
    command = re.search(r"jaxmap (--quiet diff .*?) > review\.md", workflow, re.S)[1]
    argv = re.sub(r"\$\{\{[^}]*\}\}", "x", command).replace("\\\n", " ").split()
    assert argv[2] == '"origin/x...HEAD"'
    argv = [a.strip('"') for a in argv[:2]] + ["HEAD~1...HEAD"] + [a.strip('"') for a in argv[3:]]
    code = main([*argv, "--repo", str(repo)])
    out, err = capsys.readouterr()
    assert code == 1 and out.startswith("<!-- jaxmap review -->"), err


def test_a_removed_primitive_lists_each_rule_at_base_in_every_form(capsys, repo):
    ops = changed_files()[OPS]
    ops = ops.replace("def exp(x):\n  return _exp(x)\n\n\ndef _exp(x):\n  return exp_p.bind(x)\n",
                      "").replace(primitive("exp"), "")
    public = changed_files()["jax/lax/__init__.py"].replace("exp as exp, ", "")
    commit(repo, {OPS: ops, "jax/lax/__init__.py": public}, "remove exp_p")
    document = review_json(capsys, repo)
    assert document["primitives"]["removed"] == ["exp"]
    removed = [r for r in document["rules"] if r["primitive"] == "exp"]
    assert {r["change"] for r in removed} == {"removed"} and len(removed) == 6
    base_lines = git(repo, "show", f"HEAD~1:{OPS}").splitlines()
    for rule in removed:
        (place,) = rule["old"]
        line = int(place.partition(" ")[0].rpartition(":")[2])
        assert place.startswith(f"{OPS}:") and "exp_p" in base_lines[line - 1]
        assert rule["new"] == []
    assert "exp" not in document["uncovered"]
    _, out, _ = review(capsys, repo, "HEAD~1..HEAD")
    assert "rules removed (6):" in out and "  exp lowering: jax/_src/lax/ops.py:" in out
    base = git(repo, "rev-parse", "HEAD~1").strip()
    _, out, _ = review(capsys, repo, "HEAD~1..HEAD", "--format", "markdown",
                       "--link-base", "https://example.com/blob/")
    rows = [line for line in out.splitlines() if line.startswith("| `exp` |")]
    assert len(rows) == 6 and all(f"(https://example.com/blob/{base}/{OPS}#L" in row
                                  for row in rows)


def test_the_tests_of_a_changed_primitive_come_nearest_first(capsys, repo):
    far = "from jax import lax\n\n\ndef _helper(x):\n  return _inner(x)\n\n\n" \
          "def _inner(x):\n  return lax.cos(x)\n\n\ndef test_far():\n  _helper(1.0)\n"
    near = "from jax import lax\n\n\ndef test_near():\n  lax.cos(1.0)\n"
    names = "from jax._src.lax import ops\n\n\ndef test_names():\n  ops.cos_p.bind(1.0)\n"
    commit(repo, {"tests/a_far_test.py": far, "tests/b_near_test.py": near,
                  "tests/c_names_test.py": names}, "tests of cos")
    ops = changed_files()[OPS].replace("ad.primitive_transposes[cos_p] = _cos_transpose\n", "")
    commit(repo, {OPS: ops}, "cos loses its transpose")
    document = review_json(capsys, repo)
    assert document["tests"] == [{"primitive": "cos", "files": [
        "tests/c_names_test.py", "tests/b_near_test.py", "tests/a_far_test.py"]}]


def test_a_bare_not_implemented_raise_is_no_message(capsys, repo):
    ops = changed_files()[OPS]
    ops = ops.replace("def neg(x):\n", "def neg(x):\n  if x is None:\n    raise NotImplementedError\n")
    ops = ops.replace("def cos(x):\n", "def cos(x):\n  if x is None:\n"
                      "    raise NotImplementedError()  # not yet\n")
    ops = ops.replace("def _exp(x):\n", "def _exp(x):\n  if x is None:\n"
                      "    raise NotImplementedError('exp of None is not implemented')\n")
    commit(repo, {OPS: ops}, "three NotImplementedError raises, one with a message")
    for span, change, side in (("HEAD~1..HEAD", "added", "new"),
                               ("HEAD..HEAD~1", "removed", "old")):
        messages = review_json(capsys, repo, span)["messages"]
        assert [(m["change"], m[side]["text"]) for m in messages] == \
            [(change, "exp of None is not implemented")]


def test_a_docstring_commit_after_the_slots_fill_solves_nothing(capsys, repo, monkeypatch):
    review_json(capsys, repo)  # two slots: the base tree and the change
    ops = changed_files()[OPS].replace("sin takes an array; got None", "sin needs an array")
    ops = ops.replace("def cos(x):\n", 'def cos(x):\n  """Cosine.\n\n  Elementwise."""\n')
    commit(repo, {OPS: ops}, "reworded again, and a docstring")
    review_json(capsys, repo)  # the third slot; the next tree takes the oldest's
    ops = ops.replace("  Elementwise.", "  Elementwise, on any array.\n\n  Exact.")
    commit(repo, {OPS: ops}, "the docstring grows: HEAD's index is BASE's, its rows moved")

    def solved(*_args, **_kwargs):
        raise AssertionError("a docstring's commit solved the call graph again")

    monkeypatch.setattr("jaxmap.flow.graph.call_graph", solved)
    assert review_json(capsys, repo)["files"] == [OPS]


def test_a_reworded_message_shows_both_places_and_where_its_texts_differ(capsys, repo):
    """The text and Markdown name BASE's line and HEAD's where the raise moved, and a
    long message's two texts are cut where their first difference still shows."""
    start = "sin needs an array, not None; " + "pass a jax.Array or a numpy array " * 3
    ops = changed_files()[OPS].replace("sin takes an array; got None", start + "(1).")
    commit(repo, {OPS: ops}, "a long message")
    ops = ops.replace("def sin(x):\n", "def sin(x):\n  del_ = None\n")
    commit(repo, {OPS: ops.replace(start + "(1).", start + "(2).")}, "reworded at its end")
    _, out, _ = review(capsys, repo, "HEAD~1..HEAD")
    line = next(line for line in out.splitlines() if line.startswith("  reworded "))
    old = next(m for m in review_json(capsys, repo)["messages"])["old"]["line"]
    assert line.startswith(f"  reworded {OPS}:{old} -> {old + 1} (jax._src.lax.ops.sin)")
    assert line.endswith(
        "ValueError: '…a jax.Array or a numpy array (1).' -> '…a jax.Array or a numpy array (2).'")
    _, out, _ = review(capsys, repo, "HEAD~1..HEAD", "--format", "markdown")
    assert f"reworded at `{OPS}:{old}` → `{OPS}:{old + 1}` (ValueError)" in out
    assert "(2).`" in out


def _code_span(markdown: str) -> str:
    """The text of the code span `markdown` is, read as CommonMark reads one: the
    opening run of backticks closes at the next run as long, and one space is dropped
    from each side where both sides have one (and the text is not all spaces)."""
    fence = re.match(r"`+", markdown).group()
    inside = re.fullmatch(f"{fence}(.*?)(?<!`){fence}(?!`)", markdown).group(1)
    assert not re.search(f"(?<!`){fence}(?!`)", inside)  # no earlier close
    if inside[:1] == inside[-1:] == " " and inside.strip():
        return inside[1:-1]
    return inside


@pytest.mark.parametrize("text", [
    "plain", "use `jnp.asarray(x)` first", "`x` must be an array", "ends with `x`",
    "a ``double`` run", "`", "`` and ` together"])
def test_markdown_code_spans_read_as_written(text):
    from jaxmap.render.review_markdown import _code

    assert _code_span(_code(text)) == text


def test_a_message_with_backticks_reads_as_written_in_markdown(capsys, repo):
    ops = (repo / OPS).read_text().replace(
        "sin takes an array; got None", "`x` must be an array: use `jnp.asarray(x)`")
    commit(repo, {OPS: ops}, "a message quoting code")
    _, out, _ = review(capsys, repo, "HEAD~1..HEAD", "--format", "markdown")
    assert ("`sin takes an array; got None` → "
            "`` `x` must be an array: use `jnp.asarray(x)` ``") in out


def test_a_value_the_index_cannot_fill_reads_as_repo_map_writes_it(capsys, repo):
    """`{}`, in each form, as REPO-MAP's message pages and `explain` show it (`…`
    marks text cut short)."""
    ops = (repo / OPS).read_text().replace(
        '"sin takes an array; got None"', 'f"sin takes an array; got {x!r} of {type(x)}"')
    commit(repo, {OPS: ops}, "the message shows the value")
    (message,) = review_json(capsys, repo)["messages"]
    assert message["new"]["text"] == "sin takes an array; got {} of {}"
    _, out, _ = review(capsys, repo, "HEAD~1..HEAD")
    assert "-> 'sin takes an array; got {} of {}'" in out
    _, out, _ = review(capsys, repo, "HEAD~1..HEAD", "--format", "markdown")
    assert "→ `sin takes an array; got {} of {}`" in out


def test_a_library_call_never_reaches_a_primitive_through_a_test(capsys, repo):
    """A test that stores a lambda into a library registry is, in the call graph, what
    the library's call of a handler calls; but the library never runs the test's other
    calls, so exp starting to call through the registry does not start reaching cos."""
    ops = changed_files()[OPS] + textwrap.dedent("""

        HANDLERS = {}


        def canonical(x):
          handler = HANDLERS.get(type(x))
          if handler:
            return handler(x)
          return x
        """)
    registry_test = "from jax._src.lax import ops\n\n\ndef test_handler():\n" \
                    "  ops.HANDLERS[float] = lambda x: x\n  ops.cos_p.bind(1.0)\n"
    commit(repo, {OPS: ops, "tests/registry_test.py": registry_test}, "a registry")
    ops = ops.replace("def exp(x):\n  return _exp(x)\n", "def exp(x):\n  return _exp(canonical(x))\n")
    commit(repo, {OPS: ops}, "exp canonicalises its input")
    document = review_json(capsys, repo)
    assert document["files"] == [OPS]
    assert not [r for r in document["reach"]
                if any(step.startswith("tests.") for step in r["chain"])]


def test_a_rule_functions_edited_body_is_a_finding_and_its_primitive_changed(capsys, repo):
    """No registration moves, yet the change edits what neg's lowering does: the review
    says so, in each form, and asks for neg's tests."""
    ops = (repo / OPS).read_text().replace(
        "def _neg_lowering(*args):\n  return args\n",
        "def _neg_lowering(*args):\n  return tuple(reversed(args))\n")
    commit(repo, {OPS: ops}, "neg lowers otherwise")
    document = review_json(capsys, repo)
    assert document["rules"] == []
    line = ops.splitlines().index("def _neg_lowering(*args):") + 1
    assert document["rule_functions_edited"] == [
        {"primitive": "neg", "kind": "lowering", "platform": None,
         "function": "_neg_lowering", "file": OPS, "line": line, "trace": None, "via": None}]
    assert [c["primitive"] for c in document["tests"]] == ["neg"]
    code, out, _err = review(capsys, repo, "HEAD~1..HEAD")
    assert code == 0
    assert f"rule functions edited (1):\n  neg lowering: _neg_lowering {OPS}:{line}" in out
    code, out, _err = review(capsys, repo, "HEAD~1..HEAD", "--format", "markdown")
    assert f"- `neg` lowering: `_neg_lowering` `{OPS}:{line}`" in out


def test_a_helper_only_rule_functions_call_is_listed_via_each(capsys, repo):
    """An edit of a helper that only rule functions call changes those rules and
    nothing else: each is listed with the rule function it serves it through. A helper
    that other code calls too is left to reach."""
    ops = (repo / OPS).read_text()
    for name in ("neg", "sin"):
        ops = ops.replace(f"def _{name}_lowering(*args):\n  return args\n",
                          f"def _{name}_lowering(*args):\n  return _lower(args)\n")
    ops = ops.replace("def _exp_lowering(*args):\n  return args\n",
                      "def _exp_lowering(*args):\n  return _both(args)\n")
    ops = ops.replace("def _exp(x):\n  return exp_p.bind(x)\n",
                      "def _exp(x):\n  return exp_p.bind(_both(x))\n")
    ops += "\n\ndef _lower(args):\n  return args\n\n\ndef _both(args):\n  return args\n"
    commit(repo, {OPS: ops}, "lowerings share helpers")
    ops = ops.replace("  return args\n\n\ndef _both(args):\n  return args\n",
                      "  return tuple(args)\n\n\ndef _both(args):\n  return tuple(args)\n")
    commit(repo, {OPS: ops}, "the helpers change")
    document = review_json(capsys, repo)
    line = ops.splitlines().index("def _lower(args):") + 1
    assert document["rule_functions_edited"] == [
        {"primitive": name, "kind": "lowering", "platform": None, "function": "_lower",
         "file": OPS, "line": line, "trace": None, "via": f"_{name}_lowering"}
        for name in ("neg", "sin")]
    assert [c["primitive"] for c in document["tests"]] == ["neg", "sin"]
    code, out, _err = review(capsys, repo, "HEAD~1..HEAD")
    assert code == 0
    assert (f"rule functions edited (2):\n  neg lowering: _lower {OPS}:{line} via "
            f"_neg_lowering\n  sin lowering: _lower {OPS}:{line} via _sin_lowering") in out
    code, out, _err = review(capsys, repo, "HEAD~1..HEAD", "--format", "markdown")
    assert f"- `sin` lowering: `_lower` `{OPS}:{line}` via `_sin_lowering`" in out


def test_one_commit_is_what_it_changed(capsys, repo):
    """`diff HEAD` reads as `diff HEAD~1..HEAD`, as a reviewer of one commit types it; a
    commit with no parent says so in one line."""
    code, alone, _err = review(capsys, repo, "HEAD")
    assert code == 0
    assert alone == review(capsys, repo, "HEAD~1..HEAD")[1]
    root = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    code, out, err = review(capsys, repo, root)
    assert_one_line_error(code, out, err)
    assert "has no parent to compare it with" in err
