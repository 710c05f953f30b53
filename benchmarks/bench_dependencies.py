"""What an incremental re-solve of the value flow would have to redo after an edit.

    python benchmarks/bench_dependencies.py [--work DIR] [--edits a,b,c,d,e] [--timing]

Copies the installed jax into DIR, indexes the copy cold (one process, jobs=1) with
the value flow instrumented (monkeypatched here; jaxmap is unchanged), and prints:
the dependency graph of the solve (keys per mode, edges: the keys a key read while it
was computed, strongly connected components, the depth of their DAG); the size of the
memos and edges pickled. Then, for each edit of EDITS (applied to the copy, indexed
again, reverted): the keys that read an input the edit changed (dirty0), their eager
reverse closure over the edges, the keys whose values differ between the two cold
solves (early cutoff), and the modules whose rows changed. With --timing, no
instrumentation: the cold solve's time against reading every module's rows again
with every key memoised. Edit e (what a module-level name holds) checks the
recording: every key whose value changes should be in the eager closure.

Inputs are recorded per lookup: each flow-facts table by its key, the resolver by
method and arguments (a module's facts by attribute and key), and the flow's side
tables by entry (call sites, traced, array tables, holders, literals, alias tags,
names' values, leaves, made, hierarchy, bound reads; array iteration whole). The
resolver's env_of is not recorded: it is only handed to lookup, which is replayed.
Reads while a side table is built are the table's, not the key that asked first.
Nothing here asserts.
"""

from __future__ import annotations

import argparse
import ast
import gc
import os
import pickle
import shutil
import sys
import time
from collections import Counter, defaultdict

from jaxmap.flow import calls
from jaxmap.flow.arrays import Arrays
from jaxmap.flow.boundcalls import BoundCalls
from jaxmap.flow.callsites import CallSites
from jaxmap.flow.engine import Engine, in_tests
from jaxmap.flow.flow import Flow
from jaxmap.flow.hierarchy import Hierarchy
from jaxmap.flow.implicitcalls import ImplicitCalls
from jaxmap.flow.members import Members
from jaxmap.flow.scopes import Scopes

sys.path.insert(0, os.path.dirname(__file__))
import bench_order  # noqa: E402  (its row queries)

# (file under the copy, old text, new text): each a realistic small edit.
EDITS = {
    "a": ("jax/_src/lax/parallel.py",  # a call in _psum_transpose_rule's body
          "  return (psum_p.bind(cts, axes=tuple(named_axes),",
          "  return (pmax_p.bind(cts, axes=tuple(named_axes),"),
    "b": ("jax/_src/lax/lax.py",  # what a leaf helper returns
          "  out = full_like(x, shape=(), fill_value=1,\n"
          "                  sharding=x_aval.sharding.update(spec=P()))\n  return out\n",
          "  out = full_like(x, shape=(), fill_value=1,\n"
          "                  sharding=x_aval.sharding.update(spec=P()))\n  return x_aval\n"),
    "c": ("jax/_src/core.py",  # a call added on a line of its own (the lines below move)
          "def to_concrete_value(x):\n  if isinstance(x, Tracer):",
          "def to_concrete_value(x):\n  typeof(x)\n  if isinstance(x, Tracer):"),
    "d": ("jax/_src/core.py",  # a top-level def nothing calls, at the end
          None, "\n\ndef _nothing_calls_this(x):\n  return typeof(x)\n"),
    # a check of the instrumentation: values change (what a module-level name holds)
    "e": ("jax/_src/lax/lax.py",
          "_zeros: Callable = partial(full_like, fill_value=0)",
          "_zeros: Callable = partial(full, fill_value=0)"),
}
MISSING = "<missing>"


class Recorder:
    """The frames being computed: [who, keys read, inputs read]; who is a mode key
    (through, key) or a root ("<rows>", module), ("<table>", name), ("<sites>",)."""

    def __init__(self):
        self.stack = [[("<other>",), set(), set()]]
        self.edges: dict = {}  # who -> keys read
        self.reads: dict = {}  # who -> inputs read

    def push(self, who):
        self.stack.append([who, set(), set()])

    def pop(self):
        who, edges, reads = self.stack.pop()
        if who[0] in ("<rows>", "<table>", "<sites>", "<other>"):  # roots accumulate
            self.edges.setdefault(who, set()).update(edges)
            self.reads.setdefault(who, set()).update(reads)
        else:  # a key computed again (after sites() cleared the memos) replaces its own
            self.edges[who], self.reads[who] = edges, reads

    def read(self, what):
        self.stack[-1][2].add(what)


REC: Recorder | None = None


def _read(what):
    if REC is not None:
        REC.read(what)


