"""Committed snapshots of a jax release's primitive index (`indexes/jax-X.Y.Z.json.gz`).

A snapshot holds every primitive with its rules, the public definitions (those
with a public path) and the message templates of the release's raise sites (so
`explain` can tell a message worded as an older release words it), in this module's
own format (`FORMAT`, the fields the store
writes; `primitives --json` may grow without changing it), so `locate --jax X.Y.Z` and
`diff` answer for releases that are not installed. Loading one gives an in-memory
index that the ordinary queries run on.
"""

from __future__ import annotations

import gzip
import json
import os
import re

from jaxmap.errors import SnapshotError
from jaxmap.models import Definition, Primitive, Rule, SwitchedOff
from jaxmap.store import write as store
from jaxmap.store.read import Index
from jaxmap.store.records import (
    DefinitionRecord,
    Place,
    PrimitiveRecord,
    Resolution,
    RuleRecord,
    SwitchedOffRecord,
)

FORMAT = 1
_NAME = re.compile(r"jax-(\d+(?:\.\d+)*)\.json\.gz\Z")


def directories() -> list[str]:
    """Where snapshots are looked for: `$JAXMAP_INDEXES`, the installed package data,
    and the `indexes/` folder of a source checkout."""
    found = []
    explicit = os.environ.get("JAXMAP_INDEXES")
    if explicit:
        found.append(explicit)
    try:
        from importlib import resources

        found.append(str(resources.files("jaxmap_indexes")))
    except (ModuleNotFoundError, TypeError):
        pass
    found.append(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
                              "indexes"))
    return [d for d in dict.fromkeys(found) if os.path.isdir(d)]


def available() -> dict[str, str]:
    """version -> snapshot path, first directory wins."""
    versions: dict[str, str] = {}
    for directory in directories():
        for name in sorted(os.listdir(directory)):
            match = _NAME.match(name)
            if match:
                versions.setdefault(match.group(1), os.path.join(directory, name))
    return versions


def find(version: str) -> str:
    versions = available()
    if version not in versions:
        known = ", ".join(sorted(versions, key=_version_key)) or "none"
        raise SnapshotError(f"no snapshot for jax {version} (available: {known})")
    return versions[version]


def export(index: Index) -> bytes:
    """A deterministic gzip'd JSON snapshot of an open index; its messages are those of
    the index's second phase (`index --snapshot` builds it), none without it."""
    document = {"format": FORMAT, "jax_version": index.jax_version,
                "primitives": [_primitive_record(p) for p in index.primitives()],
                "definitions": [_definition_record(d) for d in index.public_definitions()],
                "messages": [[file, line, function, exception, list(pieces), returned]
                             for file, line, function, exception, pieces, returned
                             in index.messages()]}
    text = json.dumps(document, separators=(",", ":"), sort_keys=True)
    return gzip.compress(text.encode(), compresslevel=9, mtime=0)


