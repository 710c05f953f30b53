"""JSON documents; other tools depend on these shapes (documented in the README)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jaxmap.knowledge.traces import rule_kinds, trace_kind
from jaxmap.models import CALL_STATUSES, Definition, Primitive, Rule, SwitchedOff
from jaxmap.render.paging import EVERYTHING, Paging, capped, paged
from jaxmap.render.paging import dump as _dump
from jaxmap.render.view import View

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Callable

    PathFn = Callable[[str], str]


def _same(path: str) -> str:
    return path


def primitive(prim: Primitive, path: PathFn = _same) -> dict:
    return {"name": prim.name, "variable": prim.variable, "module": prim.module,
            "style": prim.style, "file": path(prim.loc.file), "line": prim.loc.line,
            "end_line": prim.loc.end_line, "aliases": list(prim.aliases),
            "rules": [rule(r, path) for r in prim.rules],
            "switched_off": [switched_off(o, path) for o in prim.switched_off]}


def switched_off(o: SwitchedOff, path: PathFn = _same) -> dict:
    """A rule switched off where the primitive is made (not a rule)."""
    return {"kind": o.kind.value, "platform": o.platform, "platforms": list(o.platforms),
            "file": path(o.loc.file), "line": o.loc.line, "end_line": o.loc.end_line,
            "via": o.via, "condition": o.condition,
            "guard": {"file": path(o.guard.file), "line": o.guard.line}}


def rule(r: Rule, path: PathFn = _same) -> dict:
    functions = [{"name": f.name, "file": path(f.loc.file), "line": f.loc.line}
                 for f in r.functions]
    stands = trace_kind(r.kind, r.via)
    return {"kind": r.kind.value, "file": path(r.loc.file), "line": r.loc.line,
            "end_line": r.loc.end_line, "via": r.via, "platform": r.platform,
            "platforms": list(r.platforms), "function": functions[0] if functions else None,
            "functions": functions, "condition": r.condition,
            "written": r.written and {"name": r.written.name, "file": path(r.written.loc.file),
                                      "line": r.written.loc.line},
            "keywords": r.keywords, "stands_for": stands and stands.value,
            "overridden_by": None if r.overridden_by is None else {
                "file": path(r.loc.file), "line": r.overridden_by}}


def definition(d: Definition, path: PathFn = _same) -> dict:
    return {"name": d.name, "qualname": d.qualname, "kind": d.kind.value,
            "file": path(d.loc.file), "line": d.loc.line, "end_line": d.loc.end_line,
            "public_paths": list(d.public_paths), "summary": d.summary}


def error_document(kind: str, message: str, exit_code: int,
                   suggestions: Sequence[str] = ()) -> str:
    """A failed command's answer to a script that asked for JSON."""
    return _dump({"error": {"kind": kind, "message": message, "exit_code": exit_code,
                            "suggestions": list(suggestions)}})


def primitives_document(prims, view: View) -> str:
    """One page of `prims` (all unless the view pages)."""
    return _dump(paged({"root": str(view.root), "jax_version": view.jax_version,
                        "primitives": [primitive(p, view.path) for p in prims]},
                       "primitives", view.paging))


def located_document(found, view: View) -> str:
    """A locate answer: one page of its definitions; each primitive's tests and each
    definition's reaches cut to the page's limit, with `tests_total` and `reaches_total`
    (all four null where the index holds no current call graph: not known, not none)."""
    path, limit = view.path, view.paging.limit

    def listed(key: str, items, item) -> dict:
        if not found.graph:
            return {f"{key}_total": None, key: None}
        return {f"{key}_total": len(items), key: [item(i) for i in capped(items, limit)]}

    def test(t) -> dict:
        return {"name": t.name, "file": path(t.file), "line": t.line, "depth": t.depth,
                "chain": list(t.chain), "direct": t.direct}

    def reach(r) -> dict:
        return {"primitive": r.label, "chain": list(r.chain)}

    return _dump(paged({
        "root": str(view.root), "jax_version": view.jax_version, "query": found.query,
        "call_graph": found.graph, "unparsed": list(found.unparsed),
        "config_options": [{"name": o.name, "file": path(o.file), "line": o.line}
                           for o in found.options],
        "primitives": [{**primitive(p, path), **listed("tests", tests, test)}
                       for p, tests in zip(found.primitives, found.tests)],
        "definitions": [{**definition(d, path), **listed("reaches", reached, reach)}
                        for d, reached in zip(found.definitions, found.reaches)]},
        "definitions", view.paging))


