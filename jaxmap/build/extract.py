"""One file's syntax tree -> its facts (the stored form of facts.FileFacts). No disk I/O.

The facts are a plain, marshal-able dict with the keys of `facts.FileFacts`; events and
blocks are stored as `facts.stored(record)`, every other record as a plain tuple in its
fields' order. What each record means is documented in facts.py. Statements belong to
the innermost function around them (a nested function is a scope of its own, bound to
its name by a Define event where it is defined); statements in a class body belong to
the enclosing scope (the module, for top-level classes). Only functions whose body may
register something are walked; every module-level function's text is still read for
what it calls or names (`callees`, the call graph's raw edges, its nested functions
and lambdas included), for `x.bind(` sites and, in a test module, for the names its
tests use; so is the text outside functions (each class body's, and the rest: the
module's top level), for what it calls or names.

An `error` key, set by the indexer, says why a file could not be indexed.
"""

from __future__ import annotations

import bisect
import keyword
import re
from collections.abc import Callable

from jaxmap.build import flowtext, messages, parse, skim
from jaxmap.build.facts import (
    ADD,
    AND,
    ATTRIBUTE,
    CALL,
    CHOICE,
    CONST,
    DICT,
    IS,
    LAMBDA,
    NAME,
    NOT,
    OR,
    SPLAT,
    STAR,
    STR,
    SUBSCRIPT,
    TUPLE,
    UNKNOWN,
    Assign,
    Binds,
    Branch,
    Call,
    ClassSpec,
    Decorate,
    Define,
    Definition,
    FuncSpec,
    Import,
    Loop,
    Message,
    Return,
    SetItem,
    Test,
    Unpack,
    stored,
)

_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
_STRING_PREFIX = re.compile(r"[rRbBuU]*")
_MAX_DEPTH = 5
_PARAM_TYPES = {"identifier", "typed_parameter", "default_parameter", "typed_default_parameter"}
_CONSTANTS = {"true": True, "false": False, "none": None}
_DELETED_GROUPS = {"expression_list", "tuple", "list", "parenthesized_expression"}

# The order of facts that start and end at the same place: scopes before statements.
_ORDER = {"function": 0, "class": 0, "decorated": 0, "loop": 0, "type_alias": 0, "if": 0,
          "else": 0, "call": 1, "assign": 1, "setitem": 1, "setattr": 1, "return": 1,
          "unpack": 1,
          "delete": 1, "import": 2}
# A function body without any of these words can neither build a primitive nor
# register a rule, so its statements are not walked (most of JAX's code).
# `super().__init__(...)`: a Primitive subclass may pass its name there.
_MAY_REGISTER = re.compile(
    rb"Primitive|primitive|def_[a-z]|register|rules|batchers|defjvp|deflinear|defbilinear"
    rb"|defvectorized|defbroadcasting|defreducer|_lowerings|super\(\)\.__init__\(")
# `x_p = helper(...)`: helper builds a primitive whatever words its body uses, so its
# body is walked even without any of the words above. The search starts at `_p` (a
# literal is found fast); what comes before it on the line is checked on each match.
_PRIMITIVE_FACTORY = re.compile(
    rb"_p[ \t]*(?::[^=\n]*)?=[ \t]*(?:[A-Za-z_][A-Za-z0-9_]*\.)*([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(")
_STATEMENT_START = re.compile(rb"[ \t]*[A-Za-z_][A-Za-z0-9_]*")
_BIND = re.compile(rb"\.bind(?:_with_trace)?\(")
_TRACE_METHOD = re.compile(rb"\.(process_[A-Za-z_]\w*)\(")
# Read left to right, each string, comment, import statement and name that a `def` or
# `class` introduces is taken whole (no group: not code); otherwise a dotted name (group
# 1) that is called, that is an argument or default (before `,`, `)` or `]`: group 2),
# or that ends in `_p`; or the `@` of a bare decorator (`@api_boundary` alone on its
# line: its name is group 3): what a function's text calls or may hand on. The
# look-ahead group and back-reference take a name atomically (no backtracking into
# it). Each alternative starts with a literal, or with the one `\b` they share: the
# engine rules out most places with one test.
_CALLEE = re.compile(
    rb'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|#[^\n]*'
    rb"|\b(?:(?:def|class)[ \t]+\w+"
    rb"|(?:from[ \t]+[\w.]+[ \t]+)?import\b(?:[ \t]*\([^)]*\)|(?:\\\n|[^\n])*)"
    rb"|(?=([A-Za-z_][\w.]*))\1(?:(?=[ \t]*([(,)\]]))|(?<=_p)(?![\w.(])))"
    rb"|@(?=([A-Za-z_][\w.]*)[ \t]*(?:#|\r?\n))")
