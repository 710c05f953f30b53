"""REPO-MAP.md: each section checked against the minijax fixture, determinism,
overwrite protection, and the committed map of the pinned jax kept fresh."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from markers import ROOT, mark

from jaxmap import repomap
from jaxmap.cli import main
from jaxmap.index import open_index
from jaxmap.render import markdown

COMMITTED = Path(__file__).resolve().parent.parent / "REPO-MAP.md"
PINNED_JAX = "0.10.2"


@pytest.fixture(scope="module")
def text(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JAXMAP_CACHE_DIR", str(tmp_path_factory.mktemp("repomap-cache")))
        with open_index(ROOT) as idx:
            return markdown.repo_map(repomap.gather(idx, links=True))


def section(text: str, title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"no section {title!r}"
    return match.group(1)


def test_header_names_the_version_and_counts(text):
    assert text.startswith(markdown.HEADER + "\n# Repository map: jax 0.0.1\n")
    assert "31 primitives" in text.splitlines()[3]


def test_layout_gives_each_module_a_purpose(text):
    layout = section(text, "Layout")
    # From the module docstring.
    assert "| `jax._src.lax.parallel` | Stand-in for jax._src.lax.parallel: collectives. |" \
        in layout
    # The top-level directory takes its package docstring.
    assert "| `jax/` | Stand-in for the jax package: a few public names. |" in layout
    assert "<details><summary><b>jax/_src</b>" in layout


def test_derived_purpose_when_there_is_no_docstring():
    purpose = repomap._derived_purpose(3, {"lowering": 5, "jvp": 2}, {}, [])
    assert purpose == "defines 3 primitives; registers 7 rules (lowering, jvp)"
    assert repomap._derived_purpose(0, {}, {}, ["jax._src.lax.lax"]) == \
        "re-exports from `jax._src.lax.lax`"


def test_pipeline_links_each_stage_to_its_definition(text):
    pipeline = section(text, "Pipeline")
    file, _ = mark("psum-create")
    assert "| Primitives | [`core.Primitive`](jax/_src/core.py#L4)" in pipeline
    assert "[`mlir.register_lowering`](jax/_src/interpreters/mlir.py#L" in pipeline
    assert "Tracing" not in pipeline  # the fixture defines no Trace class: no row


def test_primitive_table_links_every_registration(text):
    table = section(text, "Primitives")
    file, line = mark("psum-create")
    row = next(r for r in table.splitlines() if r.startswith(f"| [`psum`]({file}#L{line})"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    impl, aeval, jvp, transpose, batching, lowering, pe, dce, platforms = cells[1:]
    assert impl == f"[L{mark('psum-impl')[1]}]({file}#L{mark('psum-impl')[1]})"
    assert jvp == transpose == f"[L{mark('psum-deflinear2')[1]}]({file}#L{mark('psum-deflinear2')[1]})"
    assert batching.endswith(f"#L{mark('psum-batcher')[1]})")
    assert pe == dce == platforms == "—"
    sin_row = next(r for r in table.splitlines() if "[`sin`]" in r)
    assert f"cpu [L{mark('sin-lowering-cpu')[1]}]" in sin_row


def test_gaps_list_primitives_lacking_a_kind(text):
    gaps = section(text, "Gaps")
    no_jvp = re.search(r"<summary>(\d+) without a JVP rule</summary>\n\n(.*?)\n", gaps).group(2)
    assert "`reduce_sum`" in no_jvp and "`psum`" not in no_jvp
    assert "`SearchSorted`" not in gaps  # hijax classes are not checked
    assert re.search(r"<summary>1 with no rules at all</summary>\n\n`bare`", gaps)


def test_central_modules_are_ranked(text):
    central = section(text, "Central modules and functions")
    rows = [r for r in central.splitlines() if re.match(r"\| \d+ \|", r)]
    assert rows and "`jax._src.core`" in " ".join(rows[:5])
    scores = [float(r.split("|")[3]) for r in rows if r.split("|")[2].strip()]
    assert scores == sorted(scores, reverse=True)


def test_where_to_add_things_names_registries_and_an_example(text):
    where = section(text, "Where to add things")
    jvp = re.search(r"### jvp\n(.*?)(?=\n### |\Z)", where, re.S).group(1)
    assert "`ad.primitive_jvps` — defined at [jax/_src/interpreters/ad.py:6]" in jvp
    assert "- example: " in jvp


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
    first = target.read_bytes()
    assert main(["repo-map", "--root", str(ROOT), "-o", str(target)]) == 0  # its own: fine
    assert target.read_bytes() == first
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
    assert {"jax_version", "files", "top_level", "areas", "pipeline", "primitives", "gaps",
            "central_modules", "central_functions", "registries"} == document.keys()
    with open_index(ROOT) as idx:
        assert [p["name"] for p in document["primitives"]] == \
            [p.name for p in repomap.gather(idx, links=False).primitives]
    psum = next(p for p in document["primitives"] if p["name"] == "psum")
    assert (psum["file"], psum["line"]) == mark("psum-create")
    impl = next(r for r in document["registries"] if r["kind"] == "impl")
    assert impl["registrars"] and {"name", "file", "line"} == impl["registrars"][0].keys()


def test_committed_repo_map_is_fresh(installed_index):
    if installed_index.jax_version != PINNED_JAX:
        pytest.skip(f"REPO-MAP.md is generated from jax {PINNED_JAX}; "
                    f"jax {installed_index.jax_version} is installed")
    fresh = markdown.repo_map(repomap.gather(installed_index, links=False))
    assert COMMITTED.read_text(encoding="utf-8") == fresh, \
        "REPO-MAP.md is stale: run `jaxmap repo-map -o REPO-MAP.md`"
