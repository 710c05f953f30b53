"""Every source file read as Python reads it, or named with why it was not: PEP 263
declarations and byte-order marks, undecodable bytes, and files over the size limit."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest

from jaxmap.cli import main
from jaxmap.indexing import discover
from jaxmap.indexing.decode import as_utf8
from jaxmap.session import open_index

LATIN1 = ("# -*- coding: latin-1 -*-\nfrom jax._src import core\n\n\n"
          "def d\xe9j\xe0_vu(x):\n  return x\n\n\n"
          "caf\xe9_p = core.Primitive('caf\xe9')\ncaf\xe9_p.def_impl(d\xe9j\xe0_vu)\n")


@pytest.mark.parametrize("data, text, problem", [
    (b"x = 1\n", "x = 1\n", None),
    ("# coding: latin-1\nna\xefve = 1\n".encode("latin-1"),
     "# coding: latin-1\nna\xefve = 1\n", None),
    ("#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\ns = '\u20ac'\n".encode("cp1252"),
     "#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\ns = '\u20ac'\n", None),
    (codecs.BOM_UTF8 + "\u00e9 = 1\n".encode(), "\u00e9 = 1\n", None),
    (b"# coding: klingon\nx = 1\n", "# coding: klingon\nx = 1\n", "klingon"),
    (b"x = '\xff'\n", "x = '\ufffd'\n", "0xff at offset 5 is not utf-8"),
    (b"# coding: ascii\nx = '\xe9'\n", "# coding: ascii\nx = '\ufffd'\n", "is not ascii"),
])
def test_sources_decode_as_python_decodes_them(data, text, problem):
    decoded, found = as_utf8(data)
    assert decoded.decode("utf-8") == text
    assert (found is None) if problem is None else (problem in found), found


def test_columns_after_a_non_ascii_character_count_characters():
    line = as_utf8("# coding: latin-1\n\xe9t\xe9 = f(x)\n".encode("latin-1"))[0] \
        .decode().splitlines()[1]
    assert line.index("f(") == 6


def _tree(tmp_path: Path, files: dict[str, bytes]) -> Path:
    root = tmp_path / "tree"
    for relative, data in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def _index_json(capsys, root: Path) -> tuple[dict, str]:
    assert main(["index", "--root", str(root), "--json"]) == 0
    out, err = capsys.readouterr()
    return json.loads(out), err


def test_a_latin1_file_is_indexed_with_its_names_whole(tmp_path, capsys):
    root = _tree(tmp_path, {"jax/_src/latin.py": LATIN1.encode("latin-1")})
    document, _ = _index_json(capsys, root)
    assert document["diagnostic_messages"] == []
    with open_index(root) as index:
        (prim,) = index.primitives_named("caf\xe9_p", "caf\xe9")
        assert (prim.name, prim.loc.line) == ("caf\xe9", 9)
        assert [(r.function.name, r.function.loc.line) for r in prim.rules] == [
            ("d\xe9j\xe0_vu", 5)]


def test_an_undecodable_file_is_a_diagnostic_naming_it(tmp_path, capsys):
    root = _tree(tmp_path, {"pkg/bad.py": b"from jax._src import core\nx = '\xff'\n"
                            b"bad_p = core.Primitive('bad')\n"})
    document, _ = _index_json(capsys, root)
    (message,) = document["diagnostic_messages"]
    assert message.startswith("pkg/bad.py: byte 0xff") and "U+FFFD" in message
    with open_index(root) as index:
        assert [p.name for p in index.primitives()] == ["bad"]


def test_a_5_mib_generated_file_is_indexed(tmp_path, capsys):
    blob = "BLOB = (\n" + ("  b'" + "ab" * 40 + "'\n") * 64000 + ")\n"
    source = f"from jax._src import core\n\n{blob}\nbig_p = core.Primitive('big')\n"
    assert len(source) > 5 * 2**20
    root = _tree(tmp_path, {"gen/table.py": source.encode()})
    document, err = _index_json(capsys, root)
    assert document["skipped"] == [] and err == ""
    with open_index(root) as index:
        (prim,) = index.primitives_named("big_p", "big")
        assert prim.loc.line == source.count("\n")


def _sparse(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.truncate(size)


def test_a_file_over_the_limit_is_named_on_stderr_and_in_the_json(tmp_path, capsys):
    root = _tree(tmp_path, {"pkg/small.py": b"x = 1\n"})
    _sparse(root / "pkg" / "vast.py", discover.MAX_FILE_BYTES + 1)
    document, err = _index_json(capsys, root)
    (skipped,) = document["skipped"]
    assert skipped["path"] == "pkg/vast.py" and "over the 16 MiB limit" in skipped["reason"]
    assert err == f"jaxmap: skipped pkg/vast.py: {skipped['reason']}\n"
    assert main(["index", "--root", str(root)]) == 0
    assert "skipped pkg/vast.py" in capsys.readouterr().err


def test_a_tree_of_skipped_files_does_not_say_it_holds_none(tmp_path, capsys):
    root = tmp_path / "tree"
    _sparse(root / "vast.py", discover.MAX_FILE_BYTES + 1)
    assert main(["index", "--root", str(root)]) != 0
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    assert "holds no Python files" not in err
    assert "holds only Python files jaxmap skips: vast.py (16.0 MiB, over the 16 MiB" in err


def test_the_editors_log_line_names_each_skipped_file(tmp_path):
    from jaxmap.indexing.indexer import build_index
    from jaxmap.render.editor import refreshed

    root = _tree(tmp_path, {"pkg/small.py": b"x = 1\n"})
    _sparse(root / "pkg" / "vast.py", discover.MAX_FILE_BYTES + 1)
    line = refreshed(build_index(str(root)))
    assert "; skipped pkg/vast.py: 16.0 MiB, over the 16 MiB limit" in line and "\n" not in line