class RecDict(dict):
    """A flow-facts table that records each read, by key, or whole when iterated."""

    def __init__(self, tag, *args):
        super().__init__(*args)
        self.tag = tag

    def __getitem__(self, key):
        _read(("t", self.tag, key))
        return super().__getitem__(key)

    def get(self, key, default=None):
        _read(("t", self.tag, key))
        return super().get(key, default)

    def __contains__(self, key):
        _read(("t", self.tag, key))
        return super().__contains__(key)

    def pop(self, key, *default):
        _read(("t", self.tag, key))
        return super().pop(key, *default)

    def _whole(self):
        _read(("iter", self.tag))

    def items(self):
        self._whole()
        return super().items()

    def keys(self):
        self._whole()
        return super().keys()

    def values(self):
        self._whole()
        return super().values()

    def __iter__(self):
        self._whole()
        return super().__iter__()


class RecList(list):
    def __iter__(self):
        _read(("iter", self.tag))
        return super().__iter__()

    def __add__(self, other):
        _read(("iter", self.tag))
        return list(self) + list(other)


class RecSet(set):
    """The set of decorated definitions, each membership read recorded."""

    def __contains__(self, key):
        _read(("t", "decorated", key))
        return super().__contains__(key)


class SideDict(dict):
    """A side table of the flow read by entry (`get` or `[]`); `made` only through
    `_made_once`, by class name."""

    def __init__(self, tag, *args):
        super().__init__(*args)
        self.tag = tag

    def get(self, key, default=None):
        if self.tag != "made":
            _read(("side", self.tag, key))
        return super().get(key, default)

    def __getitem__(self, key):
        if self.tag != "made":
            _read(("side", self.tag, key))
        return super().__getitem__(key)


class Holders(defaultdict):
    def get(self, key, default=None):
        _read(("side", "holders", key))
        return super().get(key, default)


class View:
    """A read-only dict of the resolver's facts, recording each read by key."""

    def __init__(self, tag, table):
        self.tag, self.table = tag, table

    def __contains__(self, key):
        _read(("facts", *self.tag, key))
        return key in self.table

    def get(self, key, default=None):
        _read(("facts", *self.tag, key))
        return self.table.get(key, default)

    def __getitem__(self, key):
        _read(("facts", *self.tag, key))
        return self.table[key]

    def _whole(self):
        _read(("factsall", *self.tag))

    def items(self):
        self._whole()
        return self.table.items()

    def keys(self):
        self._whole()
        return self.table.keys()

    def values(self):
        self._whole()
        return self.table.values()

    def __iter__(self):
        self._whole()
        return iter(self.table)

    def __len__(self):
        self._whole()
        return len(self.table)


class FactsView:
    def __init__(self, module, facts):
        self._module, self._facts = module, facts

    def __getattr__(self, attr):
        value = getattr(self._facts, attr)
        if isinstance(value, dict):
            return View((self._module, attr), value)
        _read(("factsall", self._module, attr))
        return value


class NamesProxy:
    """The resolver as the flow sees it: each method call recorded with its arguments."""

    def __init__(self, names):
        self._names = names
        self.modules = View(("<modules>",), names.modules)

    def facts(self, module):
        _read(("facts", "<modules>", module))
        return FactsView(module, self._names.facts(module))

    def __getattr__(self, method):
        real = getattr(self._names, method)
        if isinstance(real, dict):  # (stars, imports, top_names): by key
            return View((f"<{method}>",), real)
        if not callable(real):
            _read(("namesattr", method))
            return real

        if method == "env_of":  # read only to hand to lookup, whose reads are replayed
            return real

        def recorded(*args):
            shown = args[:3] + ("<env>",) if len(args) > 3 and args[3] is not None else args
            _read(("names", method, shown))
            return real(*args)
        return recorded


def _flow_tables(flow) -> dict:
    """The flow-facts tables of a `Flow` (FlowFacts' attributes)."""
    return {name: table for name, table in vars(flow).items()
            if name in _FACT_TABLES}


_FACT_TABLES = ("_assigned", "_params", "_defs", "_signatures", "_array_results",
                "_array_overloads", "_return_annotations", "_locals", "_stores_by",
                "_returns", "_attrs", "_foreign", "_stores", "_calls", "_decorations",
                "_decorated_defs", "_stacked", "_raises", "_fields", "_field_types",
                "_field_annotations", "_operators", "decorated", "_loops", "_by_module")


class World:
    """What one cold solve leaves for comparison."""

    tables: dict
    memos: tuple
    names: object
    side: dict
    hierarchy: Hierarchy
    bound: dict
    edges: dict
    reads: dict
    solve_s: float
    started: float
    path: str


CURRENT: World | None = None