def repo_map_document(data) -> str:
    """What REPO-MAP.md shows (a repomap.RepoMap), as data."""
    def place(name: str, file: str, line: int) -> dict:
        return {"name": name, "file": file, "line": line}

    def stages(rows) -> list:
        return [{"heading": s.heading, "places": [place(*p) for p in s.places]} for s in rows]

    c = data.contributing
    return _dump({
        "jax_version": data.jax_version, "files": data.files,
        "subsystems": [{"name": s.name, "does": s.does, "modules": [p.name for p in s.modules],
                        "module_count": s.module_count, "primitive_count": s.primitive_count,
                        "entry_points": [place(*p) for p in s.entries], "uses": list(s.uses),
                        "used_by": list(s.used_by)} for s in data.subsystems],
        "jit_flow": stages(data.flow), "pipeline": stages(data.stages),
        "entry_points": [place(*p) for p in data.entry_points],
        "contributing": {"test_modules": c.test_modules, "test_examples": list(c.test_examples),
                         "docs": [{"path": p, "why": w} for p, w in c.docs],
                         "jaxlib": c.jaxlib and place(*c.jaxlib),
                         "ladder": [{"rung": label, **place(*p)} for label, p in c.ladder]},
        "packages": [{"name": p.name, "modules": list(p.modules), "purpose": p.purpose}
                     for p in data.packages],
        "modules": [{"module": m.name, "file": m.file, "purpose": m.purpose,
                     "documented": m.documented} for m in data.modules],
        "primitives": [primitive(p) for p in data.primitives],
        "families": [{"name": f.name, "description": f.description,
                      "primitives": list(f.members)} for f in data.families],
        "gaps": [{"title": g.title, "surprises": list(g.surprises),
                  "by_design": dict(g.by_design), "switched_off": list(g.switched_off)}
                 for g in data.gaps],
        "hubs": [{"name": n, "imported_by": by, "imports": to} for n, by, to in data.hubs],
        "infrastructure": [{"name": n, "imported_by": by} for n, by in data.infrastructure],
        "rule_helpers": [{**place(*p), "primitives": n} for p, n in data.helpers],
        "registries": [{"kind": r.kind, "title": r.title, "error": r.error,
                        "registrars": [place(*p) for p in r.registrars],
                        "example": None if r.example is None else dict(zip(
                            ("primitive", "file", "line", "via", "function", "function_file",
                             "function_line"), r.example))}
                       for r in data.registries],
        "reading_order": [{"module": r.module, "file": r.file, "why": r.why}
                          for r in data.reading],
        "export_flow": stages(data.export),
        "tests": [{"subsystem": t.subsystem, "files": list(t.files), "in_tree": t.in_tree}
                  for t in data.tests],
        "core_classes": [{**place(c.qualname, c.file, c.line), "stands_for": c.stands_for,
                          "subclasses": [place(*s) for s in c.subclasses],
                          "subclass_count": c.subclass_count} for c in data.core_classes],
        "alternate_paths": [{"mode": a.mode, "entry": place(*a.entry),
                             "dispatcher": place(*a.dispatcher),
                             "dispatch_line": a.dispatch_line} for a in data.alternate_paths],
        "public_names": [{"path": n.path, "kind": n.kind, "file": n.file, "line": n.line}
                         for _module, names in data.public_names for n in names],
        "config_options": [o._asdict() for o in data.config_options],
        "public_binds": [{"path": b.path, "file": b.file, "line": b.line,
                          "primitives": [{"name": n, "calls": c} for n, c in b.primitives],
                          "common": b.common} for b in data.public_binds],
        "common_primitives": list(data.common_primitives),
        "messages": [s._asdict() | {"reached_from": list(s.reached_from)}
                     for s in data.messages]})


def scaffold_document(name: str, changes, diffs: list[str], dry_run: bool,
                      notes: Sequence[str] = ()) -> str:
    """What `new-primitive` wrote (or, with `dry_run`, would write): each file with
    its action and unified diff, and the generator's notes (one line each)."""
    return _dump({"name": name, "dry_run": dry_run, "files": [
        {"path": c.path, "label": c.label, "action": c.action, "diff": diff}
        for c, diff in zip(changes, diffs)], "notes": list(notes)})


