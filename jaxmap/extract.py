"""One file's syntax tree -> FileFacts, a plain, marshal-able dict. No disk I/O.

FileFacts keys:
  module, doc                   dotted module name, first line of the module docstring
  defs      [(name, qualname, kind, line, end_line)]   module-level functions, classes,
                                variables, and methods (qualname `Class.method`)
  classes   {qualname: (bases, line, end_line, {method: (line, end_line)})}
  funcs     {qualname: (params, line, end_line, walked, defaults)}  scopes; walked: body
                                read; defaults: {param: value}
  imports   [(scope, alias, target, line)]              target is a dotted name
  loops     [(scope, parent, target, iterable, line)]   parent is a loop index or -1; an
                                if/else branch is a loop over ("g", condition, branch)
  events    [(scope, loop, tag, ...)]   tags: call, assign, setitem, dec, return, and
                                        binds (a function's `x.bind(` sites)
  tests     {qualname: (line, names)}   in a test module (see `is_test_module`), each
                                `test*` function or method and the dotted names it
                                calls or that end in `_p`, read from its text
  calls     {qualname: (names)}         private module-level functions of this file
                                that each function calls, of those that reach a
                                `.bind(` (`psum` calls `_psum_is_async`, which calls
                                `_psum`, which binds `psum_p`)

An `error` key, set by the indexer, says why a file could not be indexed.

Values in events are small tuples (see `value`): ("n", dotted name), ("s", string),
("c", callee, args, kwargs), ("t", items), ("d", pairs), ("l", line) for a lambda,
("sub", base, key), ("a", object, attribute) for an attribute of a non-name,
("k", True/False/None), ("not", operand), ("x",) for anything else. Statements nested in a function,
including nested functions, belong to the outermost function's scope; statements in
a class body belong to the enclosing scope (the module, for top-level classes).
"""

from __future__ import annotations

import bisect
import re

from jaxmap import parse, skim

OTHER = ("x",)
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
_STRING_PREFIX = re.compile(r"[rRbBuU]*")
_MAX_DEPTH = 5
_PARAM_TYPES = {"identifier", "typed_parameter", "default_parameter", "typed_default_parameter"}
_CONSTANTS = {"true": True, "false": False, "none": None}

# Pattern indexes in queries/structure.scm and queries/statements.scm.
_FUNCTION, _CLASS, _DECORATED, _FOR, _TYPE_ALIAS, _IF, _ELSE = range(7)
_CALL, _ASSIGN, _SETITEM, _RETURN, _UNPACK = range(5)
_GROUPS = {"structure": 0, "statements": 1, "imports": 2}
_MAIN_CAPTURE = {
    **{("structure", i): c for i, c in enumerate(
        ("def", "def", "decorated", "for", "def", "body", "body"))},
    **{("statements", i): "stmt" for i in range(5)},
    **{("imports", i): "import" for i in range(2)},
}
# A function body without any of these words can neither build a primitive nor
# register a rule, so its statements are not walked (most of JAX's code).
_MAY_REGISTER = re.compile(
    rb"Primitive|primitive|def_[a-z]|register|rules|batchers|defjvp|deflinear|defbilinear"
    rb"|defvectorized|defbroadcasting|defreducer|_lowerings")
# `x_p = helper(...)`: helper builds a primitive whatever words its body uses, so its
# body is walked even without any of the words above. The search starts at `_p` (a
# literal is found fast); what comes before it on the line is checked on each match.
_PRIMITIVE_FACTORY = re.compile(
    rb"_p[ \t]*(?::[^=\n]*)?=[ \t]*(?:[A-Za-z_][A-Za-z0-9_]*\.)*([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(")
_STATEMENT_START = re.compile(rb"[ \t]*[A-Za-z_][A-Za-z0-9_]*")
_BIND = re.compile(rb"\.bind(?:_with_trace)?\(")
# A dotted name that is called, or that ends in `_p` (a primitive used as a value).
_USED = re.compile(rb"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?:[ \t]*\(|(?<=_p)\b)")
_NAME_CHAR = re.compile(rb"[\w.]")
_NAME_BEFORE = re.compile(rb"[A-Za-z_][A-Za-z0-9_.]*\Z")


