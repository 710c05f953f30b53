"""REPO-MAP.md: each section checked against the minijax fixture, determinism,
overwrite protection, and the committed map of the pinned jax kept fresh."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from markers import ROOT, mark

from jaxmap.cli import main
from jaxmap.commands import repomap
from jaxmap.models import FunctionRef, Primitive, Rule, RuleKind, SourceLoc
from jaxmap.render import map_pages, markdown
from jaxmap.session import open_index

COMMITTED = Path(__file__).resolve().parent.parent / "REPO-MAP.md"
PINNED_JAX = "0.10.2"


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """(REPO-MAP.md, REPO-MAP-PRIMITIVES.md) of the fixture tree."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JAXMAP_CACHE_DIR", str(tmp_path_factory.mktemp("repomap-cache")))
        with open_index(ROOT) as idx:
            data = repomap.gather(idx, links=True)
    return markdown.repo_map(data), markdown.primitives_page(data)


@pytest.fixture(scope="module")
def text(pages):
    return pages[0]


def section(text: str, title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"no section {title!r}"
    return match.group(1)


def test_header_names_the_version_and_counts(text):
    assert text.startswith(markdown.HEADER + "\n# Repository map: jax 0.0.1\n")
    assert "31 primitives" in text.splitlines()[3]


def test_orientation_comes_first(text):
    titles = re.findall(r"^## (.*)$", text, re.M)
    # The fixture defines none of the entry points, so that section is left out.
    assert titles[:4] == ["Subsystems", "Core modules in reading order",
                          "Pipeline: how jax.jit(f)(x) runs", "Contributing"]
    assert "Entry points" not in text


def test_subsystems_name_modules_entry_points_and_connections(text):
    subsystems = section(text, "Subsystems")
    lax = next(r for r in subsystems.splitlines() if r.startswith("| **lax** |"))
    file, _ = mark("psum-create")
    assert "`jax._src.lax` (6 modules, 23 primitives)" in lax
    assert f"[`parallel.psum`]({file}#L" in lax
    assert "uses Core and tracing" in lax
    assert "| **Export** |" not in subsystems  # the fixture has no jax._src.export


def test_reading_order_names_the_core_modules_present_one_line_each(text):
    reading = section(text, "Core modules in reading order")
    rows = re.findall(r"^\d+\. `([\w.]+)` \(\[(\S+):1\]", reading, re.M)
    assert rows[:2] == [("jax._src.core", "jax/_src/core.py"),
                        ("jax._src.interpreters.partial_eval",
                         "jax/_src/interpreters/partial_eval.py")]
    assert "jax._src.linear_util" not in reading  # not in the fixture: left out


def test_pipeline_flow_and_stages_link_definitions(text):
    flow = section(text, "Pipeline: how jax.jit(f)(x) runs")
    assert "each jax operation binds a primitive: `Primitive.bind` defined at " \
        "[jax/_src/core.py:" in flow
    stages = section(text, "Where each stage lives")
    assert "| Primitives | [`core.Primitive`](jax/_src/core.py#L4)" in stages
    assert "[`mlir.register_lowering`](jax/_src/interpreters/mlir.py#L" in stages
    assert "Tracing" not in stages  # the fixture defines no Trace class: no row


def test_contributing_reads_the_tests_from_the_tree(text):
    contributing = section(text, "Contributing")
    assert "- Tests: 1 module `tests/*_test.py` (e.g. `tests/parallel_test.py`; see Tests by " \
        "subsystem)" in contributing
    assert "`docs/autodidax.md`" in contributing and "CHANGELOG.md" in contributing


def test_layout_has_a_row_per_package(text):
    layout = section(text, "Layout")
    # The package docstring, then its modules.
    assert "| `jax` | 1 | Stand-in for the jax package: a few public names. — version |" in layout
    assert "| `jax._src.lax` | 5 | lax, old_convert, parallel, slicing, utils |" in layout
    assert "| `tests` | 1 | parallel_test |" in layout


def test_module_purposes_name_things_instead_of_counting():
    purpose = repomap._derived_purpose(["b", "a", "c", "d"], {"lowering": 5, "jvp": 2}, {}, [])
    assert purpose == "primitives a, b, c, …; lowering and jvp rules"
    assert repomap._derived_purpose([], {}, {"function": ["f", "g"]}, ["x"]) == "functions f, g"
    assert repomap._derived_purpose([], {}, {}, ["jax._src.lax.lax"]) == \
        "re-exports `jax._src.lax.lax`"


def test_primitive_page_has_a_line_per_primitive_and_rule(pages):
    _, primitives = pages
    file, line = mark("psum-create")
    psum = [r for r in primitives.splitlines() if r.startswith("psum  ")]
    assert psum[0] == f"psum  primitive  psum_p  {file}:{line} (definition)"
    impl = mark("psum-impl")[1]
    assert f"psum  impl  psum_p.def_impl  {file}:{impl} (registration)  -> apply_primitive " \
        "jax/_src/dispatch.py:" in "\n".join(psum)
    linear = mark("psum-deflinear2")[1]
    transpose = f"psum  transpose  ad.deflinear2  {file}:{linear} (registration)  -> " \
        f"_psum_transpose_rule {file}:33 (definition)"
    assert transpose in psum
    # deflinear2 builds the JVP itself: no function to name.
    assert f"psum  jvp  ad.deflinear2  {file}:{linear} (registration)  -> (built by the " \
        "helper)" in psum
    batcher = next(r for r in psum if r.startswith("psum  batching  "))
    assert f"{file}:{mark('psum-batcher')[1]} (registration)  -> " \
        f"_batched_reduction_collective {file}:37 (definition)" in batcher
    sin_file, sin_line = mark("sin-lowering-cpu")
    sin_cpu = next(r for r in primitives.splitlines() if r.startswith("sin  lowering[cpu]  "))
    assert f"  {sin_file}:{sin_line} (registration)  -> _sin_cpu_lowering {sin_file}:" in sin_cpu


def test_a_rule_written_as_a_partials_name_shows_it_then_what_it_wraps():
    wraps = FunctionRef("_dot_batch_rule", SourceLoc("jax/lax.py", 5869))
    written = FunctionRef("_dot_general_batch_rule", SourceLoc("jax/lax.py", 6027))
    rule = Rule(RuleKind.BATCHING, SourceLoc("jax/lax.py", 6030), "primitive_batchers[...] =",
                function=wraps, functions=(wraps,), written=written)
    prim = Primitive("dot_general", "dot_general_p", "jax.lax", SourceLoc("jax/lax.py", 5995),
                     rules=(rule,))
    assert markdown._primitive_lines(prim)[1] == (
        "dot_general  batching  primitive_batchers[...] =  jax/lax.py:6030 (registration)  -> "
        "_dot_general_batch_rule jax/lax.py:6027 (definition), a partial of _dot_batch_rule "
        "jax/lax.py:5869 (definition)")


def test_primitive_page_lines_are_grouped_by_module_in_plain_text(pages):
    _, primitives = pages
    assert "<details>" not in primitives and "| primitive |" not in primitives
    parallel = re.search(r"^## jax\._src\.lax\.parallel\n\n```text\n(.*?)^```$", primitives,
                         re.M | re.S).group(1)
    rows = parallel.splitlines()
    assert all(row.count("  ") >= 3 for row in rows)
    assert "psum  primitive  psum_p  jax/_src/lax/parallel.py:42 (definition)" in rows
    assert {row.split("  ")[0] for row in rows} == {
        "all_gather_done", "all_gather_start", "pmax", "pmin", "psum", "ragged_all_to_all"}


def test_pallas_backend_tables_are_where_to_add_their_lowerings(text):
    where = section(text, "Where to add things")
    triton = re.search(r"### lowering\[triton\]: Pallas on GPU \(Triton\)\n(.*?)(?=\n### |\Z)",
                       where, re.S).group(1)
    file, line = mark("triton-add")
    assert f"- `jax._src.pallas.triton.lowering.triton_lowering_rules` — defined at [{file}:" \
        in triton
    # The helper is read off the registrations, then located in the table's module.
    assert "- `jax._src.pallas.triton.lowering.register_lowering` — defined at " in triton
    assert "Unimplemented primitive in Pallas Triton lowering: {name}" in triton
    assert f"- example: `add` registers `_add_lowering_rule` (defined at [{file}:{line + 1}]" \
        in triton
    assert "### lowering[mosaic_tpu]" not in where  # the fixture has no Mosaic table


def test_tests_by_subsystem_come_from_the_tree_or_are_marked_as_jax_names(tmp_path):
    files = {"jax/__init__.py": "", "jax/_src/__init__.py": "", "jax/_src/core.py": "",
             "jax/_src/lax/__init__.py": "", "jax/_src/lax/lax.py": "",
             "tests/lax_test.py": "", "tests/my_test.py": ""}
    for path, source in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(source)
    with open_index(tmp_path) as idx:
        tests = repomap.gather(idx, links=False).tests
    assert [(t.subsystem, t.files, t.in_tree) for t in tests] == \
        [("lax", ("tests/lax_test.py",), True)]
    for path in ("tests/lax_test.py", "tests/my_test.py"):
        (tmp_path / path).unlink()
    with open_index(tmp_path) as idx:
        text = markdown.repo_map(repomap.gather(idx, links=False))
    listed = section(text, "Tests by subsystem")
    assert listed.lstrip().startswith("Not in this tree (an installed package)")
    assert "- lax: `tests/lax_test.py`, `tests/lax_autodiff_test.py`" in listed


def test_export_flow_reaches_the_module_that_writes_bytes(installed_map):
    names = [p.name for stage in installed_map.export for p in stage.places]
    assert names.index("jax._src.export._export.Exported.serialize") < \
        names.index("jax._src.export.serialization.serialize")
    text = markdown.repo_map(installed_map)
    assert "`serialization.serialize` defined at `jax/_src/export/serialization.py:" in text


def test_installed_map_has_a_registry_per_pallas_backend(installed_map):
    pallas = {r.kind: r for r in installed_map.registries if r.kind.startswith("lowering[")}
    assert set(pallas) == {"lowering[mosaic_tpu]", "lowering[mosaic_gpu]", "lowering[triton]"}
    folders = {"mosaic_tpu": "mosaic/", "mosaic_gpu": "mosaic_gpu/", "triton": "triton/"}
    for kind, registry in pallas.items():
        folder = "jax/_src/pallas/" + folders[kind[9:-1]]
        assert registry.example[1].startswith(folder) and registry.example[5].startswith(folder)
        assert any(name.endswith("lowering_rules") for name, _, _ in registry.registrars)


def test_gaps_separate_surprises_from_families_lacking_rules_by_design(text):
    gaps = section(text, "Gaps")
    assert "- *async halves*: the `_start`/`_done` halves of asynchronous collectives (2)" \
        in gaps
    no_jvp = next(r for r in gaps.splitlines() if "without a JVP rule |" in r)
    assert "`reduce_sum`" in no_jvp and "`psum`" not in no_jvp
    assert no_jvp.endswith("| 2 async halves, 2 internal calls |")
    assert "_start`" not in no_jvp.split("|")[2]  # counted with its family, not listed
    assert "`SearchSorted`" not in gaps  # hijax classes are not checked
    assert "| 1 with no rules at all | `bare` | — |" in gaps


def test_hubs_are_ranked_and_infrastructure_is_apart(text):
    central = section(text, "Central modules")
    rows = [r.split("|") for r in central.splitlines() if re.match(r"\| \d+ \|", r)]
    hubs = [r[2].strip(" `") for r in rows]
    means = [int(r[3]) * int(r[4]) for r in rows]
    assert hubs[0] == "jax._src.lax.parallel" and means == sorted(means, reverse=True)
    infrastructure = re.search(r"^Infrastructure: (.*)$", central, re.M).group(1)
    assert infrastructure.startswith("`jax._src.core` (11)")
    assert "jax._src.core" not in hubs


def test_where_to_add_things_quotes_the_error_and_names_registries(text):
    where = section(text, "Where to add things")
    jvp = re.search(r"### jvp\n(.*?)(?=\n### |\Z)", where, re.S).group(1)
    assert "- JAX says, when it is missing: `Differentiation rule for '{name}' not " \
        "implemented`" in jvp
    assert "`ad.primitive_jvps` — defined at [jax/_src/interpreters/ad.py:6]" in jvp
    assert "- example: " in jvp
    dce = re.search(r"### dce\n(.*?)(?=\n### |\Z)", where, re.S).group(1)
    assert "JAX says" not in dce  # a missing DCE rule falls back to a default


def test_primitives_defined_in_tests_are_left_out(tmp_path):
    core = "class Primitive:\n  def __init__(self, name):\n    self.name = name\n"
    make = "from jax._src import core\n{0}_p = core.Primitive('{0}')\n"
    for path, text in {"jax/__init__.py": "", "jax/_src/__init__.py": "",
                       "jax/_src/core.py": core, "jax/_src/ops.py": make.format("real"),
                       "tests/ops_test.py": make.format("fake"),
                       "docs/example.py": make.format("sample")}.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    with open_index(tmp_path) as idx:
        assert sorted(p.name for p in idx.primitives()) == ["fake", "real", "sample"]
        assert [p.name for p in repomap.gather(idx, links=True).primitives] == ["real"]


def test_plain_locations_outside_a_checkout():
    with open_index(ROOT) as idx:
        text = markdown.repo_map(repomap.gather(idx, links=False))
    assert "](jax/" not in text
    assert "`jax/_src/core.py:4`" in text


def test_output_is_deterministic(text):
    with open_index(ROOT) as idx:
        assert markdown.repo_map(repomap.gather(idx, links=True)) == text


def test_cli_writes_and_refuses_to_overwrite_a_foreign_file(tmp_path, capsys):
    target = tmp_path / "MAP.md"
    assert main(["repo-map", "--root", str(ROOT), "-o", str(target)]) == 0
    first, primitives = target.read_bytes(), (tmp_path / "MAP-PRIMITIVES.md").read_text()
    assert "(MAP-PRIMITIVES.md)" in first.decode() and "[MAP.md](MAP.md)" in primitives
    assert main(["repo-map", "--root", str(ROOT), "-o", str(target)]) == 0  # its own: fine
    assert target.read_bytes() == first
    (tmp_path / "MAP-PRIMITIVES.md").write_text("my table\n")
    capsys.readouterr()
    assert main(["repo-map", "--root", str(ROOT), "-o", str(target)]) != 0
    assert "MAP-PRIMITIVES.md exists" in capsys.readouterr().err
    mine = tmp_path / "NOTES.md"
    mine.write_text("my notes\n")
    capsys.readouterr()
    assert main(["repo-map", "--root", str(ROOT), "-o", str(mine)]) != 0
    assert "--force" in capsys.readouterr().err
    assert mine.read_text() == "my notes\n"
    assert main(["repo-map", "--root", str(ROOT), "-o", str(mine), "--force"]) == 0


def test_json_shows_the_maps_data_and_writes_nothing(tmp_path, capsys):
    target = tmp_path / "MAP.md"
    capsys.readouterr()
    assert main(["repo-map", "--root", str(ROOT), "-o", str(target), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert not target.exists()
    assert {"jax_version", "files", "subsystems", "jit_flow", "pipeline", "entry_points",
            "contributing", "packages", "modules", "primitives", "families", "gaps", "hubs",
            "infrastructure", "rule_helpers", "registries", "reading_order", "export_flow",
            "tests", "core_classes", "alternate_paths", "public_names", "config_options",
            "public_binds", "common_primitives", "messages"} == document.keys()
    parallel = next(m for m in document["modules"] if m["module"] == "jax._src.lax.parallel")
    assert parallel["purpose"] == "Stand-in for jax._src.lax.parallel: collectives."
    with open_index(ROOT) as idx:
        assert [p["name"] for p in document["primitives"]] == \
            [p.name for p in repomap.gather(idx, links=False).primitives]
    psum = next(p for p in document["primitives"] if p["name"] == "psum")
    assert (psum["file"], psum["line"]) == mark("psum-create")
    impl = next(r for r in document["registries"] if r["kind"] == "impl")
    assert impl["registrars"] and {"name", "file", "line"} == impl["registrars"][0].keys()
    triton = next(r for r in document["registries"] if r["kind"] == "lowering[triton]")
    assert triton["title"] == "Pallas on GPU (Triton)"
    assert triton["example"]["function_line"] == mark("triton-add")[1] + 1
    assert document["reading_order"][0]["module"] == "jax._src.core"


@pytest.fixture(scope="module")
def installed_map(installed_index):
    return repomap.gather(installed_index, links=False)


@pytest.mark.parametrize("budget", [1000, 2000, 8000, 32000, 64000])
def test_a_budget_is_respected(installed_map, budget):
    assert markdown.estimate_tokens(markdown.repo_map(installed_map, budget)) <= budget


def test_a_small_budget_still_names_the_subsystems_and_the_pipeline(installed_map):
    text = markdown.repo_map(installed_map, 2000)
    assert all(f"| **{s.name}** |" in text for s in installed_map.subsystems)
    flow = section(text, "Pipeline: how jax.jit(f)(x) runs")
    assert len(re.findall(r"^\d\. ", flow, re.M)) == len(installed_map.flow) >= 5
    assert markdown.repo_map(installed_map, 2000) == text  # deterministic


def test_a_budget_too_small_for_the_header_is_one_line(capsys):
    assert main(["repo-map", "--root", str(ROOT), "-o", "-", "--budget", "20"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("jaxmap: error: a budget of 20 tokens") and err.count("\n") == 1


def test_committed_repo_map_is_fresh(installed_index, installed_map):
    if installed_index.jax_version != PINNED_JAX:
        pytest.skip(f"REPO-MAP.md is generated from jax {PINNED_JAX}; "
                    f"jax {installed_index.jax_version} is installed")
    fresh = markdown.repo_map(installed_map)
    assert COMMITTED.read_text(encoding="utf-8") == fresh, \
        "REPO-MAP.md is stale: run `jaxmap repo-map -o REPO-MAP.md`"
    assert COMMITTED.with_name(markdown.PRIMITIVES_FILE).read_text(encoding="utf-8") == \
        markdown.primitives_page(installed_map), "REPO-MAP-PRIMITIVES.md is stale"
    for name, page in map_pages.pages(installed_map).items():
        committed = COMMITTED.with_name(f"REPO-MAP-{name}.md")
        assert committed.read_text(encoding="utf-8") == page, f"{committed.name} is stale"
    lines = fresh.splitlines()
    orientation = ["## Subsystems", "## Pipeline: how jax.jit(f)(x) runs", "## Contributing"]
    assert all(title in lines[:200] for title in orientation)
    assert len(fresh.encode()) < 60_000


def test_budgeted_tables_keep_their_columns(capsys, installed_index, monkeypatch):
    """Rows a budget shortens still have a cell for every column of their header."""
    monkeypatch.setenv("JAXMAP_CACHE_DIR", os.path.dirname(installed_index.path))
    assert main(["repo-map", "--budget", "2000", "-o", "-"]) == 0  # the installed jax
    lines = capsys.readouterr().out.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|---"):
            columns = line.count("|")
            rows = []
            for row in lines[i + 1:]:
                if not row.startswith("|"):
                    break
                rows.append(row)
            assert rows and all(row.count("|") == columns for row in rows), rows


@pytest.mark.parametrize("called", ["trace_to_jaxpr", "trace_to_jaxpr_dynamic"])
def test_the_pipeline_names_the_tracing_function_jit_calls(tmp_path_factory, called):
    """Releases 0.4.30 and 0.8 define `trace_to_jaxpr` but jit traces with
    `trace_to_jaxpr_dynamic`; from 0.9 it is the other way round."""
    from inline import indexed_tree

    from jaxmap.commands.repomap import _stages
    from jaxmap.knowledge.orientation import JIT_FLOW

    index = indexed_tree(tmp_path_factory, {
        "jax/__init__.py": "", "jax/_src/__init__.py": "",
        "jax/_src/interpreters/__init__.py": "",
        "jax/_src/interpreters/partial_eval.py": """
            def trace_to_jaxpr(fun):
              return fun

            def trace_to_jaxpr_dynamic(fun):
              return fun
            """,
        "jax/_src/pjit.py": f"""
            from jax._src.interpreters import partial_eval as pe

            def _create_pjit_jaxpr(fun):
              return pe.{called}(fun)
            """})
    try:
        [stage] = [s for s in _stages(index, JIT_FLOW) if "traced" in s.heading]
    finally:
        index.close()
    assert [place.name for place in stage.places] == \
        [f"jax._src.interpreters.partial_eval.{called}"]