_NOT_CALLEES = frozenset(word.encode() for word in keyword.kwlist) | {b"self", b"cls"}
# A dotted name that is called, or that ends in `_p` (a primitive used as a value).
_USED = re.compile(rb"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?:[ \t]*\(|(?<=_p)\b)")
_DOCSTRING_START = re.compile(rb'[ \t]*[rRuU]?("""|\'\'\'|"|\')')
_OVERLOAD = re.compile(r"(?:[A-Za-z_]\w*\.)*overload")
_NAME_BEFORE = re.compile(rb"[A-Za-z_][A-Za-z0-9_.]*\Z")


def extract(source: bytes, module: str, is_package: bool = False, *,
            full_parse: bool = False, flow: bool = True) -> dict:
    """Facts of one file, given its source bytes, dotted module name, and whether
    it is a package's `__init__`. Function bodies that cannot register anything are
    not read, and not even parsed (see skim.py) unless `full_parse`: the slower
    reference the tests compare with, which must give the same facts. Without
    `flow` (the index's first phase), what the call graph reads (callees, value flow)
    is left for `add_graph_facts`: only where it would be read from is kept."""
    unread = _unread_bodies(source)
    root = parse.parse(source, () if full_parse else unread).root_node
    builder = _Builder(module, is_package, unread, flow)
    builder.collect(parse.matches(root, None if full_parse else builder.unread), source)
    return builder.facts(_module_doc(root))


def add_graph_facts(facts: dict, source: bytes) -> None:
    """Give facts extracted without `flow` what the call graph reads from the same
    source: each owner's callees and value-flow facts, as `flow=True` gives them."""
    spans = facts.pop("flow_spans", None)
    if spans is not None:
        facts["flow"] = _flow(source, spans, facts["defs"], facts["imports"])
    callees: dict[str, tuple] = {}
    for qualname, ranges, line, merge in facts.pop("callee_spans", ()):
        _set_callees(callees, qualname, _callees(source, ranges, line), merge)
    if callees:
        facts["callees"] = callees


def _set_callees(callees: dict, qualname: str, found: tuple, merge: bool) -> None:
    """An owner's callees: `found`, or with `merge` added to what it has (if any)."""
    if not merge:
        callees[qualname] = found
    elif found:
        callees[qualname] = _merged(callees.get(qualname, ()), found)


def _flow(source: bytes, spans, defs, imports) -> dict:
    """Each owner's value-flow facts (flowtext.py), merged per owner, from the
    (owner, byte ranges, first line) of its text."""
    defined = frozenset(d[0].encode() for d in defs if d[0] == d[1])
    imported = frozenset(i[1].partition(".")[0].encode() for i in imports if not i[0])
    flow: dict[str, tuple] = {}
    for qualname, pieces, line in spans:
        found = flowtext.read(source, pieces, line, defined, imported)
        if found:
            flow[qualname] = flow.get(qualname, ()) + found
    return flow


def is_test_module(module: str) -> bool:
    """A module of tests: in a `tests` (or `test`) package, or named `test_*`/`*_test`."""
    *packages, leaf = module.split(".")
    return bool({"tests", "test"} & set(packages)) or leaf.startswith("test_") \
        or leaf.endswith("_test")


def _unread_bodies(source: bytes) -> list[skim.Body]:
    """Bodies with no registration word that are not called to make an `x_p` here."""
    factories = {m.group(1) for m in _PRIMITIVE_FACTORY.finditer(source)
                 if _STATEMENT_START.fullmatch(source, source.rfind(b"\n", 0, m.start()) + 1,
                                               m.start())}
    return [body for body in skim.function_bodies(source) if body.name not in factories
            and not _MAY_REGISTER.search(source, body.start, body.end)]


def _callees(source: bytes, pieces: list[tuple[int, int]], line: int) -> tuple:
    """The stored `facts.Callee`s of the text of `pieces` ((start, end) byte ranges, in
    order; the first starts at `line`): each name called, each `_p` name, and each
    argument or default that is dotted, private or a first argument
    (`lax.dot_general`, `_einsum`, `partial(f`), at its first call (or its first use,
    if never called); a decorator is a call. Strings, comments, import statements, names
    that a `def` or `class` introduces, and methods of values (`x.f(`) are not read."""
    found: dict[bytes, list] = {}  # name -> [called, where first found]
    for start, end in pieces:
        for match in _CALLEE.finditer(source, start, end):
            name, trailing, decorator = match.groups()
            if name is not None:
                at, called = match.start(), trailing == b"("
            elif decorator is not None:
                at = match.start()
                if source[source.rfind(b"\n", 0, at) + 1:at].strip():
                    continue  # `a @b`: a product, not a decorator
                name, at, called = decorator, at + 1, True
            else:
                continue
            if name in _NOT_CALLEES:
                continue
            before = source[at - 1:at]
            if before == b".":
                continue
            seen = found.get(name)
            if seen is not None:
                if called and not seen[0]:
                    seen[:] = True, at
            elif called or before == b"(" or name[0] == 95 or b"." in name \
                    or name.endswith(b"_p"):  # 95: `_`
                found[name] = [called, at]
    callees, counted = [], pieces[0][0]
    for name, (called, at) in sorted(found.items(), key=lambda item: item[1][1]):
        line += source.count(b"\n", counted, at)
        counted = at
        callees.append((name.decode(), line, called))
    return tuple(callees)