def extract(source: bytes, module: str, is_package: bool = False, *,
            full_parse: bool = False) -> dict:
    """Facts of one file, given its source bytes, dotted module name, and whether
    it is a package's `__init__`. Function bodies that cannot register anything are
    not read, and not even parsed (see skim.py) unless `full_parse`: the slower
    reference the tests compare with, which must give the same facts."""
    unread = _unread_bodies(source)
    root = parse.parse(source, () if full_parse else unread).root_node
    builder = _Builder(module, is_package, {body.start: body.end for body in unread})
    builder.collect(parse.matches(root, None if full_parse else builder.unread), source)
    return builder.facts(_module_doc(root))


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
    text = text[_STRING_PREFIX.match(text).end():]
    for quote in ('"""', "'''", '"', "'"):
        if text.startswith(quote) and text.endswith(quote) and len(text) >= 2 * len(quote):
            return text[len(quote):-len(quote)]
    return None


def value(node, depth: int = 0) -> tuple:
    """A small tuple that says what an expression is, as far as resolution needs."""
    kind = node.type
    if kind in ("identifier", "attribute"):
        name = dotted(node)
        if name is not None:
            return ("n", name)
        if kind == "attribute" and depth < _MAX_DEPTH:  # table[key].update, f(x).attr
            return ("a", value(node.child_by_field_name("object"), depth + 1),
                    _text(node.child_by_field_name("attribute")))
        return OTHER
    if depth >= _MAX_DEPTH:
        return OTHER
    if kind == "call":
        args, kwargs = arguments(node.child_by_field_name("arguments"), depth + 1)
        return ("c", value(node.child_by_field_name("function"), depth + 1), args, kwargs)
    if kind == "string":
        literal = string_literal(node)
        return OTHER if literal is None else ("s", literal)
    if kind in ("tuple", "list", "expression_list", "pattern_list", "tuple_pattern", "list_pattern"):
        return ("t", tuple(value(c, depth + 1) for c in node.named_children if c.type != "comment"))
    if kind == "parenthesized_expression":
        inner = [c for c in node.named_children if c.type != "comment"]
        return value(inner[0], depth + 1) if len(inner) == 1 else OTHER
    if kind == "dictionary":
        return ("d", tuple(_pair(c, depth + 1) for c in node.named_children if c.type == "pair"))
    if kind == "lambda":
        return ("l", node.start_point[0] + 1)
    if kind in _CONSTANTS:
        return ("k", _CONSTANTS[kind])
    if kind == "not_operator":
        return ("not", value(node.child_by_field_name("argument"), depth + 1))
    if kind == "subscript":
        key = node.child_by_field_name("subscript")
        return ("sub", value(node.child_by_field_name("value"), depth + 1),
                value(key, depth + 1) if key is not None else OTHER)
    return OTHER


def _pair(node, depth: int) -> tuple:
    return value(node.child_by_field_name("key"), depth), value(node.child_by_field_name("value"), depth)


def arguments(node, depth: int = 0) -> tuple[tuple, dict]:
    """Positional and keyword argument values of a call's argument list."""
    if node is None or node.type != "argument_list":
        return ((OTHER,) if node is not None else ()), {}
    args, kwargs = [], {}
    for child in node.named_children:
        kind = child.type
        if kind == "keyword_argument":
            kwargs[_text(child.child_by_field_name("name"))] = value(
                child.child_by_field_name("value"), depth)
        elif kind == "comment":
            continue
        elif kind in ("list_splat", "dictionary_splat"):
            args.append(("*",))
        else:
            args.append(value(child, depth))
    return tuple(args), kwargs


