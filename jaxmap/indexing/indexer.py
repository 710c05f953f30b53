"""Build or refresh the index of a root: discover -> extract (worker.py, in parallel)
-> resolve -> store.

In two phases. The first holds what `locate PRIM` needs: primitives, rules,
definitions, public paths. The call graph (calls, binds, the tests that reach a
primitive), the value flow it is read from, and the messages a tree raises (only
`explain` reads them) are the second: built with the first by `jaxmap index`, else
on the first question that reads them, and kept (meta `graph`).

After an edit, a first-phase question (`locate`) reads the edited files without what
the call graph reads: where a file's outline only moved (moves.py: comments, blank
lines, an edit inside a body that registers nothing), its first phase's rows are moved
in place, and the call graph is kept, stale, with the facts it was read from (table
`stale`). The next question that reads the call graph reads the stale and edited files
whole: where a file's code only moved, or changed only in assignments nothing reads
(`unused = 1` in a body), since the call graph was read, its rows are moved too. A
function added that nothing names and that calls nothing changes the first phase
alone: its definition is put in among the first phase's rows, the tree not resolved
again unless a public module may export it, and the call graph carried over, in place
(carry.py). Any other change is resolved again with as much as the question needs:
a first-phase question does not wait for the call graph, which the next question that
reads it builds again, from facts kept for it."""

from __future__ import annotations

import functools
import gc
import os
import sqlite3
from contextlib import closing, contextmanager
from typing import TYPE_CHECKING, NamedTuple

from jaxmap import roots
from jaxmap.errors import StoreError
from jaxmap.store import write as store

if TYPE_CHECKING:
    from typing import Callable

    # progress(done, total, working): `working()` names the files in work right now
    Progress = Callable[[int, int, Callable[[], list[str]]], None]


class IndexReport(NamedTuple):
    """What an index run did; `path` is the index file's (named `index` in --json)."""

    root: str
    path: str
    files: int
    parsed: int
    removed: int
    rebuilt: bool
    primitives: int
    rules: int
    diagnostics: int
    skipped: tuple[tuple[str, str], ...] = ()  # Python files left out: (path, reason)
    solved: bool = False  # the call graph was solved again (not rebuilt from nothing)
    for_graph: int = 0  # of `parsed`, files read again (after this run's edits, once) for
    # what the call graph reads, which an index of the first phase alone left out

    @property
    def changed(self) -> bool:
        return self.rebuilt or self.parsed > 0 or self.removed > 0 or self.solved


class _Plan(NamedTuple):
    """What a run must do: facts kept from the old index, by path (digest, whether
    they hold what the call graph reads, blob: `_kept`), sources to parse, and of
    those, the ones already parsed (path -> (digest, facts, blob))."""

    kept: dict
    to_parse: list
    removed: int
    rebuilt: bool
    parsed: dict
    had_graph: bool = False  # the old index held a call graph, current or not
    carry: _Carry | None = None  # when the old call graph is carried over
    touched: tuple = ()  # sources whose stat changed but content did not
    unloaded: tuple = ()  # paths whose kept facts were not read (`_loaded` reads them)


class _Carry(NamedTuple):
    """What `_moved` found when the first phase must be resolved again, but the call
    graph's rows may be carried over (carry.py): what it parsed, the facts the call
    graph's rows were read from of each file edited since (path -> marshalled), for a
    question of the call graph how those rows' lines move (`move_lines`), what told the
    old index's definitions and primitives apart (store.identities), read with the
    facts, and the digests of the files parsed and the meta graph as read; `first`,
    where the first phase changed only by functions added (carry.py), need not be
    resolved again: how its rows change (write_carry.add_in_place's `first`)."""

    parsed: dict
    stale: dict
    second: dict
    ids: tuple[list, list]
    read: tuple[dict[str, str], str | None]
    first: tuple[dict, dict, list] | None = None