def skill_document(out: str, jax_version, folder: dict[str, str | bytes]) -> str:
    """What `skill` wrote: the folder and its files, in path order."""
    return _dump({"out": out, "jax_version": jax_version, "files": list(folder)})


def index_document(report, messages: list[str], call_counts: dict[str, int]) -> str:
    """An indexer.IndexReport, with the resolver's diagnostics and its call edges by
    status (`through`: a call of what a parameter received; `handed`: a function handed
    on, not called; `unresolved_share`: unresolved of all calls)."""
    total = sum(call_counts.values())
    calls = {status: call_counts.get(status, 0)
             for status in CALL_STATUSES}
    fields = {("index" if name == "path" else name): value
              for name, value in report._asdict().items()}
    fields["skipped"] = [{"path": path, "reason": reason} for path, reason in report.skipped]
    return _dump({**fields, "changed": report.changed,
                  "diagnostic_messages": messages,
                  "calls": {**calls, "total": total, "unresolved_share":
                            round(calls["unresolved"] / total, 4) if total else 0.0}})


def verify_document(report) -> str:
    """A verify.Report: figures, then every difference by name."""
    return _dump({"jax_version": report.jax_version,
                  "primitives": {"found": report.primitives[0], "total": report.primitives[1],
                                 "recall": round(report.primitive_recall, 4)},
                  "pairs": {"found": report.pairs[0], "total": report.pairs[1],
                            "recall": round(report.pair_recall, 4)},
                  "extra_rules": {"extra": report.extra_rules[0],
                                  "checked": report.extra_rules[1],
                                  "rate": round(report.extra_rate, 4)},
                  "functions": {"confirmed": report.functions[0],
                                "checked": report.functions[1],
                                "rate": round(report.function_agreement, 4)},
                  "lowering_platforms": {
                      "found": report.platform_recall[0], "total": report.platform_recall[1],
                      "recall": round(report.platform_pair_recall, 4),
                      "confirmed": report.platform_precision[0],
                      "checked": report.platform_precision[1],
                      "precision": round(report.platform_pair_precision, 4)},
                  "conditional_rules": {"checked": report.conditional[1],
                                        "live": report.conditional[0]},
                  "received_rules": {
                      "found": report.received[0], "total": report.received[1],
                      "recall": round(report.received_recall, 4),
                      "extra": report.received_extra[0], "checked": report.received_extra[1],
                      "functions_confirmed": report.received_functions[0],
                      "functions_checked": report.received_functions[1],
                      "missing": report.missing_received, "extra_rules": report.extra_received,
                      "unconfirmed_functions": report.unconfirmed_received},
                  "missing_primitives": report.missing_primitives,
                  "missing_pairs": report.missing_pairs, "extra_pairs": report.extra_pairs,
                  "unconfirmed_functions": report.unconfirmed_functions,
                  "missing_lowering_platforms": report.missing_platforms,
                  "extra_lowering_platforms": report.extra_platforms})


def diff_document(diff, paging: Paging = EVERYTHING) -> str:
    """A diff.IndexDiff: one page of its rule changes (all by default)."""
    return _dump(paged({"old": diff.old, "new": diff.new, "primitives_added": list(diff.added),
                        "primitives_removed": list(diff.removed),
                        "primitives_renamed": [{"old": old, "new": new}
                                               for old, new in diff.renamed],
                        "rules": [change._asdict() for change in diff.rules],
                        "left_out": dict(zip(("primitives", "rules"), diff.left_out))},
                       "rules", paging))


def ranking_document(rows: list[tuple[str, float]]) -> str:
    """`graph --central`: modules with their scores, best first."""
    return _dump([{"module": name, "score": round(score, 6)} for name, score in rows])