def install(instrument: bool) -> None:
    """Monkeypatch the flow for one process: snapshots always, recording if `instrument`."""
    real_init, real_close = Flow.__init__, Flow.close

    def init(self, names, flows):
        real_init(self, names, flows)
        CURRENT.tables = {name: (list(t) if isinstance(t, list) else
                                 set(t) if isinstance(t, set) else dict(t))
                          for name, t in _flow_tables(self).items()}
        CURRENT.names = names
        CURRENT.started = time.perf_counter()
        if not instrument:
            return
        for name, table in _flow_tables(self).items():
            if type(table) is dict:
                setattr(self, name, RecDict(name, table))
            elif type(table) is set:
                setattr(self, name, RecSet(table))
            elif type(table) is list:
                wrapped = RecList(table)
                wrapped.tag = name
                setattr(self, name, wrapped)
        self.names = NamesProxy(names)
        self._holders = Holders(set, self._holders)
        self._literals = SideDict("literals")
        self._alias_tags = SideDict("alias_tags")
        self._of_names = SideDict("of_names")
        self._made = SideDict("made")  # (read by entry in _made_once)

    def close(self):
        CURRENT.solve_s = time.perf_counter() - CURRENT.started
        CURRENT.memos = (dict(self._through_memo), dict(self._direct_memo))
        CURRENT.hierarchy = self.classes
        CURRENT.bound = dict(self._bound._reads)
        CURRENT.side = {
            "sites": dict(self._sites or {}), "traced": dict(self._traced or {}),
            "tables": self._tables or {}, "iteration": self._iteration_functions,
            "holders": dict(self._holders), "literals": dict(self._literals),
            "alias_tags": dict(self._alias_tags), "of_names": dict(self._of_names),
            "made": dict(self._made), "leaves": set(self._leaves) | set(self._top_names)}
        if WARM is not None:
            WARM(self)
        real_close(self)

    Flow.__init__, Flow.close = init, close
    if instrument:
        _instrument()


def _instrument() -> None:
    real_cached = Engine._cached

    def cached(self, key, compute):
        mode_key = (self._through, key)
        REC.stack[-1][1].add(mode_key)
        if key in self._memo or mode_key in self._open:
            return real_cached(self, key, compute)
        REC.push(mode_key)
        try:
            return real_cached(self, key, compute)
        finally:
            REC.pop()

    Engine._cached = cached

    real_name = Scopes._name

    def name(self, module, owner, name):  # (reads the memo itself before _cached)
        REC.stack[-1][1].add((self._through, ("name", module, owner, name)))
        return real_name(self, module, owner, name)
    Scopes._name = name

    def as_root(cls, method, who, building=lambda self, *a: True):
        real = getattr(cls, method)

        def wrapped(self, *args):
            if not building(self, *args):
                return real(self, *args)
            REC.push(who(*args) if callable(who) else who)
            try:
                return real(self, *args)
            finally:
                REC.pop()
        setattr(cls, method, wrapped)

    as_root(calls._Modules, "_rows", lambda module: ("<rows>", module))
    as_root(CallSites, "sites", ("<sites>",), lambda self, *_: self._sites is None)
    as_root(Arrays, "_read_tables", ("<table>", "tables"))
    as_root(Arrays, "array_iteration", ("<table>", "iteration"),
            lambda self: self._iteration_functions is None)
    as_root(ImplicitCalls, "may_name", ("<table>", "leaves"),
            lambda self, text: not self._leaves_read)
    real_made_once = Members._made_once

    def made_once(self, cls):
        _read(("side", "made", (in_tests(self._split(cls)[0]), cls.rpartition(".")[2])))
        return real_made_once(self, cls)
    Members._made_once = made_once

    real_iteration = Arrays.array_iteration

    def array_iteration(self):
        _read(("side", "iteration"))
        return real_iteration(self)
    Arrays.array_iteration = array_iteration

    real_traced = Arrays.traced

    class Traced:
        def __init__(self, table):
            self.table = table

        def get(self, key, default=None):
            _read(("side", "traced", key))
            return self.table.get(key, default)

    def traced(self):
        if self._traced is None and self._building_sites:
            _read(("side", "traced while sites are built"))
            return {}
        if self._traced is None:
            REC.push(("<table>", "traced"))
            try:
                real_traced(self)
            finally:
                REC.pop()
        return Traced(self._traced)  # (only read by .get)
    Arrays.traced = traced

    real_handing = CallSites.handing

    def handing(self, module, owner, def_name, tests=False):
        _read(("side", "sites", (self._qual(module, owner), def_name)))
        return real_handing(self, module, owner, def_name, tests)
    CallSites.handing = handing

    real_entry = Arrays._table_entry

    def table_entry(self, table, key):
        _read(("side", "tables", (table, key)))
        return real_entry(self, table, key)
    Arrays._table_entry = table_entry

    real_may_name, real_may_be = ImplicitCalls.may_name, ImplicitCalls._may_be_function

    def may_name(self, text):
        if self._leaves_read:
            _read(("side", "leaves", text.rpartition(".")[2]))
        return real_may_name(self, text)

    def may_be(self, node):
        name = node.id if isinstance(node, ast.Name) else \
            node.attr if isinstance(node, ast.Attribute) else None
        if name is not None:
            _read(("side", "leaves", name))
        return real_may_be(self, node)
    ImplicitCalls.may_name, ImplicitCalls._may_be_function = may_name, may_be

    for method in ("mro", "family"):
        real = getattr(Hierarchy, method)

        def hier(self, cls, _real=real, _method=method):
            _read(("hier", _method, cls))
            return _real(self, cls)
        setattr(Hierarchy, method, hier)

    real_reads = BoundCalls.reads

    def reads(self, value):
        _read(("side", "bound", value))
        return real_reads(self, value)
    BoundCalls.reads = reads