def build_index(root=None, *, rebuild: bool = False, progress: Progress | None = None,
                jobs: int | None = None, graph: bool = True) -> IndexReport:
    """Index `root` (default: the installed jax), re-parsing only files whose content
    changed since the last run; `rebuild` starts from nothing; `graph`: with the call
    graph (else only the first phase)."""
    from jaxmap.indexing import discover  # not on the query path: ensure_index checks by stat

    root = roots.resolve_root(root)
    store.check_cache_writable()
    tree = discover.list_files(root)
    path = store.index_path(root)
    expected = {**_version_key(), "root": str(root)}
    with _gc_paused():  # kept facts unmarshalled a file at a time: nothing to collect
        plan = _plan(root, tree, path, expected, rebuild, graph)
    if isinstance(plan, IndexReport):
        return plan._replace(skipped=tuple(tree.skipped))
    if plan.carry is not None:
        with _gc_paused():
            carried = _added(root, tree, path, plan, plan.carry)
            if carried is None:
                plan = _loaded(path, tree, plan)
                carried = _carried(root, tree, path, expected, plan, plan.carry) \
                    if plan.carry is not None else None
        if carried is not None:
            return carried
        plan = plan._replace(carry=None)  # written whole, its call graph solved or dropped
    # parsed: the changed files, those the call graph was stale for, and those whose
    # facts lacked what the call graph reads, read again
    read = {source.path for source in plan.to_parse} | set(plan.parsed)
    changed = len(read)
    with _gc_paused():
        facts, rows, lacking = _facts(root, tree, plan, progress, jobs,
                                      graph or _had_flow(plan))
        if graph:
            read |= _with_graph_facts(root, facts, rows, lacking, progress, jobs)
        from jaxmap.flow.graph import call_graph
        from jaxmap.indexing import resolve
        from jaxmap.indexing.worker import usable_cores

        with store.writing(path) as index:
            index.files(rows, tree.dirs)
            del rows  # (their marshalled facts are `facts`' too)
            # The call graph reports its modules as a second stage, counted from nought;
            # nought of nought ends the first, whether or not it counted files.
            if graph and progress is not None:
                progress(0, 0, list)
            linking = functools.partial(call_graph, progress=progress,
                                        jobs=jobs or usable_cores())
            resolution = resolve.resolve(facts, graph=linking if graph else None)
            del facts
            state = "1" if graph else store.DROPPED if plan.had_graph else "0"
            meta = {**expected, "jax_version": resolution.jax_version or "", store.GRAPH: state}
            index.finish(meta, resolution)
    rules = sum(len(p.rules) for p in resolution.primitives)
    return IndexReport(root, path, len(tree.files), len(read), plan.removed,
                       plan.rebuilt, len(resolution.primitives), rules,
                       len(resolution.diagnostics), tuple(tree.skipped),
                       solved=graph and not plan.rebuilt,
                       for_graph=0 if plan.rebuilt else len(read) - changed)


def _added(root: str, tree, path: str, plan: _Plan, carrying: _Carry) -> IndexReport | None:
    """The index at `path` updated in place, where `plan` carries its call graph over
    and the first phase changed only by functions added (`carrying.first`): its rows
    moved and the functions' definitions put in, the ids renumbered, the call graph's
    lines moved. None, with nothing written, where the first phase must be resolved
    (`carrying.first` is None, a line is missing from its map, or another writer
    changed the index since it was read)."""
    from jaxmap.store import write_carry

    if carrying.first is None:
        return None
    stale = _unsettled(carrying)
    counts = write_carry.add_in_place(
        path, _file_update(tree, plan, carrying), store.STALE if stale else "1",
        carrying.first, carrying.second, stale, carrying.read)
    if counts is None:
        return None
    return IndexReport(root, path, len(tree.files), len(carrying.parsed), 0, False, *counts,
                       tuple(tree.skipped))


def _file_update(tree, plan: _Plan, carrying: _Carry) -> tuple[list, list, list]:
    """The rows of the files read again, the new stats of those only touched, and
    every directory's: write_carry's `update`."""
    sources = {source.path: source for source in tree.files}
    return ([(p, sources[p].module, sources[p].mtime_ns, sources[p].size, digest, blob)
             for p, (digest, _, blob) in carrying.parsed.items()],
            [(s.path, s.mtime_ns, s.size) for s in plan.touched], list(tree.dirs))