def call_document(answer, view: View) -> str:
    """A callgraph.CallAnswer: one page of what it found."""
    path = view.path
    return _dump(paged({"root": str(view.root), "query": answer.query,
                        "direction": answer.direction, "targets": list(answer.targets),
                        "count": len(answer.found), "unresolved": answer.unresolved,
                        "others": answer.others, "others_why": dict(answer.others_why),
                        "read_as": _read_as(answer.read_as, path),
                        "found": [{"name": r.label, "kind": r.kind, "file": path(r.file),
                                   "line": r.line, "depth": r.depth, "public": r.public,
                                   "chain": list(r.chain), "call_line": r.call_line,
                                   "call_file": path(r.call_file or r.file)
                                   if r.call_line else None,
                                   "through": r.through, "handed": r.handed,
                                   "dispatch": r.dispatch or None,
                                   "steps": list(r.steps), "trace_time": r.trace_time,
                                   "left_out": r.left_out or None}
                                  for r in answer.found],
                        "registrations": [{"function": reg.function, "kind": reg.kind,
                                           "primitive": reg.primitive, "file": path(reg.file),
                                           "line": reg.line,
                                           "platforms": list(reg.platforms)}
                                          for reg in answer.registrations],
                        "aliases": [{"variable": label, "names": list(names)}
                                    for label, names in answer.aliases],
                        "also_named": [{"name": label, "aliases": list(names)}
                                       for label, names in answer.also],
                        "unparsed": list(view.unparsed)},
                       "found", view.paging))


def _read_as(reading, path) -> dict | None:
    """binds: what its query was read as (null for callers and calls)."""
    if reading is None:
        return None
    return {"exact": reading.exact, "functions": list(reading.functions),
            "primitives": [{"name": p.name, "variable": p.variable, "module": p.module,
                            "file": path(p.file),
                            "line": p.line} for p in reading.primitives]}


def path_document(answer, view: View) -> str:
    """A path.PathAnswer."""
    return _dump({"root": str(view.root), "source": list(answer.source),
                  "target": list(answer.target), "left_out": answer.left_out or None,
                  "runs": answer.runs, "count": len(answer.chains),
                  "chains": [[{"caller": s.caller, "callee": s.callee, "how": s.how,
                               "file": view.path(s.file), "line": s.line} for s in steps]
                             for steps in answer.chains],
                  "unparsed": list(view.unparsed)})


def coverage_document(matrix, view: View) -> str:
    """A coverage.Coverage: its columns, per-column totals (over every row) and one page
    of rows."""
    return _dump(paged({"kinds": list(matrix.kinds), "totals": matrix.totals,
                        "primitives": len(matrix.rows),
                        "rows": [{"name": name, "module": module, "rules": counts,
                                  "by_trace": traced}
                                 for name, module, counts, traced in matrix.rows]}, "rows",
                       view.paging))


_ROUTE = 8  # JAX frames of a route listed (innermost), `route_total` counts all


_EXPLAIN_CHARS = 30_000  # an answer past this keeps its last exceptions short, or leaves


def explanation_document(answers, view: View) -> str:
    """`explain`'s answers under `exceptions`, in the paste's order, each chain's root
    cause first; the first placed one's fields (else the first's) also at the top level.
    A paste of many tracebacks is answered within _EXPLAIN_CHARS: from the last, its
    exceptions are cut to a short form (`"short": true`), then left out (`left_out`
    counts them) until it fits."""
    records = [_explanation(found, view.path) for found in answers]
    top = next((r for r, a in zip(records, answers) if a.placed), records[0] if records else {})
    document = {"root": str(view.root), **top, "tracebacks": len({a.segment for a in answers}),
                "exceptions": records, "unparsed": list(view.unparsed)}
    text = _dump(document)
    for i in range(len(records) - 1, 0, -1):
        if len(text) <= _EXPLAIN_CHARS:
            return text
        records[i] = _short(records[i])
        text = _dump(document)
    while len(text) > _EXPLAIN_CHARS and len(records) > 1:
        records.pop()
        document["left_out"] = document.get("left_out", 0) + 1
        text = _dump(document)
    return text


def _short(record: dict) -> dict:
    """An answer's short form: what it is, where it was raised, the user's line."""
    first = (record["raised_by"] or record["sites"] or [None])[0]
    user = record["user_frame"]
    return {"short": True, **{key: record[key] for key in ("segment", "label", "status",
                                                            "exception")},
            "message": record["message"].split("\n", 1)[0][:120],
            "at": f"{first['file']}:{first['line']}" if first else None,
            "user_frame": f"{user['file']}:{user['line']}" if user else None}


def _site(site, path) -> dict:
    return {"file": path(site.file), "line": site.line, "function": site.function,
            "exception": site.exception, "returned": site.returned}