WARM = None  # set by --timing: rows read again, every key memoised


def build(root: str, cache: str, rebuild: bool) -> World | None:
    """Index `root` (jobs=1); the solve's world, or None where no solve ran."""
    from jaxmap.indexing import indexer
    global CURRENT, REC
    CURRENT, REC = World(), Recorder()
    CURRENT.solve_s = None
    os.environ["JAXMAP_CACHE_DIR"] = cache
    report = indexer.build_index(root, rebuild=rebuild, jobs=1)
    world = CURRENT
    world.edges, world.reads, world.path = REC.edges, REC.reads, report.path
    CURRENT, REC = None, None
    return world if world.solve_s is not None else None


# ---- the dependency graph -------------------------------------------------------

def components(nodes, edges):
    """Tarjan's SCCs (iterative), in reverse topological order (a component after
    every component it reaches)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(edges.get(start, ())))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            node, it = work[-1]
            pushed = False
            for nxt in it:
                if nxt not in nodes:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(edges.get(nxt, ()))))
                    pushed = True
                    break
                if nxt in on:
                    low[node] = min(low[node], index[nxt])
            if pushed:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    members.append(member)
                    if member == node:
                        break
                out.append(members)
    return out


def kind(who) -> str:
    key = who[1] if isinstance(who[0], bool) else who
    return str(key[0])


def component_of(world: World) -> dict:
    """Each memoised key -> the members of its component (one list shared by them)."""
    through, direct = world.memos
    keys = {(True, k) for k in through} | {(False, k) for k in direct}
    return {m: members for members in components(keys, world.edges) for m in members}


def expanded(keys, of: dict) -> int:
    """How many keys recomputing `keys` recomputes: each with its whole component."""
    seen, count = set(), 0
    for k in keys:
        members = of.get(k)
        if members is None:
            count += isinstance(k[0], bool)
        elif id(members) not in seen:
            seen.add(id(members))
            count += len(members)
    return count


def describe_graph(world: World) -> dict:
    through, direct = world.memos
    # one object for each key, the memo's: shared when pickled with the memos
    keys = {(True, k): (True, k) for k in through} | {(False, k): (False, k) for k in direct}
    edges = {keys[who]: {keys[e] for e in es if e in keys}
             for who, es in world.edges.items() if who in keys}
    n_edges = sum(len(es) for es in edges.values())
    sccs = components(keys, edges)
    of = {}
    depth = {}
    for i, members in enumerate(sccs):
        for m in members:
            of[m] = i
        below = [depth[of[e]] for m in members for e in edges.get(m, ()) if of.get(e, i) != i]
        depth[i] = 1 + max(below, default=0)
    sizes = Counter(len(c) for c in sccs)
    largest = sorted(sccs, key=len, reverse=True)[:5]
    print(f"keys: through {len(through)}, direct {len(direct)}; recorded keys not in the "
          f"final memos (cleared by sites()): "
          f"{sum(1 for w in world.edges if isinstance(w[0], bool) and w not in keys)}")
    print(f"edges between memoised keys: {n_edges} (of which through->direct of the same key: "
          f"{sum(1 for w, es in edges.items() if w[0] and (False, w[1]) in es)})")
    print(f"SCCs: {len(sccs)}; singletons {sizes[1]}; size histogram "
          f"{sorted(sizes.items())[:10]} ... largest {[len(c) for c in largest]}")
    for members in largest[:3]:
        print("  largest SCC kinds:", Counter(f"{'T' if m[0] else 'D'}:{kind(m)}"
                                             for m in members).most_common(8))
    print(f"depth of the SCC DAG (longest chain of components): {max(depth.values())}")
    print("keys by kind:", Counter(kind(k) for k in keys).most_common())
    return edges


def persistence(world: World, edges: dict) -> None:
    for label, obj in (("memos (both, together)", world.memos),
                       ("edges (dict of sets)", edges),
                       ("memos + edges together", (world.memos, edges))):
        started = time.perf_counter()
        blob = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        dumped = time.perf_counter() - started
        gc.collect()
        before = _rss()
        started = time.perf_counter()
        loaded = pickle.loads(blob)
        took = time.perf_counter() - started
        grown = _rss() - before
        print(f"pickle {label}: {len(blob) / 2**20:.1f} MiB, dump {dumped:.2f} s, "
              f"load {took:.2f} s, RSS +{grown / 2**20:.0f} MiB")
        del loaded, blob
    gc.collect()
    sets = sum(sys.getsizeof(es) for es in edges.values()) + sys.getsizeof(edges)
    print(f"edge sets in memory (containers only, keys shared with the memo): "
          f"{sets / 2**20:.0f} MiB")


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# ---- what an edit changes -------------------------------------------------------

_LINE_FIELDS = frozenset({"line", "end_line", "lines", "first_line"})


def norm(value, depth=0, lineless=False):
    """A value comparable across two solves (syntax trees by their dump); `lineless`:
    named fields that hold line numbers, and the places of syntax trees, left out."""
    if depth > 12:
        raise ValueError("too deep to compare")
    depth += 1
    if isinstance(value, ast.AST):  # (its lines and columns too, unless lineless)
        return ("ast", ast.dump(value, include_attributes=not lineless))
    if hasattr(value, "_fields") and isinstance(value, tuple):  # a NamedTuple
        return (type(value).__name__, norm(dict(zip(value._fields, value)), depth, lineless))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(norm(v, depth, lineless) for v in value))
    if isinstance(value, (set, frozenset)):
        return frozenset(norm(v, depth, lineless) for v in value)
    if isinstance(value, dict):
        return ("dict", frozenset((norm(k, depth, lineless), norm(v, depth, lineless))
                                  for k, v in value.items()
                                  if not (lineless and k in _LINE_FIELDS)))
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return (type(value).__name__, norm(vars(value), depth, lineless))
    return value


# How to leave the line numbers out of an entry of a flow-facts table.
_WITHOUT_LINES = {
    "_assigned": lambda e: tuple(x[:2] for x in e),
    "_defs": lambda e: tuple(x[0] for x in e),
    "_decorated_defs": lambda e: tuple(x[:2] for x in e),
    "_raises": lambda e: tuple(x[:2] for x in e),
    "_loops": lambda e: tuple(x[:2] for x in e),
    "_operators": lambda e: tuple(x[:3] for x in e),
    "_by_module": lambda e: tuple(x[:4] for x in e),
    "_calls": lambda e: tuple(x[:4] for x in e),
    "_decorations": lambda e: tuple(x[:4] for x in e),
}


UNCOMPARABLE = Counter()


def same(a, b, lineless=False) -> bool:
    try:
        if a == b:
            return True
    except Exception:
        pass
    try:
        return norm(a, lineless=lineless) == norm(b, lineless=lineless)
    except (ValueError, RecursionError):
        if repr(a) == repr(b):  # a closure's values holding themselves
            return True
        UNCOMPARABLE[type(a).__name__, repr(a)[:300]] += 1
        return False


class Inputs:
    """Whether an input the old solve read reads otherwise in the new world."""

    def __init__(self, old: World, new: World, lineless: bool = False):
        self.old, self.new, self.lineless = old, new, lineless
        self.changed_rows: dict[str, set] = {}
        self.whole = {}
        for name, table in old.tables.items():
            other = new.tables.get(name)
            strip = _WITHOUT_LINES.get(name) if lineless else None
            if isinstance(table, dict):
                def entry(t, k, strip=strip):
                    found = t.get(k, MISSING)
                    return strip(found) if strip and found is not MISSING else found
                self.changed_rows[name] = {k for k in table.keys() | other.keys()
                                           if not self.same(entry(table, k), entry(other, k))}
                self.whole[name] = bool(self.changed_rows[name])
            elif isinstance(table, set):
                self.changed_rows[name] = table ^ other
                self.whole[name] = bool(self.changed_rows[name])
            else:
                self.whole[name] = not self.same(strip(table) if strip else table,
                                                 strip(other) if strip else other)
        self.cache: dict = {}

    def same(self, a, b) -> bool:
        return same(a, b, self.lineless)

    def changed(self, what) -> bool:
        found = self.cache.get(what)
        if found is None:
            found = self.cache[what] = self._changed(what)
        return found

    def _changed(self, what) -> bool:
        tag = what[0]
        if tag == "t":
            rows = self.changed_rows.get(what[1])
            return what[2] in rows if rows is not None else self.whole[what[1]]
        if tag == "iter":
            return self.whole[what[1]]
        if tag in ("facts", "factsall"):
            return not self.same(_facts_value(self.old.names, what),
                                 _facts_value(self.new.names, what))
        if tag == "names":
            return not self.same(_call(self.old.names, what), _call(self.new.names, what))
        if tag == "namesattr":
            return not self.same(getattr(self.old.names, what[1]),
                                 getattr(self.new.names, what[1]))
        if tag == "hier":
            return not self.same(getattr(self.old.hierarchy, what[1])(what[2]),
                                 getattr(self.new.hierarchy, what[1])(what[2]))
        if tag == "side":
            return not self.same(_side(self.old, what), _side(self.new, what))
        raise ValueError(what)


def _facts_value(names, what):
    if what[1] == "<modules>":  # a module's presence; all the facts of the tree
        return what[2] in names.modules if len(what) > 2 else names.modules
    if what[1].startswith("<"):
        table = getattr(names, what[1][1:-1])
        return table.get(what[2], MISSING) if what[0] == "facts" else table
    if what[1] not in names.modules:
        return MISSING
    table = getattr(names.facts(what[1]), what[2])
    return table.get(what[3], MISSING) if what[0] == "facts" else table


def _call(names, what):
    _, method, args = what
    if args and args[-1] == "<env>":
        args = (*args[:3], names.env_of(args[1]))
    try:
        return getattr(names, method)(*args)
    except Exception as error:  # a module gone: what it raises is its value
        return ("raised", type(error).__name__)


def _side(world: World, what):
    name = what[1]
    if name == "bound":
        return world.bound.get(what[2], MISSING)
    if name == "traced while sites are built":
        return ()
    table = world.side[name]
    if name == "leaves":
        return what[2] in table
    if name == "made":
        return table.get(what[2][0], {}).get(what[2][1], 0)
    if name == "tables":
        return table.get(what[2][0], {}).get(what[2][1], MISSING)
    if len(what) == 2:
        return table
    return table.get(what[2], MISSING)


def readers_of(edges: dict) -> dict:
    readers = defaultdict(set)
    for who, es in edges.items():
        for e in es:
            readers[e].add(who)
    return readers


def closure(seeds: set, readers: dict) -> set:
    seen, todo = set(seeds), list(seeds)
    while todo:
        for r in readers.get(todo.pop(), ()):
            if r not in seen:
                seen.add(r)
                todo.append(r)
    return seen


def compare(label: str, old: World, new: World, old_rows: dict) -> None:
    print(f"\n== edit {label}: solve {new.solve_s:.1f} s")
    inputs = Inputs(old, new)
    print("  flow-facts tables with changed entries:",
          {n: len(r) for n, r in inputs.changed_rows.items() if r},
          "lists changed:", [n for n, w in inputs.whole.items()
                             if w and n not in inputs.changed_rows])
    keys_total = len(old.memos[0]) + len(old.memos[1])
    is_key = lambda w: isinstance(w[0], bool)  # noqa: E731
    dirty = {who for who, reads in old.reads.items() if any(inputs.changed(r) for r in reads)}
    by_input = Counter(r[0] if r[0] != "side" else f"side:{r[1]}"
                       for r, c in inputs.cache.items() if c)
    print("  values too deep to compare (counted as changed):", dict(UNCOMPARABLE))
    UNCOMPARABLE.clear()
    print(f"  changed inputs read: {sum(inputs.cache.values())} of {len(inputs.cache)} "
          f"distinct ({dict(by_input)})")
    for r in [r for r, c in inputs.cache.items() if c][:8]:
        print("    changed input:", str(r)[:160])
    roots = sorted(w for w in dirty if not is_key(w))
    print(f"  dirty0: {sum(map(is_key, dirty))} keys ({expanded(dirty, SCC_OF)} with their "
          f"components), {len(roots)} roots {roots[:6]}")
    # Eager: a side table is dirty once a key it read is; then every key reading it.
    edges = {w: set(es) for w, es in old.edges.items()}
    side_nodes = {"sites": ("<sites>",), "traced": ("<table>", "traced"),
                  "tables": ("<table>", "tables"), "iteration": ("<table>", "iteration"),
                  "leaves": ("<table>", "leaves")}
    for who, reads in old.reads.items():
        for r in reads:
            if r[0] == "side" and r[1] in side_nodes:
                edges[who].add(side_nodes[r[1]])
    readers = readers_of(edges)
    eager = closure(dirty, readers)
    eager_keys = sum(map(is_key, eager))
    rows_eager = {w[1] for w in eager if w[0] == "<rows>"}
    print(f"  eager closure: {eager_keys} keys ({100 * eager_keys / keys_total:.1f}% of "
          f"{keys_total}); side tables dirty: "
          f"{sorted(n for n, s in side_nodes.items() if s in eager)}; "
          f"modules whose rows read a dirty key: {len(rows_eager)}")
    big = set(max(SCC_OF.values(), key=len))
    print(f"  of them in the largest SCC: {len(eager & big)} of {len(big)}")
    per_lookup = closure(dirty, readers_of(old.edges))
    n = sum(map(is_key, per_lookup))
    print(f"  closure with side tables tracked per lookup (their changed entries in dirty0): "
          f"{n} keys ({100 * n / keys_total:.1f}%); modules: "
          f"{sum(1 for w in per_lookup if w[0] == '<rows>')}")
    lineless = Inputs(old, new, lineless=True)
    dirty_ll = {who for who, reads in old.reads.items()
                if any(lineless.changed(r) for r in reads)}
    eager_ll = closure(dirty_ll, readers)
    per_lookup_ll = closure(dirty_ll, readers_of(old.edges))
    print(f"  line numbers left out of the inputs: dirty0 {sum(map(is_key, dirty_ll))} keys "
          f"({expanded(dirty_ll, SCC_OF)} with their components), "
          f"{sum(1 for w in dirty_ll if not is_key(w))} roots; eager closure "
          f"{sum(map(is_key, eager_ll))} keys; per lookup {sum(map(is_key, per_lookup_ll))} "
          f"keys, {sum(1 for w in per_lookup_ll if w[0] == '<rows>')} modules")
    # Early cutoff: the values of the two cold solves.
    changed = set()
    only_old = only_new = 0
    for mode, (a, b) in enumerate(zip(old.memos, new.memos)):
        through = mode == 0
        for k, v in a.items():
            w = b.get(k)
            if w is None:
                only_old += 1
                changed.add((through, k))
            elif v != w:
                changed.add((through, k))
        for k in b.keys() - a.keys():
            only_new += 1
            changed.add((through, k))
    differ = len(changed) - only_old - only_new
    old_readers = readers_of(old.edges)
    new_readers = readers_of(new.edges)
    cut = set(changed)
    for k in changed:
        cut |= old_readers.get(k, set()) | new_readers.get(k, set())
    cut_old = {k for k in cut if k in SCC_OF or not is_key(k)}
    print(f"  early cutoff, recomputed with components: dirty0 (lines left out) and the "
          f"readers of changed keys: {expanded(dirty_ll | cut_old, SCC_OF)} keys")
    print(f"  early cutoff: {differ} keys differ, {only_old} only before, {only_new} only after;"
          f" with their direct readers: {sum(map(is_key, cut))} keys, "
          f"{sum(1 for w in cut if w[0] == '<rows>')} modules' rows; kinds changed: "
          f"{Counter(kind(k) for k in changed).most_common(6)}")
    def held(world, k):
        return (world.memos[0] if k[0] else world.memos[1]).get(k[1])
    differing = {k for k in changed if held(old, k) is not None and held(new, k) is not None}
    missed = {k for k in differing if k not in eager}
    unasked = {k for k in changed if k in SCC_OF and k not in eager and k not in differing}
    for k in list(missed)[:3]:
        print("    value changed, not in the eager closure:", str(k)[:200])
        print(f"      before-after {sorted(map(str, held(old, k) - held(new, k)))[:3]}, "
              f"after-before {sorted(map(str, held(new, k) - held(old, k)))[:3]}; "
              f"component of {len(SCC_OF.get(k, ()))}")
        print(f"      reads {len(old.reads.get(k, ()))} inputs; keys read: "
              f"{[(str(e)[:90], e in changed) for e in old.edges.get(k, ())][:6]}")
        print(f"      in the new solve it read: "
              f"{[(str(e)[:90], e in changed) for e in new.edges.get(k, ())][:6]}")
    print(f"  dirty0 keys among the changed: {len(dirty & changed)}; keys whose value changed "
          f"outside the eager closure: {len(missed)} (instrumentation misses); keys of the old "
          f"solve outside it no longer asked: {len(unasked)}")
    new_rows = bench_order._rows(new.path)
    for table, query_index, file_index in (("calls", 1, 1), ("binds", 1, 1), ("tests", 2, 2)):
        a, b = old_rows[table], new_rows[table]
        diff = a ^ b
        modules = {row[file_index] for row in diff}
        # without the line: (calls: 7th column; binds: 4th; tests: 4th)
        line = {"calls": 6, "binds": 3, "tests": 3}[table]
        strip = lambda rows: {r[:line] + r[line + 1:] for r in rows}  # noqa: E731
        lineless = strip(a) ^ strip(b)
        print(f"  {table} rows: {len(a - b)} gone, {len(b - a)} new, in {len(modules)} modules "
              f"{sorted(modules)[:4]}; ignoring lines: {len(lineless)} rows, modules "
              f"{sorted({r[file_index] for r in lineless})[:4]}")


def warm_timing(flow_ref):
    """Read every module's rows again, every key memoised (after the cold solve)."""
    names, ids = CALL_ARGS["names"], CALL_ARGS["ids"]
    flow = flow_ref
    # the tables calls.py consumes module by module, given back
    for name in ("_by_module", "_loops", "_raises", "_operators"):
        setattr(flow, name, dict(CURRENT.tables[name]))
    before = len(flow._through_memo) + len(flow._direct_memo)
    modules = calls._Modules(names, ids, flow, None)
    started = time.perf_counter()
    rows = [r for place in range(len(modules.order)) for r in modules.read(place)[0]]
    took = time.perf_counter() - started
    after = len(flow._through_memo) + len(flow._direct_memo)
    print(f"warm re-read of every module's rows: {took:.1f} s, {len(rows)} rows, "
          f"keys computed anew {after - before}; cold solve up to here "
          f"{time.perf_counter() - CURRENT.started:.1f} s", flush=True)