def _loaded(path: str, tree, plan: _Plan) -> _Plan:
    """`plan` with the kept facts it left unread read; from nothing where they are not
    all there any more (another writer replaced the index since)."""
    if not plan.unloaded:
        return plan
    conn = store.connect_readonly(path)
    try:
        kept = store.load_facts(conn, plan.unloaded, _kept) if conn is not None else {}
    except (StoreError, sqlite3.DatabaseError):
        kept = {}
    finally:
        if conn is not None:
            conn.close()
    if len(kept) < len(plan.unloaded):
        return _Plan({}, tree.files, 0, True, {})
    return plan._replace(kept=kept, unloaded=())


def _carried(root: str, tree, path: str, expected: dict, plan: _Plan,
             carrying: _Carry) -> IndexReport | None:
    """The index at `path` updated in place, where `plan` carries its call graph over:
    the first phase resolved again from every file's facts, the call graph's ids
    renumbered and, for a graph question, its lines moved (`carrying`); None, with
    nothing written, where they do not carry over (an id stands for nothing now, a line
    is missing from its map, or another writer changed the index since it was read)."""
    from jaxmap.indexing import carry, resolve
    from jaxmap.store import write_carry

    facts = {p: blob for p, (_, _, blob) in plan.kept.items()}
    facts.update((p, blob) for p, (_, _, blob) in carrying.parsed.items())
    resolution = resolve.resolve(facts)
    renumbered = carry.renumbering(carrying.ids, resolution)
    stale = _unsettled(carrying)
    meta = {**expected, "jax_version": resolution.jax_version or "",
            store.GRAPH: store.STALE if stale else "1"}
    if renumbered is None or not write_carry.carry_in_place(
            path, _file_update(tree, plan, carrying), meta, resolution, renumbered,
            carrying.second, stale, carrying.read):
        return None
    rules = sum(len(p.rules) for p in resolution.primitives)
    return IndexReport(root, path, len(tree.files), len(carrying.parsed), 0, False,
                       len(resolution.primitives), rules, len(resolution.diagnostics),
                       tuple(tree.skipped))


def index_file(root=None) -> str:
    """Where the index of `root` lives, whether or not it exists yet."""
    return store.index_path(roots.resolve_root(root))


def ensure_index(root=None, *, progress: Progress | None = None,
                 graph: bool = False) -> tuple[str, IndexReport | None]:
    """The index of `root`, ready for queries (with the call graph if `graph`): built
    if missing or unreadable, refreshed if an indexed file or directory changed on disk
    (checked by stat, no tree walk), and given its call graph if asked for one."""
    root = roots.resolve_root(root)
    path = store.index_path(root)
    conn = store.connect_readonly(path)
    had_graph = False
    if conn is not None:
        with closing(conn):
            meta = store.read_meta(conn)
            expected = {**store.query_key(), "root": str(root)}
            had_graph = meta.get(store.GRAPH) == "1"  # and current
            if store.is_current(meta, expected) and _unchanged(root, conn) \
                    and (had_graph or not graph):
                return path, None
    return path, build_index(root, progress=progress, graph=graph)


def graph_kept(root=None) -> bool:
    """Whether the index of `root` holds a call graph of this jaxmap's making, current
    or stale after an edit: refreshing it re-reads only the files that changed."""
    root = roots.resolve_root(root)
    with _opened(root) as (_conn, meta):
        return store.is_current(meta, {**store.query_key(), "root": str(root)}) \
            and meta.get(store.GRAPH) in ("1", store.STALE)


@contextmanager
def _opened(root: str):
    """The index of `root` opened read-only, and its meta: (None, {}) where it has
    none."""
    conn = store.connect_readonly(store.index_path(root))
    if conn is None:
        yield None, {}
        return
    with closing(conn):
        yield conn, store.read_meta(conn)


