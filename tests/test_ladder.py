"""`jaxmap ladder`: the rungs in order, each place a real definition in the index's tree."""

from __future__ import annotations

import json
import os

import pytest
from markers import ROOT as MINIJAX

from jaxmap.commands import ladder
from jaxmap.knowledge import rungs
from jaxmap.scaffold import kinds


@pytest.fixture(scope="module")
def installed_ladder(installed_index):
    return ladder.gather(installed_index)


def test_rungs_climb_in_order_and_every_kind_has_one():
    assert [r.number for r in rungs.RUNGS] == list(range(1, len(rungs.RUNGS) + 1))
    started = [kind for rung in rungs.RUNGS for kind in rung.kinds]
    assert sorted(started) == sorted(kinds.NAMES)


def test_every_place_is_a_definition_of_that_name(installed_ladder):
    root = installed_ladder.root
    places = [p for step in installed_ladder.steps for p in step.places]
    assert places and all(p.file for p in places), [p for p in places if not p.file]
    for place in places:
        with open(os.path.join(root, place.file), encoding="utf-8") as handle:
            line = handle.read().splitlines()[place.line - 1]
        leaf = place.name.rpartition(".")[2]
        # The line defines the name (def/class/assignment), or, for a primitive, binds it.
        assert leaf in line or f"{leaf}_p" in line, (place, line)


def test_the_ladder_names_each_rungs_machinery(installed_ladder):
    by_name = {p.name: p for step in installed_ladder.steps for p in step.places}
    assert by_name["jax.custom_vjp"].file.endswith("custom_derivatives.py")
    assert by_name["jax.experimental.pallas.pallas_call"].file.endswith("pallas_call.py")
    assert by_name["jax.ffi.ffi_call"].file.endswith("ffi.py")


def test_a_tree_without_the_machinery_says_so(tmp_path, monkeypatch):
    from jaxmap.session import open_index

    monkeypatch.setenv("JAXMAP_CACHE_DIR", str(tmp_path))
    with open_index(str(MINIJAX)) as index:
        result = ladder.gather(index)
    assert any(p.file is None for step in result.steps for p in step.places)
    from jaxmap.render import text
    from jaxmap.render.view import View

    assert "(not in this tree)" in text.ladder(result, View(""))


def test_cli_text_lists_rungs_commands_and_checklist(installed_index, monkeypatch, capsys):
    from jaxmap.cli import main

    monkeypatch.setenv("JAXMAP_CACHE_DIR", os.path.dirname(installed_index.path))
    assert main(["ladder"]) == 0
    out = capsys.readouterr().out
    for rung in rungs.RUNGS:
        assert f"{rung.number}. {rung.title}" in out
    for kind in kinds.NAMES:
        assert f"jaxmap new {kind} NAME" in out
    assert "jax/_src/custom_derivatives.py:" in out
    assert all(item in out for item in rungs.CHECKLIST)


def test_cli_json_schema(installed_index, monkeypatch, capsys):
    from jaxmap.cli import main

    monkeypatch.setenv("JAXMAP_CACHE_DIR", os.path.dirname(installed_index.path))
    assert main(["ladder", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert set(document) == {"root", "jax_version", "rungs", "checklist"}
    assert document["jax_version"] == installed_index.jax_version
    rung = document["rungs"][3]
    assert set(rung) == {"number", "title", "use_when", "avoid_when", "ask", "kinds",
                         "commands", "machinery"}
    assert rung["kinds"] == ["custom-jvp", "custom-vjp"]
    assert rung["commands"][1] == "jaxmap new custom-vjp NAME --out DIR [--style hijax]"
    assert all(set(m) == {"name", "file", "line"} and m["line"] > 0 for m in rung["machinery"])


def test_cli_bad_root_is_one_line(tmp_path, capsys):
    from jaxmap.cli import main

    assert main(["ladder", "--root", str(tmp_path / "missing")]) != 0
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