CALL_ARGS: dict = {}
SCC_OF: dict = {}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default="/tmp/jaxmap-deps")
    parser.add_argument("--edits", default="a,b,c,d,e")
    parser.add_argument("--timing", action="store_true")
    args = parser.parse_args()
    import jax
    tree = os.path.join(args.work, "tree")
    if not os.path.isdir(tree):
        shutil.copytree(os.path.dirname(jax.__file__), os.path.join(tree, "jax"))
    cache = os.path.join(args.work, "cache")
    if args.timing:
        global WARM
        real_edges = calls.call_edges

        def capture(names, ids, *rest, **kw):
            CALL_ARGS.update(names=names, ids=ids)
            return real_edges(names, ids, *rest, **kw)
        calls.call_edges = capture
        WARM = warm_timing
        install(instrument=False)
        real_sites = CallSites.sites

        def timed_sites(self):
            if self._sites is not None:
                return self._sites
            started = time.perf_counter()
            found = real_sites(self)
            print(f"sites() prelude: {time.perf_counter() - started:.1f} s, "
                  f"{len(self._through_memo) + len(self._direct_memo)} keys kept", flush=True)
            return found
        CallSites.sites = timed_sites
        for _ in range(2):
            world = build(tree, cache + "-timing", rebuild=True)
            print(f"cold solve (Flow built to closed): {world.solve_s:.1f} s", flush=True)
        return 0
    install(instrument=True)
    started = time.perf_counter()
    base = build(tree, cache, rebuild=True)
    print(f"instrumented cold build: {time.perf_counter() - started:.0f} s "
          f"(solve {base.solve_s:.1f} s), RSS {_rss() / 2**30:.1f} GiB", flush=True)
    edges = describe_graph(base)
    persistence(base, edges)
    del edges
    roots = Counter(w[0] for w in base.reads if not isinstance(w[0], bool))
    print("roots:", dict(roots))
    reads = Counter(r[0] if r[0] != "side" else f"side:{r[1]}"
                    for rs in base.reads.values() for r in rs)
    print("input reads by kind (summed over keys):", dict(reads.most_common()))
    print("  the resolver's:", Counter(r[1] for rs in base.reads.values() for r in rs
                                      if r[0] in ("names", "namesattr")).most_common())
    SCC_OF.update(component_of(base))
    kept = {(True, k) for k in base.memos[0]} | {(False, k) for k in base.memos[1]}
    phased = [w for w, rs in base.reads.items()
              if ("side", "traced while sites are built") in rs and w in kept]
    print(f"memoised keys that read traced() as empty while sites() was built: {len(phased)}"
          f" ({Counter(kind(w) for w in phased).most_common(3)})")
    old_rows = bench_order._rows(base.path)
    for label in args.edits.split(","):
        path, old_text, new_text = EDITS[label]
        full = os.path.join(tree, path)
        with open(full) as f:
            original = f.read()
        if old_text is None:
            edited = original + new_text
        else:
            assert original.count(old_text) == 1, (label, original.count(old_text))
            edited = original.replace(old_text, new_text)
        with open(full, "w") as f:
            f.write(edited)
        try:
            new = build(tree, cache, rebuild=False) or build(tree, cache, rebuild=True)
        finally:
            with open(full, "w") as f:
                f.write(original)
        compare(label, base, new, old_rows)
        del new
        gc.collect()
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