def solve_as_indexed(root=None) -> bool:
    """Solve the call graph of the index of `root` again from its stored facts, as the
    build that wrote it did, writing nothing: a process that keeps its solves
    (flow/graph.py `keep_solves`) then solves the next edit from this one. False where
    the index is missing, not current or without a current call graph."""
    from jaxmap.flow.graph import call_graph
    from jaxmap.indexing import discover, resolve
    from jaxmap.indexing.worker import usable_cores

    root = roots.resolve_root(root)
    with _opened(root) as (conn, meta):
        if conn is None or not store.is_current(meta, {**_version_key(), "root": str(root)}) \
                or meta.get(store.GRAPH) != "1" or not _unchanged(root, conn):
            return False
        tree = discover.list_files(root)
        stored = store.load_facts(conn, [source.path for source in tree.files],
                                  read=lambda _facts: None)
    if len(stored) != len(tree.files):
        return False
    facts = {source.path: stored.pop(source.path)[2] for source in tree.files}  # (its order)
    with _gc_paused():
        resolve.resolve(facts, graph=functools.partial(call_graph, progress=None,
                                                       jobs=usable_cores()))
    return True


def _plan(root: str, tree, path: str, expected: dict, rebuild: bool,
          graph: bool) -> _Plan | IndexReport:
    """What to parse again; when no content changed and no call graph is missing, the
    run's report instead (after recording any new file and directory stats)."""
    from_scratch = _Plan({}, tree.files, 0, True, {})
    conn = None if rebuild else store.connect_readonly(path)
    if conn is None:
        return from_scratch
    with closing(conn):
        try:
            meta = store.read_meta(conn)
            current = store.is_current(meta, expected)  # else nothing of it is kept
            old = store.file_stats(conn) if current else {}
            unchanged, touched, to_parse = _classify(root, tree.files, old)
            removed = len(set(old) - {f.path for f in tree.files})
            state = meta.get(store.GRAPH) if current else None
            graph_missing = graph and state not in ("1", store.STALE)
            stale = store.stale_blobs(conn) if state == store.STALE else {}
            parsed: dict = {}
            carried = None
            if old and not removed and not graph_missing and \
                    all(source.path in old for source in to_parse):
                left = _moved(root, conn, path, to_parse, graph, (old, state),
                              [s for s in tree.files if s.path in stale], stale)
                if isinstance(left, _Carry):
                    parsed, carried = left.parsed, left
                elif left is not None:
                    parsed = left
                else:
                    if touched or to_parse or store.dir_stats(conn) != dict(tree.dirs):
                        store.update_stats(path, [(s.path, s.mtime_ns, s.size)
                                                  for s in touched], tree.dirs)
                    read = {s.path for s in to_parse} | (set(stale) if graph else set())
                    return IndexReport(root, path, len(tree.files), len(read), 0, False,
                                       *store.counts(conn))
            # carried with the first phase not resolved: the kept facts not read
            unread = carried is not None and carried.first is not None
            return _Plan(store.load_facts(conn, unchanged, _kept) if old and not unread else {},
                         to_parse, removed, not old, parsed,
                         state in ("1", store.STALE, store.DROPPED), carried,
                         tuple(touched), tuple(unchanged) if unread else ())
        except (StoreError, sqlite3.DatabaseError):
            return from_scratch