def _frame(frame, path) -> dict:
    file = path(frame.jax_file) if frame.jax_file else frame.path
    return {"file": file, "line": frame.line, "function": frame.function, "code": frame.code}


def _called(called, path) -> dict | None:
    if called is None:
        return None
    return {**_frame(called.frame, path), "via": called.via, "raised": called.raised,
            "route": [_frame(f, path) for f in called.route[-_ROUTE:]],
            "route_total": len(called.route)}


def _explanation(found, path) -> dict:
    missing, diagnosis, older = found.missing, found.not_linear, found.older
    return {
        "segment": found.segment, "label": found.label, "wording": found.wording,
        "ran": found.ran,
        "why_not_jax": found.why_not_jax,
        "user_frame": None if found.user is None else _frame(found.user, path),
        "called_by_jax": _called(found.called, path),
        "transformed": [{"names": list(t.names), **_frame(t.at, path)}
                        for t in found.transformed],
        "fix": None if found.fix is None else {"family": found.fix.name, "text": found.fix.fix},
        "entry": None if found.entry is None else {
            "spelled": found.entry.spelled, "public": found.entry.public,
            "file": path(found.entry.file), "line": found.entry.line,
            "called_at": _frame(found.entry.called_at, path), "shown": found.entry.shown,
            "raised_by_on_path": found.on_path},
        "status": found.status.value, "exception": found.exception, "message": found.message,
        "sites": [_site(s, path) for s in found.sites],
        "raised_by": [_site(s, path) for s in found.raised_by],
        "missing_rule": None if missing is None else {
            "kind": missing.kind, "style": missing.style, "name": missing.name,
            "platforms": list(missing.platforms),
            "primitive": None if missing.primitive is None else {
                "name": missing.primitive.name, "file": path(missing.primitive.loc.file),
                "line": missing.primitive.loc.line,
                "rules": sorted({k for r in missing.primitive.rules for k in rule_kinds(r)})},
            "registrars_of": missing.registrars_of,
            "register_with": [_registration(r, str if missing.registrars_of else path)
                              for r in missing.register_with],
            "internal": [_registration(r, path) for r in missing.internal],
            "siblings": [{"name": s.name, "file": path(s.file), "line": s.line,
                          "function": s.function} for s in missing.siblings],
            "new_primitive_flag": missing.flag,
            "switched_off": [switched_off(o, path) for o in missing.switched_off]},
        "not_linear": None if diagnosis is None else {
            "primitive": diagnosis.primitive.name,
            "transposed_at": [{"file": f, "line": li, "code": c}
                              for f, li, c in diagnosis.called_at]},
        "has_rule": None if found.has_rule is None else _has_rule(found.has_rule, path),
        "older": None if older is None else {
            "version": older.version, "site": _site(older.site, str),
            "successors": [_site(s, path) for s in older.successors]},
        "closest": [{"similarity": n.similarity, "template": n.template, **_site(n.site, path)}
                    for n in found.closest]}


def _registration(registration, path) -> dict:
    return {"name": registration.name, "file": path(registration.file),
            "line": registration.line, "public": registration.public,
            "call": registration.call, "imports": registration.imports}


def _has_rule(diagnosis, path) -> dict:
    prim = diagnosis.primitive
    return {"kind": diagnosis.kind, "primitive": prim.name, "file": path(prim.loc.file),
            "line": prim.loc.line,
            "rules": [{"file": path(r.loc.file), "line": r.loc.line, "via": r.via,
                       "platform": r.platform,
                       "function": r.function.name if r.function else None,
                       "functions": [f.name for f in r.functions]}
                      for r in diagnosis.rules],
            "namesakes": [{"variable": p.variable, "file": path(p.loc.file),
                           "line": p.loc.line} for p in diagnosis.namesakes]}


def ladder_document(ladder, view: View) -> str:
    """A ladder.Ladder (schema in the README)."""
    return _dump({
        "root": str(ladder.root), "jax_version": ladder.jax_version,
        "rungs": [{"number": s.rung.number, "title": s.rung.title,
                   "use_when": list(s.rung.use_when), "avoid_when": list(s.rung.avoid_when),
                   "ask": list(s.rung.ask), "kinds": list(s.rung.kinds),
                   "commands": list(s.commands),
                   "machinery": [p._asdict() for p in s.places]} for s in ladder.steps],
        "checklist": list(ladder.checklist)})