def _outside_functions(classes: list[tuple[int, int, str, int]],
                       functions: list[tuple[int, int]], size: int) -> list[tuple]:
    """The text of a file of `size` bytes outside every function, in (start, end) byte
    ranges by owner: (qualname, start byte, its line, ranges) of the top level ('', 0,
    1) and of each class (`classes`: (start, end, qualname, line)) for its body, less
    the classes nested in it; owners with no text are left out."""
    owners: list[tuple[str, int, int, list]] = [("", 0, 1, [])]
    inside = [(size, 0)]  # (end, owner) of the open classes, innermost last
    at = 0
    scopes = sorted([*classes, *((start, end, None, 0) for start, end in functions)])
    for start, end, qualname, line in [*scopes, (size, size, None, 0)]:
        while len(inside) > 1 and inside[-1][0] <= start:  # classes closed before it
            closed, owner = inside.pop()
            owners[owner][3].append((at, closed))
            at = max(at, closed)
        if at < start:
            owners[inside[-1][1]][3].append((at, start))
        if qualname is None:  # a function: skipped
            at = max(at, end)
        else:
            owners.append((qualname, start, line, []))
            inside.append((end, len(owners) - 1))
            at = start
    return [owner for owner in owners if owner[3]]


def _merged(first: tuple, second: tuple) -> tuple:
    """The callees of two texts of one owner, each name once: called if it is called
    in either, at its first call (or first use), in order of line."""
    if not first:
        return second
    best: dict[str, tuple] = {}
    for callee in first + second:
        seen = best.get(callee[0])
        if seen is None or (not callee[2], callee[1]) < (not seen[2], seen[1]):
            best[callee[0]] = callee
    return tuple(sorted(best.values(), key=lambda callee: callee[1]))


def _text(node) -> str:
    return node.text.decode("utf-8", "replace")


def _lines(node) -> tuple[int, int]:
    return node.start_point[0] + 1, node.end_point[0] + 1


def dotted(node) -> str | None:
    """`a.b.c` for an identifier or attribute chain, else None."""
    if node.type == "identifier":
        return _text(node)
    if node.type != "attribute":
        return None
    text = "".join(_text(node).split())
    return text if _DOTTED.match(text) else None


def string_literal(node) -> str | None:
    """The value of a plain (non-f, non-concatenated) string literal."""
    if any(c.type == "interpolation" for c in node.children):
        return None
    text = _text(node)
    prefix = _STRING_PREFIX.match(text)
    assert prefix is not None  # `_STRING_PREFIX` may be empty: it always matches
    text = text[prefix.end():]
    for quote in ('"""', "'''", '"', "'"):
        if text.startswith(quote) and text.endswith(quote) and len(text) >= 2 * len(quote):
            return text[len(quote):-len(quote)]
    return None


def value(node, depth: int = 0) -> tuple:
    """A small tuple that says what an expression is, as far as resolution needs
    (facts.py lists the shapes); UNKNOWN for anything else."""
    handler = _EXPRESSIONS.get(node.type)
    if handler is None or (depth >= _MAX_DEPTH and node.type not in _SHALLOW):
        return UNKNOWN
    return handler(node, depth)


def _name(node, depth: int) -> tuple:
    name = dotted(node)
    if name is not None:
        return (NAME, name)
    if node.type == "attribute" and depth < _MAX_DEPTH:  # table[key].update, f(x).attr
        return (ATTRIBUTE, value(node.child_by_field_name("object"), depth + 1),
                _text(node.child_by_field_name("attribute")))
    return UNKNOWN


def _call(node, depth: int) -> tuple:
    args, kwargs = arguments(node.child_by_field_name("arguments"), depth + 1)
    return (CALL, value(node.child_by_field_name("function"), depth + 1), args, kwargs)


def _string(node, depth: int) -> tuple:
    literal = string_literal(node)
    return UNKNOWN if literal is None else (STR, literal)


def _sequence(node, depth: int) -> tuple:
    return (TUPLE, tuple(value(c, depth + 1) for c in node.named_children
                         if c.type != "comment"))


