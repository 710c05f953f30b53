"""A neighbourhood (neighbours.Neighbourhood) as text, JSON, Graphviz dot, Mermaid
(pastes into a GitHub issue) or GraphML; `picture` turns dot into SVG or PNG with
Graphviz's `dot` where it is installed."""

from __future__ import annotations

from jaxmap.errors import JaxmapError

PICTURE_FORMATS = ("svg", "png")
MERMAID_MAX_EDGES = 500  # Mermaid's default maxEdges: GitHub draws no more in one block
_SHAPES = {"module": "folder", "function": "box", "class": "box3d", "primitive": "ellipse",
           "rule": "note"}


def render(hood, fmt: str) -> str:
    return _RENDERERS[fmt](hood)


def caveat(hood, fmt: str) -> str | None:
    """A warning line for output that its renderer will refuse, else None."""
    if fmt == "mermaid" and len(hood.edges) > MERMAID_MAX_EDGES:
        return (f"jaxmap: warning: {len(hood.edges)} edges: Mermaid (and GitHub) draws at "
                f"most {MERMAID_MAX_EDGES} in one block; try a smaller --depth or --format dot")
    return None


def _text(hood) -> str:
    return "\n".join(f"{u} -{kind}-> {v}" for u, kind, v in hood.edges) or \
        "\n".join(hood.roots) + "\n(no edges)"


def _json(hood) -> str:
    from jaxmap.render.paging import dump

    return dump({"roots": list(hood.roots),
                       "nodes": [{"id": label, **info} for label, info
                                 in sorted(hood.nodes.items())],
                       "edges": [{"source": u, "kind": k, "target": v}
                                 for u, k, v in hood.edges]})


def dot(hood) -> str:
    import json  # here, not at the top: cli.py imports FORMATS on every start-up

    lines = ["digraph jaxmap {", "  rankdir=LR;", '  node [fontname="Helvetica"];']
    for label, info in sorted(hood.nodes.items()):
        style = ', style=bold' if label in hood.roots else ""
        lines.append(f'  {json.dumps(label)} [shape={_SHAPES.get(info["kind"], "box")}'
                     f'{style}];')
    lines += [f'  {json.dumps(u)} -> {json.dumps(v)} [label="{kind}"];'
              for u, kind, v in hood.edges]
    return "\n".join(lines + ["}"])


def _mermaid(hood) -> str:
    ids = {label: f"n{i}" for i, label in enumerate(sorted(hood.nodes))}
    lines = ["flowchart LR"]
    lines += [f'  {ids[label]}["{label.replace(chr(34), "#quot;")}"]'
              for label in sorted(hood.nodes)]
    lines += [f"  {ids[u]} -->|{kind}| {ids[v]}" for u, kind, v in hood.edges]
    roots = [ids[label] for label in sorted(hood.roots) if label in ids]
    if roots:  # what was asked for, drawn bold as in dot
        lines += ["  classDef root stroke-width:3px,font-weight:bold",
                  f"  class {','.join(roots)} root"]
    return "\n".join(lines)


def _graphml(hood) -> str:
    from html import escape

    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">',
             '  <key id="kind" for="all" attr.name="kind" attr.type="string"/>',
             '  <key id="file" for="node" attr.name="file" attr.type="string"/>',
             '  <key id="line" for="node" attr.name="line" attr.type="int"/>',
             '  <graph edgedefault="directed">']
    for label, info in sorted(hood.nodes.items()):
        lines.append(f'    <node id="{escape(label)}"><data key="kind">{info["kind"]}</data>'
                     f'<data key="file">{info["file"] or ""}</data>'
                     f'<data key="line">{info["line"]}</data></node>')
    lines += [f'    <edge source="{escape(u)}" target="{escape(v)}">'
              f'<data key="kind">{kind}</data></edge>' for u, kind, v in hood.edges]
    return "\n".join(lines + ["  </graph>", "</graphml>"])


def picture(hood, fmt: str) -> bytes:
    """The neighbourhood drawn by Graphviz (`svg` or `png`)."""
    import shutil
    import subprocess

    program = shutil.which("dot")
    if program is None:
        raise JaxmapError(f"--format {fmt} needs Graphviz's `dot`, which is not installed; "
                          "use --format dot and render it elsewhere")
    result = subprocess.run([program, f"-T{fmt}"], input=dot(hood).encode(),
                            capture_output=True, check=False)
    if result.returncode:
        raise JaxmapError(f"Graphviz failed: {result.stderr.decode(errors='replace')[:200]}")
    return result.stdout


_RENDERERS = {"text": _text, "json": _json, "dot": dot, "mermaid": _mermaid, "graphml": _graphml}
# Every format `graph --format` takes: text formats, then pictures drawn from dot.
FORMATS = (*_RENDERERS, *PICTURE_FORMATS)