def _moved(root: str, conn: sqlite3.Connection, path: str, changed: list, graph: bool,
           read: tuple[dict, str | None], stale_sources: list,
           stale: dict[str, bytes]) -> dict | _Carry | None:
    """None when the rows of every changed file could be moved in place, and were; else
    what was parsed of them, path -> (digest, facts, blob), for the run to go on with,
    as a `_Carry` where the call graph's rows can be carried over.

    For a question of the first phase (`locate`), a file whose outline only moved
    (moves.py: its code only moved, or changed inside bodies that register nothing) is
    read without what the call graph reads, and its first phase's rows are moved; the
    call graph, if any, is left as it is and marked stale, the facts it was read from
    kept (`stale`). A question of the call graph reads each changed or stale file whole
    and compares it with the facts its call graph rows were read from: where its code
    only moved, or changed only in assignments nothing reads or in functions it adds
    that nothing names, those rows are moved too. Where only such functions were added
    to the outline, the first phase takes them, resolved again only where a public
    module may export them (`_without_resolving`), and the call graph is carried over
    (carry.py), stale for a question of the first phase. `read`: the files' stats and
    meta graph as the index held them when read."""
    from jaxmap.indexing import carry, moves, worker

    settling = [s for s in stale_sources if s.path not in {c.path for c in changed}] \
        if graph else []
    if not changed and not settling:
        return None
    stored = store.load_facts(conn, [source.path for source in changed])
    if len(stored) < len(changed):
        return {}
    sources = changed + settling
    stats, state = read
    has_graph = state not in store.WITHOUT_ROWS
    parsed = dict(zip((s.path for s in sources),
                      worker.extract_files(root, sources, flow=graph)))
    first, second, summaries = {}, {}, {}
    kept = dict(stale)
    added: dict[str, frozenset] = {}  # path -> functions added that nothing there names
    adds: dict[str, frozenset] = {}  # path -> those of the first phase, since it was read
    carrying = False  # whether the first phase changes by more than moved lines
    for source in sources:  # each changed (in `stored`), or stale, or both
        after, lines = parsed[source.path][1], None
        if graph:
            read_from = store.facts_of(source.path, stale[source.path]) \
                if source.path in stale else stored[source.path][1]
            lines = moves.graph_moves(read_from, after)
            if lines is None:
                found = moves.added_functions(read_from, after)
                if found is None:
                    return parsed
                lines, added[source.path] = found
            second[source.path] = lines
        if has_graph and source.path not in stale and source.path in stored:
            if "flow" not in stored[source.path][1]:
                return parsed
            kept[source.path] = stored[source.path][2]
        if source.path not in stored:  # a stale file not changed again: rows current
            continue
        before = stored[source.path][1]
        carrying = carrying or source.path in added  # its outline has them too
        found = _outline_change(before, after, None if source.path in stale else lines,
                                added.get(source.path), has_graph)
        if found is None:
            return parsed
        first[source.path], names = found
        if names:
            adds[source.path], carrying = names, True
            after = moves.without_functions(after, names)
        summaries[source.path] = moves.summaries(before, after)
    blobs = {p: blob for p, (_, _, blob) in parsed.items()}
    if added and _named_elsewhere(conn, added, blobs):
        return parsed
    digests = {source.path: stats[source.path][2] for source in sources}
    if carrying:
        patched = _without_resolving(conn, stats, parsed, (added, adds), blobs)
        return _Carry(parsed, kept, second, store.identities(conn), (digests, state),
                      (first, summaries, carry.added_definitions(
                          {p: parsed[p][1] for p in adds}, adds)) if patched else None)
    if graph:
        kept = {p: blob for p, blob in kept.items() if p not in second}
    rows = [(s.path, s.module, s.mtime_ns, s.size, parsed[s.path][0], parsed[s.path][2])
            for s in sources]
    return None if store.move_lines(path, rows, first, second, kept, (digests, state),
                                    summaries) else parsed


def _outline_change(before: dict, after: dict, lines: dict[int, int] | None,
                    added: frozenset | None, has_graph: bool
                    ) -> tuple[dict[int, int], frozenset] | None:
    """Old line -> new line of the first phase's rows of a file edited from facts
    `before` to `after`, and the functions it adds (empty where its outline only
    moved); None where it changed otherwise, or added functions to an index without a
    call graph. `lines`, `added`: what the call graph's moves found, read from `before`
    too, if any."""
    from jaxmap.indexing import moves

    if lines is not None:
        return lines, added or frozenset()
    lines = moves.outline_moves(before, after)
    if lines is not None:
        return lines, frozenset()
    if not has_graph:
        return None
    return moves.added_functions(moves.first_phase(before), moves.first_phase(after))