def _parenthesized(node, depth: int) -> tuple:
    inner = [c for c in node.named_children if c.type != "comment"]
    return value(inner[0], depth + 1) if len(inner) == 1 else UNKNOWN


def _dictionary(node, depth: int) -> tuple:
    return (DICT, tuple(_pair(c, depth + 1) for c in node.named_children if c.type == "pair"))


def _binary(node, depth: int) -> tuple:
    """`a + b`, the one operator resolution follows (names built from parameters)."""
    if node.child_by_field_name("operator").type != "+":
        return UNKNOWN
    return (ADD, value(node.child_by_field_name("left"), depth + 1),
            value(node.child_by_field_name("right"), depth + 1))


def _boolean(node, depth: int) -> tuple:
    """`a or b`, `a and b`."""
    tag = OR if node.child_by_field_name("operator").type == "or" else AND
    return (tag, value(node.child_by_field_name("left"), depth + 1),
            value(node.child_by_field_name("right"), depth + 1))


def _comparison(node, depth: int) -> tuple:
    """`a is b` and `a is not b`, the comparisons resolution follows (`rule is None`)."""
    operands = [c for c in node.named_children if c.type != "comment"]
    operators = [c.type for c in node.children if c not in operands]
    if len(operands) != 2 or operators not in (["is"], ["is not"]):
        return UNKNOWN
    same = (IS, value(operands[0], depth + 1), value(operands[1], depth + 1))
    return same if operators == ["is"] else (NOT, same)


def _conditional(node, depth: int) -> tuple:
    """`then if condition else otherwise`."""
    parts = [c for c in node.named_children if c.type != "comment"]
    if len(parts) != 3:
        return UNKNOWN
    then, condition, otherwise = (value(c, depth + 1) for c in parts)
    return (CHOICE, condition, then, otherwise)


def _lambda(node, depth: int) -> tuple:
    """(LAMBDA, line, params, defaults, body): a lambda's body is followed when called."""
    params = node.child_by_field_name("parameters")
    names, defaults = parameters(params) if params is not None else ((), {})
    return (LAMBDA, node.start_point[0] + 1, names, defaults,
            value(node.child_by_field_name("body"), depth + 1))


def _subscript(node, depth: int) -> tuple:
    key = node.child_by_field_name("subscript")
    return (SUBSCRIPT, value(node.child_by_field_name("value"), depth + 1),
            value(key, depth + 1) if key is not None else UNKNOWN)


def _pair(node, depth: int) -> tuple:
    key, item = node.child_by_field_name("key"), node.child_by_field_name("value")
    return value(key, depth), value(item, depth)


# node type -> (node, depth) -> its value
_EXPRESSIONS: dict[str, Callable[..., tuple]] = {
    "identifier": _name, "attribute": _name, "call": _call, "string": _string,
    **dict.fromkeys(("tuple", "list", "expression_list", "pattern_list", "tuple_pattern",
                     "list_pattern"), _sequence),
    "parenthesized_expression": _parenthesized, "dictionary": _dictionary,
    "lambda": _lambda,
    **{constant: (lambda node, depth, v=v: (CONST, v)) for constant, v in _CONSTANTS.items()},
    "not_operator": lambda node, depth: (NOT, value(node.child_by_field_name("argument"),
                                                    depth + 1)),
    "subscript": _subscript, "binary_operator": _binary, "boolean_operator": _boolean,
    "comparison_operator": _comparison, "conditional_expression": _conditional,
}
# Names are read at any depth: a dotted name is never deep.
_SHALLOW = frozenset({"identifier", "attribute"})


def arguments(node, depth: int = 0) -> tuple[tuple, dict]:
    """Positional and keyword argument values of a call's argument list."""
    if node is None or node.type != "argument_list":
        return ((UNKNOWN,) if node is not None else ()), {}
    args, kwargs = [], {}
    for child in node.named_children:
        kind = child.type
        if kind == "keyword_argument":
            kwargs[_text(child.child_by_field_name("name"))] = value(
                child.child_by_field_name("value"), depth)
        elif kind == "comment":
            continue
        elif kind in ("list_splat", "dictionary_splat"):
            args.append((SPLAT,))
        else:
            args.append(value(child, depth))
    return tuple(args), kwargs


def parameters(node, with_defaults: bool = True) -> tuple[tuple[str, ...], dict[str, tuple]]:
    """Parameter names in order (`*args` as '*', keyword-only ones after it), and the
    default values of those that have one (unless `with_defaults` is false)."""
    names, defaults = [], {}
    for child in node.named_children:
        kind = child.type
        if kind in _PARAM_TYPES:
            ident = child if kind == "identifier" else (
                child.child_by_field_name("name") or child.named_children[0])
            if ident.type == "identifier":
                names.append(_text(ident))
                default = child.child_by_field_name("value") if with_defaults else None
                if default is not None:
                    defaults[names[-1]] = value(default)
            else:  # typed *args / **kwargs
                names.append("*")
        elif kind in ("list_splat_pattern", "keyword_separator", "dictionary_splat_pattern"):
            names.append("*")
    return tuple(names), defaults