def parameters(node) -> tuple[tuple[str, ...], dict[str, tuple]]:
    """Parameter names in order (`*args` as '*', keyword-only ones after it), and the
    default values of those that have one."""
    names, defaults = [], {}
    for child in node.named_children:
        kind = child.type
        if kind in _PARAM_TYPES:
            ident = child if kind == "identifier" else (
                child.child_by_field_name("name") or child.named_children[0])
            if ident.type == "identifier":
                names.append(_text(ident))
                default = child.child_by_field_name("value")
                if default is not None:
                    defaults[names[-1]] = value(default)
            else:  # typed *args / **kwargs
                names.append("*")
        elif kind in ("list_splat_pattern", "keyword_separator", "dictionary_splat_pattern"):
            names.append("*")
    return tuple(names), defaults


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
    """Walks query matches in source order, keeping a stack of open scopes and loops."""

    def __init__(self, module: str, is_package: bool, unread: dict[int, int]):
        self.module = module
        self.is_package = is_package
        self.defs: list[tuple] = []
        self.classes: dict[str, tuple] = {}
        self.funcs: dict[str, tuple] = {}
        self.imports: list[tuple] = []
        self.loops: list[tuple] = []
        self.events: list[tuple] = []
        self.tests: dict[str, tuple] = {}
        self.calls: dict[str, tuple] = {}
        self._spans: list[tuple[int, int, str]] = []  # (start, end, qualname) of functions
        self._test_module = is_test_module(module)
        self.unread = unread  # function start byte -> end of its unread body

    def facts(self, doc: str | None) -> dict:
        return {"module": self.module, "doc": doc, "defs": self.defs, "classes": self.classes,
                "funcs": self.funcs, "imports": self.imports, "loops": self.loops,
                "events": self.events, "tests": self.tests, "calls": self.calls}

    def collect(self, matches: list[tuple[str, int, dict]], source: bytes) -> None:
        items = []  # (start, -end, group, pattern index, captures)
        for name, index, caps in matches:
            node = caps[_MAIN_CAPTURE[name, index]][0]
            items.append((node.start_byte, -node.end_byte, _GROUPS[name], index, caps))
        items.sort(key=lambda item: item[:3])
        stack: list[tuple] = []  # (end_byte, kind, qualname or loop index)
        for start, neg_end, group, index, caps in items:
            while stack and stack[-1][0] <= start:
                stack.pop()
            if stack and stack[-1][1] == "unread":  # only with a full parse
                continue
            try:
                if group == 0:
                    self._structure(index, caps, stack, -neg_end, source)
                elif group == 1:
                    self._statement(index, caps, stack)
                else:
                    self._import(caps["import"][0], stack)
            except RecursionError:  # a pathological expression: lose it, not the file
                continue
        self._calls_to_binders(source)

    def _calls_to_binders(self, source: bytes) -> None:
        """Which functions call a private module-level function of this file that binds,
        or that calls one that does (one more search per link of the chain). Public
        functions end a chain: tests call those themselves."""
        reaches = {e[0] for e in self.events if e[2] == "binds" and e[0][0] == "_"
                   and "." not in e[0]}
        starts = [span[0] for span in self._spans]
        calls: dict[str, set[str]] = {}
        frontier = reaches
        while frontier:
            for callee in frontier:
                call = callee.encode() + b"("
                at = source.find(call)
                while at >= 0:
                    i = bisect.bisect_right(starts, at) - 1
                    if i >= 0 and at < self._spans[i][1] and self._spans[i][2] != callee \
                            and not _NAME_CHAR.match(source, at - 1):
                        calls.setdefault(self._spans[i][2], set()).add(callee)
                    at = source.find(call, at + 1)
            frontier = {c for c in calls if c[0] == "_" and "." not in c} - reaches
            reaches |= frontier
        self.calls = {caller: tuple(sorted(names)) for caller, names in calls.items()}

    # -- scopes ---------------------------------------------------------------

    @staticmethod
    def _scope(stack) -> str:
        """Qualname of the outermost open function, '' at module or class level."""
        for _, kind, name in stack:
            if kind == "def":
                return name
        return ""

    @staticmethod
    def _loop(stack, scope: str) -> int:
        for _, kind, name in reversed(stack):
            if kind == "def" and name == scope:
                return -1
            if kind == "for":
                return name
        return -1

    @staticmethod
    def _prefix(stack) -> str:
        names = [name for _, kind, name in stack if kind in ("def", "class")]
        return names[-1] + "." if names else ""

    def _structure(self, index, caps, stack, end_byte, source: bytes) -> None:
        """Open a scope, loop or decorated definition."""
        if index == _DECORATED:
            self._decorated(caps, stack)
            return
        if index == _FOR:
            scope = self._scope(stack)
            node = caps["for"][0]
            self.loops.append((scope, self._loop(stack, scope), value(caps["target"][0]),
                               value(caps["iter"][0]), node.start_point[0] + 1))
            stack.append((end_byte, "for", len(self.loops) - 1))
            return
        if index in (_IF, _ELSE):  # a branch is a loop that runs once or never
            scope = self._scope(stack)
            guard = ("g", value(caps["condition"][0]), index == _IF)
            self.loops.append((scope, self._loop(stack, scope), OTHER, guard,
                               caps["if"][0].start_point[0] + 1))
            stack.append((end_byte, "for", len(self.loops) - 1))
            return
        node = caps["def"][0]
        name = _text(caps["name"][0])
        in_function = any(kind == "def" for _, kind, _ in stack)
        if index == _TYPE_ALIAS:
            if not stack:
                self.defs.append((name, name, "variable", *_lines(node)))
            return
        qualname = self._prefix(stack) + name
        line, end_line = _lines(node)
        if index == _CLASS:
            bases = arguments(caps["bases"][0])[0] if "bases" in caps else ()
            self.classes[qualname] = (bases, line, end_line, {})
            if not in_function:
                self.defs.append((name, qualname, "class", line, end_line))
            stack.append((end_byte, "class", qualname))
            return
        self._class_member(stack, name, line, end_line)
        if in_function:
            stack.append((end_byte, "nested", qualname))
            return
        start = node.start_byte
        walked = start not in self.unread
        # An unread body records no events, so its parameters would never be used.
        params, defaults = parameters(caps["params"][0]) if walked else ((), {})
        self.funcs[qualname] = (params, line, end_line, walked, defaults)
        self.defs.append((name, qualname, "function", line, end_line))
        end = self.unread.get(start, end_byte)
        self._spans.append((start, end, qualname))
        self._read_text(name, qualname, line, source, start, end)
        stack.append((end_byte, "def" if walked else "unread", qualname))

    def _read_text(self, name: str, qualname: str, line: int, source: bytes, start: int,
                   end: int) -> None:
        """What a function's text shows, read or not: the `x.bind(` sites, and in a
        test module what a test calls."""
        if self._test_module and name.startswith("test"):
            used = {m.group(1).decode() for m in _USED.finditer(source, start, end)}
            self.tests[qualname] = (line, tuple(sorted(used)))
        for bound in _BIND.finditer(source, start, end):
            bound_name = _NAME_BEFORE.search(source, max(start, bound.start() - 120),
                                             bound.start())
            if bound_name:
                self.events.append((qualname, -1, "binds", bound_name.group().decode(),
                                    line + source.count(b"\n", start, bound.start())))

    def _decorated(self, caps, stack) -> None:
        node = caps["decorated"][0]
        target = caps["def"][0]
        qualname = self._prefix(stack) + _text(target.child_by_field_name("name"))
        scope = self._scope(stack)
        # Each of stacked decorators is its own registration: it starts the span.
        line = caps["decorator"][0].start_point[0] + 1
        self.events.append((scope, self._loop(stack, scope), "dec",
                            value(caps["decorator"][0]), qualname, line, _lines(node)[1]))

    # -- statements -----------------------------------------------------------

    def _statement(self, index, caps, stack) -> None:
        scope = self._scope(stack)
        loop = self._loop(stack, scope)
        line, end_line = _lines(caps["stmt"][0])
        if index == _CALL:
            call = value(caps["call"][0])
            if call[0] == "c":
                self.events.append((scope, loop, "call", call, line, end_line))
        elif index == _ASSIGN:
            name = _text(caps["target"][0])
            self.events.append((scope, loop, "assign", name, value(caps["value"][0]),
                                line, end_line))
            if not stack:
                self.defs.append((name, name, "variable", line, end_line))
            self._class_member(stack, name, line, end_line)
        elif index == _UNPACK:
            for target in caps["target"][0].named_children:
                if target.type == "identifier":
                    self._class_member(stack, _text(target), line, end_line)
        elif index == _SETITEM:
            target = caps["target"][0]
            key = target.child_by_field_name("subscript")
            self.events.append((scope, loop, "setitem",
                                value(target.child_by_field_name("value")),
                                value(key) if key is not None else OTHER,
                                value(caps["value"][0]), line, end_line))
        else:
            self.events.append((scope, loop, "return", value(caps["value"][0]), line, end_line))

    def _class_member(self, stack, name: str, line: int, end_line: int) -> None:
        """Methods and attributes of a class, as written in its body."""
        if stack and stack[-1][1] == "class" and stack[-1][2] in self.classes:
            self.classes[stack[-1][2]][3].setdefault(name, (line, end_line))

    def _import(self, node, stack) -> None:
        scope = self._scope(stack)
        line = node.start_point[0] + 1
        if node.type == "import_statement":
            for child in node.named_children:
                if child.type == "dotted_name":
                    target = _text(child)
                    # `import a.b` binds `a`; record the full path so `a.b.x` resolves.
                    self.imports.append((scope, target, target, line))
                elif child.type == "aliased_import":
                    self.imports.append((scope, _text(child.child_by_field_name("alias")),
                                         _text(child.child_by_field_name("name")), line))
            return
        source = node.child_by_field_name("module_name")
        base = self._absolute(_text(source)) if source is not None else None
        if base is None:
            return
        for child in node.children_by_field_name("name"):
            if child.type == "aliased_import":
                name = _text(child.child_by_field_name("name"))
                alias = _text(child.child_by_field_name("alias"))
            else:
                name = alias = _text(child)
            self.imports.append((scope, alias, f"{base}.{name}" if base else name, line))

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