def _without_resolving(conn: sqlite3.Connection, stats: dict, parsed: dict,
                       added: tuple[dict[str, frozenset], dict[str, frozenset]],
                       blobs: dict[str, bytes]) -> bool:
    """Whether the first phase can take the functions added to it (`added`: those of
    the call graph's moves, checked already, and of the first phase's, path -> names)
    without being resolved again: no file's facts name them (`blobs`: those `parsed`),
    and no public module exports them (carry.exported)."""
    from jaxmap.indexing import carry

    checked, adds = added
    if not all(names <= checked.get(path, frozenset()) for path, names in adds.items()) \
            and _named_elsewhere(conn, adds, blobs):
        return False

    def imports() -> list[tuple[str, list]]:
        facts = {p: raw for p, (_, raw, _) in store.load_facts(
            conn, [p for p in stats if p not in parsed]).items()}
        facts.update((p, raw) for p, (_, raw, _) in parsed.items())
        return [(raw["module"], raw["imports"]) for raw in facts.values()]

    return not carry.exported({p: (parsed[p][1]["module"], names) for p, names in adds.items()},
                              imports)


def _unsettled(carry: _Carry) -> dict[str, bytes]:
    """The stale facts of a carried call graph that its line moves do not settle."""
    return {path: blob for path, blob in carry.stale.items() if path not in carry.second}


def _named_elsewhere(conn: sqlite3.Connection, added: dict[str, frozenset],
                     parsed: dict[str, bytes]) -> bool:
    """Whether a string of some file's facts holds a function another file adds
    (`added`: path -> names; moves.added_functions checked each file's own): of the
    facts just `parsed` (path -> marshalled), or else stored. A marshalled string is
    its own bytes, so finding the name's bytes in the facts' is enough (a longer name
    that holds it too only ever leaves out a move)."""
    every = {name.encode() for names in added.values() for name in names}
    for path, blob in parsed.items():
        others = every - {name.encode() for name in added.get(path, ())}
        if any(name in blob for name in others):
            return True
    return store.facts_holding(conn, every, leaving_out=set(parsed))


def _kept(facts: dict) -> bool:
    """What a run keeps of a file's stored facts, besides their marshalled form:
    whether they hold what the call graph reads (extracted with the value flow's)."""
    return "flow_spans" not in facts


def _had_flow(plan: _Plan) -> bool:
    """Whether the facts kept hold what the call graph reads: then files parsed again
    get it too, so that a call graph asked for later need not read them once more."""
    return any(flow for _, flow, _ in plan.kept.values())


def _unchanged(root: str, conn: sqlite3.Connection) -> bool:
    try:
        files, dirs = store.stamps(conn)
    except sqlite3.DatabaseError:
        return False
    prefix = f"{root}{os.sep}"  # plain strings: pathlib would double the cost here
    try:
        for path, mtime, size in files:
            stat = os.stat(prefix + path)
            if stat.st_mtime_ns != mtime or stat.st_size != size:
                return False
        return all(os.stat(prefix + path).st_mtime_ns == mtime for path, mtime in dirs) \
            and bool(files)
    except OSError:
        return False


def _classify(root: str, files: list, old: dict) -> tuple[list, list, list]:
    """Paths whose stored facts still hold, sources whose stat changed but content did
    not (a touch, a checkout), and sources to parse."""
    from jaxmap.indexing.worker import content_digest, read_source

    unchanged, touched, to_parse = [], [], []
    for source in files:
        previous = old.get(source.path)
        if previous is None:
            to_parse.append(source)
        elif previous[:2] == (source.mtime_ns, source.size):
            unchanged.append(source.path)
        elif content_digest(read_source(root, source.path) or b"") == previous[2]:
            unchanged.append(source.path)
            touched.append(source)
        else:
            to_parse.append(source)
    return unchanged, touched, to_parse