def load(path: str) -> Index:
    """Open a snapshot file as a read-only, in-memory index."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            document = json.load(handle)
    except (OSError, ValueError, EOFError) as error:
        raise SnapshotError(f"cannot read snapshot {path} ({error})") from error
    if document.get("format") != FORMAT:
        raise SnapshotError(f"snapshot {path} has format {document.get('format')!r}, "
                            f"this jaxmap reads format {FORMAT}")
    version = document["jax_version"]
    meta = {"root": f"jax {version} (snapshot)", "jax_version": version or "",
            store.GRAPH: "0"}  # a snapshot keeps no call graph
    return Index(store.in_memory(meta, _resolution(document)), path)


def _primitive_record(prim: Primitive) -> dict:
    loc = prim.loc
    return {"name": prim.name, "variable": prim.variable, "module": prim.module,
            "style": prim.style, "file": loc.file, "line": loc.line, "end_line": loc.end_line,
            "aliases": list(prim.aliases), "rules": [_rule_record(r) for r in prim.rules],
            # only where there are any: most primitives have none
            **({"switched_off": [_switched_off_record(o) for o in prim.switched_off]}
               if prim.switched_off else {})}


def _switched_off_record(o: SwitchedOff) -> dict:
    """A rule switched off where the primitive is made, as `locate --json` says it."""
    return {"kind": o.kind.value, "platform": o.platform, "platforms": list(o.platforms),
            "file": o.loc.file, "line": o.loc.line, "end_line": o.loc.end_line,
            "via": o.via, "condition": o.condition,
            "guard": {"file": o.guard.file, "line": o.guard.line}}


def _rule_record(rule: Rule) -> dict:
    functions = [{"name": f.name, "file": f.loc.file, "line": f.loc.line}
                 for f in rule.functions]
    return {"kind": rule.kind.value, "file": rule.loc.file, "line": rule.loc.line,
            "end_line": rule.loc.end_line, "via": rule.via, "platform": rule.platform,
            "platforms": list(rule.platforms), "function": functions[0] if functions else None,
            "functions": functions, "condition": rule.condition,
            "written": rule.written and {"name": rule.written.name,
                                         "file": rule.written.loc.file,
                                         "line": rule.written.loc.line},
            "keywords": rule.keywords, "overridden_by": _overrider(rule)}


def _overrider(rule: Rule) -> dict | None:
    """Where the registration that overrides a rule is, as `locate --json` says it."""
    return None if rule.overridden_by is None else {"file": rule.loc.file,
                                                    "line": rule.overridden_by}


def _definition_record(d: Definition) -> dict:
    return {"name": d.name, "qualname": d.qualname, "kind": d.kind.value, "file": d.loc.file,
            "line": d.loc.line, "end_line": d.loc.end_line,
            "public_paths": list(d.public_paths), "summary": d.summary}


def _resolution(document: dict) -> Resolution:
    """The snapshot's documents as the records the store writes; messages get back
    their pieces as JSON."""
    messages = [(file, line, function, exception, json.dumps(pieces), returned)
                for file, line, function, exception, pieces, returned
                in document.get("messages", ())]  # none in a snapshot written before
    return Resolution([_primitive(p) for p in document["primitives"]],
                      [_definition(d) for d in document["definitions"]], [], [], [], [],
                      document["jax_version"], {}, [], messages)


def _primitive(p: dict) -> PrimitiveRecord:
    return PrimitiveRecord(p["name"], p["variable"], p["module"], p["file"], p["line"],
                           p["end_line"], p["style"], [_rule(r) for r in p["rules"]],
                           list(p.get("aliases", ())),
                           [_switched_off(o) for o in p.get("switched_off", ())])


def _switched_off(o: dict) -> SwitchedOffRecord:
    return SwitchedOffRecord(o["kind"], o["file"], o["line"], o["end_line"], o["via"],
                             o["platform"], o["condition"], o["guard"]["file"],
                             o["guard"]["line"], o["platforms"])


def _rule(r: dict) -> RuleRecord:
    functions = r.get("functions") or ([r["function"]] if r.get("function") else [])
    written = r.get("written")
    platform = r["platform"]
    return RuleRecord(r["kind"], r["file"], r["line"], r["end_line"], r["via"], platform,
                      [_place(f) for f in functions], r.get("condition"),
                      _place(written) if written else None,
                      # a snapshot of an older jaxmap has no expanded platforms
                      r.get("platforms", [platform] if platform else []),
                      r.get("keywords"),  # none in a snapshot written before
                      (r.get("overridden_by") or {}).get("line"))  # nor this


def _definition(d: dict) -> DefinitionRecord:
    """A definition (`locate --json`'s fields) with its module back."""
    return DefinitionRecord(d["name"], d["qualname"], d["kind"],
                            d["qualname"].rpartition(".")[0], d["file"], d["line"],
                            d["end_line"], d["summary"], d["public_paths"])


def _place(f: dict) -> Place:
    return Place(f["name"], f["file"], f["line"])


def older_than(version: str | None) -> list[tuple[str, str]]:
    """(version, path) of the snapshots of releases older than `version` (all of them
    if it is not known), newest first."""
    def key(v: str) -> tuple[int, ...]:
        return _version_key(v) if re.fullmatch(r"\d+(?:\.\d+)*", v or "") else ()

    mine = key(version or "")
    return sorted(((v, path) for v, path in available().items() if not mine or key(v) < mine),
                  key=lambda item: key(item[0]), reverse=True)


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))