def _docstring(source: bytes, at: int) -> str | None:
    """The first line of the docstring that opens a body starting at byte `at`."""
    opening = _DOCSTRING_START.match(source, at)
    if opening is None:
        return None
    end = source.find(opening.group(1), opening.end())
    lines = source[opening.end():end].decode("utf-8", "replace").strip().splitlines() \
        if end >= 0 else []
    return lines[0].strip() if lines else None


def _module_doc(root) -> str | None:
    for child in root.named_children:
        if child.type == "comment":
            continue
        if child.type == "expression_statement" and child.named_children and \
                child.named_children[0].type == "string":
            literal = string_literal(child.named_children[0]) or ""
            first = literal.strip().splitlines()
            return first[0].strip() if first else None
        return None
    return None


class _Builder:
    """Walks query matches in source order, keeping a stack of open scopes and blocks.
    Each kind of match has its handler (`_HANDLERS`)."""

    def __init__(self, module: str, is_package: bool, unread: list[skim.Body],
                 with_flow: bool = True):
        self.module = module
        self._with_flow = with_flow
        # Without flow: where each owner's calls are read from, (owner, byte ranges,
        # first line, merged with what the owner has), replayed by add_graph_facts.
        self._callee_spans: list[tuple[str, list, int, bool]] = []
        self.is_package = is_package
        self.defs: list[tuple] = []
        self.classes: dict[str, tuple] = {}
        self.funcs: dict[str, tuple] = {}
        self.imports: list[tuple] = []
        self.blocks: list[tuple] = []
        self.events: list[tuple] = []
        self.tests: dict[str, tuple] = {}
        self.callees: dict[str, tuple] = {}
        self.messages: list[tuple] = []
        self.trace_calls: dict[str, tuple] = {}
        self.deleted: list[str] = []
        self._spans: list[tuple[int, int, str]] = []  # (start, end, qualname) of functions
        self._class_spans: list[tuple[int, int, str, int]] = []  # (start, end, qualname, line)
        self._test_module = is_test_module(module)
        self.unread = {body.start: body for body in unread}  # by the start of its def
        self._overloads: set[int] = set()  # start bytes of `@overload` stubs
        self._decorated_from: dict[int, tuple] = {}  # def start -> its decorators' (byte, line)
        self._source = b""
        self._flow_texts: list[tuple[str, list, int]] = []  # owner, its text's pieces, line

    def facts(self, doc: str | None) -> dict:
        return {"module": self.module, "doc": doc, "defs": self.defs, "classes": self.classes,
                "funcs": self.funcs, "imports": self.imports, "blocks": self.blocks,
                "events": self.events, "tests": self.tests, "callees": self.callees,
                "trace_calls": self.trace_calls, "messages": self.messages,
                "deleted": self.deleted,
                **({"flow": _flow(self._source, self._flow_texts, self.defs, self.imports)}
                   if self._with_flow else {"flow_spans": self._flow_texts,
                                            "callee_spans": self._callee_spans})}

    def collect(self, matches: list[tuple[str, dict]], source: bytes) -> None:
        self._source = source
        items = []  # (start, -end, order, kind, captures)
        for kind, caps in matches:
            node = caps[kind][0]
            items.append((node.start_byte, -node.end_byte, _ORDER[kind], kind, caps))
        items.sort(key=lambda item: item[:3])
        stack: list[tuple] = []  # (end_byte, frame kind, qualname or block index)
        for start, neg_end, _order, kind, caps in items:
            while stack and stack[-1][0] <= start:
                stack.pop()
            if stack and stack[-1][1] == "unread":  # only with a full parse
                continue
            try:
                _HANDLERS[kind](self, caps, stack, -neg_end)
            except RecursionError:  # a pathological expression: lose it, not the file
                continue
        self._messages(source)
        self._body_callees(source)

    def _read_callees(self, qualname: str, ranges: list, line: int, merge: bool) -> None:
        """What the text of `ranges` calls or names, as the owner's callees (added to
        what it has with `merge`); without flow, only where to read them later."""
        if self._with_flow:
            _set_callees(self.callees, qualname, _callees(self._source, ranges, line), merge)
        else:
            self._callee_spans.append((qualname, ranges, line, merge))

    def _body_callees(self, source: bytes) -> None:
        """What the code outside every function calls or names (decorators included):
        the module's under '', each class body's under the class's qualname (merged
        with a function's of the same qualname, which a branch may define)."""
        functions = [(start, end) for start, end, _ in self._spans]
        for qualname, start, line, ranges in _outside_functions(
                self._class_spans, functions, len(source)):
            first = line + source.count(b"\n", start, ranges[0][0])
            self._flow_texts.append((qualname, ranges, first))
            self._read_callees(qualname, ranges, first, merge=True)

    def _messages(self, source: bytes) -> None:
        """The messages raised, warned or returned as an exception in the file, each
        with its function; a message an `__init__` hands to its base class is the
        class's own (its exception)."""
        starts = [span[0] for span in self._spans]
        line, at = 1, 0
        for offset, exception, pieces, returned in messages.sites(source):
            i = bisect.bisect_right(starts, offset) - 1
            scope = self._spans[i][2] if i >= 0 and offset < self._spans[i][1] else ""
            if exception == messages.INIT:
                cls, _, method = scope.rpartition(".")
                if method != "__init__" or not cls:
                    continue
                exception = cls.rpartition(".")[2]
            elif returned and not scope:
                continue
            line += source.count(b"\n", at, offset)
            at = offset
            self.messages.append(tuple(Message(scope, line, exception, pieces, returned)))

    # -- scopes ---------------------------------------------------------------

    @staticmethod
    def _scope(stack) -> str:
        """Qualname of the innermost open function, '' at module or class level."""
        for _, kind, name in reversed(stack):
            if kind == "function":
                return name
        return ""

    @staticmethod
    def _block(stack, scope: str) -> int:
        """The innermost open loop or branch inside `scope`, -1 if none."""
        for _, kind, name in reversed(stack):
            if kind == "function" and name == scope:
                return -1
            if kind == "block":
                return name
        return -1

    @staticmethod
    def _prefix(stack) -> str:
        names = [name for _, kind, name in stack if kind in ("function", "class")]
        return names[-1] + "." if names else ""

    def _open_block(self, record, stack, end_byte: int) -> None:
        self.blocks.append(stored(record))
        stack.append((end_byte, "block", len(self.blocks) - 1))

    def _loop(self, caps, stack, end_byte: int) -> None:
        scope = self._scope(stack)
        self._open_block(Loop(scope, self._block(stack, scope), value(caps["loop.target"][0]),
                              value(caps["loop.iterable"][0]), _lines(caps["loop"][0])[0]),
                         stack, end_byte)

    def _branch(self, kind: str, caps, stack, end_byte: int) -> None:
        scope = self._scope(stack)
        self._open_block(Branch(scope, self._block(stack, scope),
                                value(caps[kind + ".condition"][0]), kind == "if",
                                _lines(caps[kind + ".statement"][0])[0]), stack, end_byte)

    def _type_alias(self, caps, stack, end_byte: int) -> None:
        if not stack:
            name = _text(caps["type_alias.name"][0])
            self.defs.append(tuple(Definition(name, name, "variable",
                                              *_lines(caps["type_alias"][0]))))

    def _class(self, caps, stack, end_byte: int) -> None:
        node = caps["class"][0]
        name = _text(caps["class.name"][0])
        qualname = self._prefix(stack) + name
        line, end_line = _lines(node)
        bases = arguments(caps["class.bases"][0])[0] if "class.bases" in caps else ()
        self.classes[qualname] = tuple(ClassSpec(bases, line, end_line, {}))
        if not any(kind == "function" for _, kind, _ in stack):
            doc = _docstring(self._source, node.child_by_field_name("body").start_byte)
            self.defs.append(tuple(Definition(name, qualname, "class", line, end_line, doc)))
            self._class_spans.append((node.start_byte, end_byte, qualname, line))
        stack.append((end_byte, "class", qualname))

    def _function(self, caps, stack, end_byte: int) -> None:
        node = caps["function"][0]
        name = _text(caps["function.name"][0])
        qualname = self._prefix(stack) + name
        line, end_line = _lines(node)
        start = node.start_byte
        stub = start in self._overloads
        if not stub:
            self._class_member(stack, name, line, end_line)
        if any(kind == "function" for _, kind, _ in stack):
            self._nested_function(caps, stack, end_byte, name, qualname)
            return
        walked = start not in self.unread
        # An unread body records no events, but its parameters still name what a partial
        # of it is given (`partial(standard_abstract_eval, prim, shape_rule, ...)`); the
        # defaults only matter where the body runs.
        params, defaults = parameters(caps["function.params"][0], walked)
        self.funcs[qualname] = tuple(FuncSpec(params, line, end_line, walked, defaults))
        if not stub:
            body = self.unread[start].first if not walked else \
                node.child_by_field_name("body").start_byte
            self.defs.append(tuple(Definition(name, qualname, "function", line, end_line,
                                              _docstring(self._source, body))))
        end = self.unread[start].end if not walked else end_byte
        self._spans.append((start, end, qualname))
        self._read_text(name, qualname, line, start, end)
        stack.append((end_byte, "function" if walked else "unread", qualname))

    def _nested_function(self, caps, stack, end_byte: int, name: str, qualname: str) -> None:
        """A function inside a function: its own scope, bound to its name where it is
        defined (in a method of a local class, only the scope)."""
        line, end_line = _lines(caps["function"][0])
        params, defaults = parameters(caps["function.params"][0])
        self.funcs[qualname] = tuple(FuncSpec(params, line, end_line, True, defaults))
        if stack[-1][1] != "class":
            enclosing = self._scope(stack)
            self.events.append(stored(Define(enclosing, self._block(stack, enclosing), name,
                                             qualname, line, end_line)))
        stack.append((end_byte, "function", qualname))

    def _read_text(self, name: str, qualname: str, line: int, start: int, end: int) -> None:
        """What a function's text shows, read or not: what it calls or names, the
        `x.bind(` sites, the Trace
        methods it calls (`trace.process_custom_jvp_call(`), and in a test module what
        a test calls."""
        source = self._source
        if self._test_module and name.startswith("test"):
            # A test's decorators hold its parameters (`sample_product(op=[lax.cumsum])`).
            first, first_line = self._decorated_from.get(start, (start, line))
            used = {m.group(1).decode() for m in _USED.finditer(source, first, end)}
            self.tests[qualname] = tuple(Test(line, tuple(sorted(used))))
            self._read_callees(qualname, [(first, end)], first_line, merge=False)
        else:
            self._read_callees(qualname, [(start, end)], line, merge=False)
        first, first_line = self._decorated_from.get(start, (start, line))
        self._flow_texts.append((qualname, [(first, end)], first_line))
        methods = {m.group(1).decode() for m in _TRACE_METHOD.finditer(source, start, end)}
        if methods:
            self.trace_calls[qualname] = tuple(sorted(methods))
        for bound in _BIND.finditer(source, start, end):
            bound_name = _NAME_BEFORE.search(source, max(start, bound.start() - 120),
                                             bound.start())
            if bound_name:
                self.events.append(stored(Binds(
                    qualname, -1, bound_name.group().decode(),
                    line + source.count(b"\n", start, bound.start()))))

    def _decorated(self, caps, stack, end_byte: int) -> None:
        target = caps["decorated.definition"][0]
        qualname = self._prefix(stack) + _text(target.child_by_field_name("name"))
        scope = self._scope(stack)
        decorator = caps["decorated.decorator"][0]
        outer = caps["decorated"][0]
        self._decorated_from[target.start_byte] = (outer.start_byte, outer.start_point[0] + 1)
        if _OVERLOAD.fullmatch(_text(decorator)):
            self._overloads.add(target.start_byte)
        # Each of stacked decorators is its own registration: it starts the span.
        self.events.append(stored(Decorate(
            scope, self._block(stack, scope), value(decorator), qualname,
            decorator.start_point[0] + 1, _lines(caps["decorated"][0])[1])))

    # -- statements -----------------------------------------------------------

    def _statement(self, stack) -> tuple[str, int]:
        """The scope and block of a statement."""
        scope = self._scope(stack)
        return scope, self._block(stack, scope)

    def _call_statement(self, caps, stack, end_byte: int) -> None:
        call = value(caps["call.call"][0])
        if call[0] == CALL:
            self.events.append(stored(Call(*self._statement(stack), call,
                                           *_lines(caps["call"][0]))))

    def _assign(self, caps, stack, end_byte: int) -> None:
        """`name = value`, and each name of a chain (`call_p = closed_call_p = value`)."""
        names = [_text(caps["assign.target"][0])]
        right = caps["assign.value"][0]
        while right.type == "assignment" and right.child_by_field_name("left").type \
                == "identifier" and right.child_by_field_name("right") is not None:
            names.append(_text(right.child_by_field_name("left")))
            right = right.child_by_field_name("right")
        line, end_line = _lines(caps["assign"][0])
        assigned = value(right)  # evaluated once, then given to each name from the left
        for name in names:
            self.events.append(stored(Assign(*self._statement(stack), name, assigned, line,
                                             end_line)))
            assigned = (NAME, names[0])
            self._variable(stack, name, line, end_line)

    def _setattr(self, caps, stack, end_byte: int) -> None:
        """`obj.attr = value`: an Assign to the dotted name (no variable of the module)."""
        target = dotted(caps["setattr.target"][0])
        if target is not None:
            self.events.append(stored(Assign(*self._statement(stack), target,
                                             value(caps["setattr.value"][0]),
                                             *_lines(caps["setattr"][0]))))

    def _unpack(self, caps, stack, end_byte: int) -> None:
        line, end_line = _lines(caps["unpack"][0])
        targets = caps["unpack.target"][0]
        self.events.append(stored(Unpack(*self._statement(stack), value(targets),
                                         value(caps["unpack.value"][0]), line, end_line)))
        for target in targets.named_children:
            if target.type == "identifier":
                self._variable(stack, _text(target), line, end_line)

    def _setitem(self, caps, stack, end_byte: int) -> None:
        target = caps["setitem.target"][0]
        key = target.child_by_field_name("subscript")
        self.events.append(stored(SetItem(
            *self._statement(stack), value(target.child_by_field_name("value")),
            value(key) if key is not None else UNKNOWN, value(caps["setitem.value"][0]),
            *_lines(caps["setitem"][0]))))

    def _return(self, caps, stack, end_byte: int) -> None:
        self.events.append(stored(Return(*self._statement(stack),
                                         value(caps["return.value"][0]),
                                         *_lines(caps["return"][0]))))

    def _variable(self, stack, name: str, line: int, end_line: int) -> None:
        """A name assigned: a module's variable, or a class's attribute."""
        if not stack:
            self.defs.append(tuple(Definition(name, name, "variable", line, end_line)))
        self._class_member(stack, name, line, end_line)

    def _class_member(self, stack, name: str, line: int, end_line: int) -> None:
        """Methods and attributes of a class, as written in its body."""
        if stack and stack[-1][1] == "class" and stack[-1][2] in self.classes:
            self.classes[stack[-1][2]][3].setdefault(name, (line, end_line))

    def _delete(self, caps, stack, end_byte: int) -> None:
        """`del a, b` at the top level: names the module no longer holds."""
        if stack:
            return
        targets = caps["delete"][0].named_children
        while len(targets) == 1 and targets[0].type in _DELETED_GROUPS:  # `del (a, b)`
            targets = targets[0].named_children
        self.deleted += [_text(t) for t in targets if t.type == "identifier"]

    def _import(self, caps, stack, end_byte: int) -> None:
        node = caps["import"][0]
        scope = self._scope(stack)
        line = node.start_point[0] + 1
        if node.type == "import_statement":
            for child in node.named_children:
                if child.type == "dotted_name":
                    target = _text(child)
                    # `import a.b` binds `a`; record the full path so `a.b.x` resolves.
                    self.imports.append(tuple(Import(scope, target, target, line, False)))
                elif child.type == "aliased_import":
                    alias = _text(child.child_by_field_name("alias"))
                    target = _text(child.child_by_field_name("name"))
                    self.imports.append(tuple(Import(scope, alias, target, line,
                                                     self._reexport(alias, target))))
            return
        source = node.child_by_field_name("module_name")
        base = self._absolute(_text(source)) if source is not None else None
        if base is None:
            return
        if any(child.type == "wildcard_import" for child in node.children):
            self.imports.append(tuple(Import(scope, STAR, base, line, True)))
        for child in node.children_by_field_name("name"):
            explicit = child.type == "aliased_import"
            if explicit:
                name = _text(child.child_by_field_name("name"))
                alias = _text(child.child_by_field_name("alias"))
            else:
                name = alias = _text(child)
            self.imports.append(tuple(Import(scope, alias, f"{base}.{name}" if base else name,
                                             line, explicit and self._reexport(alias, name))))

    def _reexport(self, alias: str, name: str) -> bool:
        """Whether an import with an `as` clause re-exports: `as` the same name, or any
        `as` in a package's `__init__` (`from m import Array as ndarray`)."""
        return alias == name or self.is_package

    def _absolute(self, source: str) -> str | None:
        """Resolve a relative `from ..x import` against this module's package."""
        if not source.startswith("."):
            return source
        dots = len(source) - len(source.lstrip("."))
        package = self.module.split(".")
        # In a package's __init__, `.` is the package itself.
        up = dots - 1 if self.is_package else dots
        if up > len(package):
            return None
        base = ".".join(package[:len(package) - up])
        rest = source[dots:]
        return f"{base}.{rest}".strip(".") if rest else base


_HANDLERS = {
    "function": _Builder._function, "class": _Builder._class,
    "decorated": _Builder._decorated, "loop": _Builder._loop,
    "type_alias": _Builder._type_alias,
    "if": lambda self, caps, stack, end: self._branch("if", caps, stack, end),
    "else": lambda self, caps, stack, end: self._branch("else", caps, stack, end),
    "call": _Builder._call_statement, "assign": _Builder._assign,
    "setitem": _Builder._setitem, "setattr": _Builder._setattr, "return": _Builder._return,
    "unpack": _Builder._unpack,
    "import": _Builder._import, "delete": _Builder._delete,
}