def _facts(root: str, tree, plan: _Plan, progress, jobs,
           flow: bool) -> tuple[dict[str, bytes], list[tuple], list[int]]:
    """The marshalled facts of every file (path -> blob), parsed now (with what the
    call graph reads, if `flow`) or kept, the file rows to store, and the places in
    those rows of the files kept whose facts lack what the call graph reads. Facts are
    held marshalled until the resolver reads them, a file at a time: unmarshalled, a
    tree's take five times the memory (250 MB for jax with its tests)."""
    from jaxmap.indexing import worker

    to_parse = [source for source in plan.to_parse if source.path not in plan.parsed]
    parsed = dict(zip((s.path for s in to_parse),
                      worker.extract_files(root, to_parse, progress=progress,
                                           jobs=jobs, flow=flow, loaded=False)))
    facts: dict[str, bytes] = {}
    rows: list[tuple] = []
    lacking: list[int] = []
    for source in tree.files:
        # Kept facts are taken from the plan: their old marshalled form goes with the row.
        if source.path in parsed or source.path in plan.parsed:
            digest, _, blob = parsed.get(source.path) or plan.parsed[source.path]
        else:
            digest, has_flow, blob = plan.kept.pop(source.path)
            if not has_flow:
                lacking.append(len(rows))
        facts[source.path] = blob
        rows.append((source.path, source.module, source.mtime_ns, source.size, digest, blob))
    return facts, rows, lacking


def _with_graph_facts(root: str, facts: dict[str, bytes], rows: list[tuple],
                      lacking: list[int], progress, jobs) -> set[str]:
    """What the call graph reads (callees, value flow) added to the facts that lack it
    (those kept from an index of the first phase alone, at `lacking` in `rows`), read
    again from their source on every core, and to their file `rows`; the paths read."""
    import marshal

    from jaxmap.indexing import worker

    paths = [rows[i][0] for i in lacking]
    done = worker.with_graph_facts(
        root, [(rows[i][0], rows[i][4], rows[i][3]) for i in lacking],
        {path: marshal.loads(facts[path]) for path in paths}, progress=progress, jobs=jobs,
        loaded=False)
    for i, (_, _, blob) in zip(lacking, done):
        facts[rows[i][0]] = blob
        rows[i] = (*rows[i][:5], blob)
    return set(paths)


@contextmanager
def _gc_paused():
    """Indexing allocates hundreds of thousands of small tuples that all stay alive until
    the end; the cyclic collector would scan them again and again for nothing. At the
    end they are moved to the oldest generation unscanned (freeze, then unfreeze): left
    young, the first collection after would scan them all once more (0.2 s). When a
    caller froze objects of its own (a one-shot `jaxmap` command freezes what it
    imports), all stay frozen instead, as unfreezing would thaw the caller's too: what
    indexing leaves in reference cycles is then not collected, so a process that
    indexes again and again (a server) must not keep objects frozen."""
    was_enabled = gc.isenabled()
    caller_froze = gc.get_freeze_count() > 0
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if not caller_froze:
            gc.unfreeze()
        if was_enabled:
            gc.enable()


def _version_key() -> dict[str, str]:
    """The query key plus what is too costly for the query path: the grammar version
    and a checksum of jaxmap's own code and queries."""
    from jaxmap.indexing import parse

    return {**store.query_key(), "grammar": parse.grammar_version(), "code": _code_checksum()}


_SHAPING = ("indexing", "flow", "knowledge", "store")


def _code_checksum() -> str:
    """Of every module and query of the packages that shape the index (this one, the
    value flow, the knowledge tables, the store), listed from their directories so
    that no module is left out."""
    import zlib

    jaxmap = os.path.dirname(os.path.dirname(__file__))
    sources = sorted(os.path.join(directory, name)
                     for package in _SHAPING for directory, _, names
                     in os.walk(os.path.join(jaxmap, package)) for name in names
                     if name.endswith((".py", ".scm")))
    checksum = 0
    for source in sources:
        with open(source, "rb") as handle:
            checksum = zlib.crc32(handle.read(), checksum)
    return f"{checksum:08x}"
