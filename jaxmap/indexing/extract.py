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

import re

from jaxmap.flow.flowtext import masked
from jaxmap.indexing import messages, moves, parse, skim
from jaxmap.indexing.calltext import add_graph_facts as add_graph_facts  # the indexer's, from here
from jaxmap.indexing.calltext import outside_functions, read_callees, read_flow, set_callees
from jaxmap.indexing.facts import (
    CALL,
    NAME,
    STAR,
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
    Return,
    SetItem,
    Test,
    Unpack,
    stored,
)
from jaxmap.indexing.nodevalues import (
    arguments,
    dotted,
    node_lines,
    node_text,
    parameters,
    string_literal,
    value,
)
from jaxmap.knowledge.orientation import is_test_module

_DELETED_GROUPS = {"expression_list", "tuple", "list", "parenthesized_expression"}

# The order of facts that start and end at the same place: scopes before statements.
_ORDER = {"function": 0, "class": 0, "decorated": 0, "loop": 0, "type_alias": 0, "if": 0,
          "else": 0, "call": 1, "assign": 1, "setitem": 1, "setattr": 1, "return": 1,
          "unpack": 1,
          "delete": 1, "import": 2}
# A function body without any of these words can neither build a primitive nor
# register a rule, so its statements are not walked (most of JAX's code).
# `super().__init__(...)`: a Primitive subclass may pass its name there. `return
# lambda`: a rule factory, whose result a helper may test (`weak_type_rule or default`).
_MAY_REGISTER = re.compile(
    rb"Primitive|primitive|def_[a-z]|register|rules|batchers|defjvp|deflinear|defbilinear"
    rb"|defvectorized|defbroadcasting|defreducer|_lowerings|super\(\)\.__init__\("
    rb"|return lambda")
# `x_p = helper(...)`: helper builds a primitive whatever words its body uses, so its
# body is walked even without any of the words above. The search starts at `_p` (a
# literal is found fast); what comes before it on the line is checked on each match.
_PRIMITIVE_FACTORY = re.compile(
    rb"_p[ \t]*(?::[^=\n]*)?=[ \t]*(?:[A-Za-z_][A-Za-z0-9_]*\.)*([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(")
_STATEMENT_START = re.compile(rb"[ \t]*[A-Za-z_][A-Za-z0-9_]*")
# `x.bind(`; and a primitive's bind handed on (`partial(dce_sink_p.bind, ...)`), which
# binds it where it is called.
_BIND = re.compile(rb"\.bind(?:_with_trace)?\(|(?<=_p)\.bind(?:_with_trace)?(?=[ \t]*[,)])")
_TRACE_METHOD = re.compile(rb"\.(process_[A-Za-z_]\w*)\(")
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
    `flow` (the index's first phase), what the second phase reads (callees, value
    flow, messages) is left for `add_graph_facts`: only where it would be read from
    is kept."""
    unread = _unread_bodies(source)
    root = parse.parse(source, () if full_parse else unread).root_node
    builder = _Builder(module, is_package, unread, flow)
    builder.collect(parse.matches(root, None if full_parse else builder.unread), source)
    code, outline = moves.fingerprints(source, unread)
    # The fingerprints first: what the second phase adds later goes last.
    facts = {"code": code, "outline": outline, "straight": _straight_lines(root),
             **builder.facts(_module_doc(root))}
    if root.has_error:  # tree-sitter's grammar refuses a little valid Python too
        refused = _syntax_error(source)
        if refused is not None:
            facts["unparsed"] = refused
    return facts


def _syntax_error(source: bytes) -> tuple[int, str] | None:
    """(line, what is wrong) where Python's own parser refuses `source`, else None."""
    import ast

    try:
        ast.parse(source)
    except SyntaxError as error:
        return error.lineno or 1, error.msg
    except (ValueError, RecursionError, MemoryError):
        return None
    return None



# An import statement inside a function's masked text, at a line's start or after a `;`
# and up to the next `;`, if any: `from m import (a, b as c)` (group 1 the module, group
# 2 the names) or `import a.b as c, d` (group 3).
_UNREAD_IMPORT = re.compile(
    rb"(?:^[ \t]+|;[ \t]*)(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n;]*)"
    rb"|import[ \t]+([\w., \t]+?))[ \t]*(?=$|[;\0])", re.M)


def _import_names(text: str) -> list[str]:
    """The `name` or `name as alias` pieces of an import's list."""
    text = re.sub(r"#[^\n]*|\x00+", " ", text)  # a comment, or what masking blanked
    pieces = (p.strip() for p in text.strip().strip("()").replace("\\\n", " ").split(","))
    return [" ".join(p.split()) for p in pieces if p and p.replace(" as ", "").replace(
        ".", "").replace("_", "").replace(" ", "").isalnum()]


def _unread_bodies(source: bytes) -> list[skim.Body]:
    """Bodies with no registration word that are not called to make an `x_p` here."""
    factories = {m.group(1) for m in _PRIMITIVE_FACTORY.finditer(source)
                 if _STATEMENT_START.fullmatch(source, _statement_start(source, m.start()),
                                               m.start())}
    return [body for body in skim.function_bodies(source) if body.name not in factories
            and not _MAY_REGISTER.search(source, body.start, body.end)]



def _first_line(source: bytes, start: int, line: int, ranges: list[tuple[int, int]]) -> int:
    """The line of an owner's first range of text, its own starting at `start`, `line`."""
    return line + source.count(b"\n", start, ranges[0][0])


def _statement_start(source: bytes, at: int) -> int:
    """Where the statement around `at` starts: its line's start, or past the last `;`
    before `at` on its line (`x = 1; a_p = make(...)`)."""
    line = source.rfind(b"\n", 0, at) + 1
    return max(line, source.rfind(b";", line, at) + 1)


def _docstring(source: bytes, at: int) -> str | None:
    """The first line of the docstring that opens a body starting at byte `at`."""
    opening = _DOCSTRING_START.match(source, at)
    if opening is None:
        return None
    end = source.find(opening.group(1), opening.end())
    return _summary(source[opening.end():end].decode("utf-8", "replace")) if end >= 0 \
        else None


def _summary(docstring: str) -> str | None:
    """A docstring's first line of prose: a reST directive before it (`.. currentmodule::
    jax.experimental.sparse`) is markup, not what the definition is."""
    for line in docstring.splitlines():
        line = line.strip()
        if line and not line.startswith(".. "):
            return line
    return None


# Statements that hold others, so that what they hold runs in an order, or at all, that
# their text does not fix: a loop's body again, a branch's maybe, a `try` body's up to a
# raise and an `except` body's instead, a class's or function's later.
_HOLDING = frozenset({"if_statement", "for_statement", "while_statement", "try_statement",
                      "with_statement", "match_statement", "class_definition",
                      "function_definition"})


def _straight_lines(root) -> list[int]:
    """The first line of each statement of the module's own top level, outside any
    statement holding others: what runs once, in the order of these lines."""
    return [child.start_point[0] + 1 for child in root.named_children
            if child.type not in _HOLDING and child.type != "comment"]


def _module_doc(root) -> str | None:
    for child in root.named_children:
        if child.type == "comment":
            continue
        if child.type == "expression_statement" and child.named_children and \
                child.named_children[0].type == "string":
            return _summary(string_literal(child.named_children[0]) or "")
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
        self._lambda_spans: list[tuple[int, int]] = []  # of the lambdas `_lambda` read
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
                **({"flow": read_flow(self._source, self._flow_texts, self.defs, self.imports)}
                   if self._with_flow else {"flow_spans": self._flow_texts,
                                            "callee_spans": self._callee_spans,
                                            "function_spans": self._spans})}

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
        if self._with_flow:
            self.messages = messages.scoped(source, self._spans)
        self._body_callees(source)

    def _read_callees(self, qualname: str, ranges: list, line: int, merge: bool) -> None:
        """What the text of `ranges` calls or names, as the owner's callees (added to
        what it has with `merge`); without flow, only where to read them later."""
        if self._with_flow:
            set_callees(self.callees, qualname, read_callees(self._source, ranges, line), merge)
        else:
            self._callee_spans.append((qualname, ranges, line, merge))

    def _body_callees(self, source: bytes) -> None:
        """What the code outside every function calls or names (decorators included):
        the module's under '', each class body's under the class's qualname (merged
        with a function's of the same qualname, which a branch may define); the
        lambdas a name holds (`_lambda`) call for that name, not for the module (whose
        value flow still reads them)."""
        functions = [(start, end) for start, end, _ in self._spans]
        outside = outside_functions(self._class_spans, functions, len(source))
        for qualname, start, line, ranges in outside:
            self._flow_texts.append((qualname, ranges, _first_line(source, start, line, ranges)))
        if self._lambda_spans:  # the same, less the lambdas
            outside = outside_functions(self._class_spans, functions + self._lambda_spans,
                                        len(source))
        for qualname, start, line, ranges in outside:
            self._read_callees(qualname, ranges, _first_line(source, start, line, ranges),
                               merge=True)

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
                              value(caps["loop.iterable"][0]), node_lines(caps["loop"][0])[0]),
                         stack, end_byte)

    def _branch(self, kind: str, caps, stack, end_byte: int) -> None:
        scope = self._scope(stack)
        condition = caps[kind + ".condition"][0]
        self._open_block(Branch(scope, self._block(stack, scope), value(condition),
                                kind == "if", node_lines(caps[kind + ".statement"][0])[0],
                                " ".join(node_text(condition).split())), stack, end_byte)

    def _type_alias(self, caps, stack, end_byte: int) -> None:
        if not stack:
            name = node_text(caps["type_alias.name"][0])
            self.defs.append(tuple(Definition(name, name, "variable",
                                              *node_lines(caps["type_alias"][0]))))

    def _class(self, caps, stack, end_byte: int) -> None:
        node = caps["class"][0]
        name = node_text(caps["class.name"][0])
        qualname = self._prefix(stack) + name
        line, end_line = node_lines(node)
        bases = arguments(caps["class.bases"][0])[0] if "class.bases" in caps else ()
        self.classes[qualname] = tuple(ClassSpec(bases, line, end_line, {}))
        if not any(kind == "function" for _, kind, _ in stack):
            doc = _docstring(self._source, node.child_by_field_name("body").start_byte)
            self.defs.append(tuple(Definition(name, qualname, "class", line, end_line, doc)))
            self._class_spans.append((node.start_byte, end_byte, qualname, line))
        stack.append((end_byte, "class", qualname))

    def _function(self, caps, stack, end_byte: int) -> None:
        node = caps["function"][0]
        name = node_text(caps["function.name"][0])
        qualname = self._prefix(stack) + name
        line, end_line = node_lines(node)
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
        if not walked:
            self._unread_imports(qualname, start, end)
        self._spans.append((start, end, qualname))
        self._read_text(name, qualname, line, start, end)
        stack.append((end_byte, "function" if walked else "unread", qualname))

    def _nested_function(self, caps, stack, end_byte: int, name: str, qualname: str) -> None:
        """A function inside a function: its own scope, bound to its name where it is
        defined (in a method of a local class, only the scope)."""
        line, end_line = node_lines(caps["function"][0])
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
        self._read_binds(qualname, line, start, end)

    def _read_binds(self, qualname: str, line: int, start: int, end: int) -> None:
        """The `x.bind(` sites of the text from `start` (at `line`) to `end`."""
        source = self._source
        for bound in _BIND.finditer(source, start, end):
            bound_name = _NAME_BEFORE.search(source, max(start, bound.start() - 120),
                                             bound.start())
            if bound_name:
                self.events.append(stored(Binds(
                    qualname, -1, bound_name.group().decode(),
                    line + source.count(b"\n", start, bound.start()))))

    def _decorated(self, caps, stack, end_byte: int) -> None:
        target = caps["decorated.definition"][0]
        qualname = self._prefix(stack) + node_text(target.child_by_field_name("name"))
        scope = self._scope(stack)
        decorator = caps["decorated.decorator"][0]
        outer = caps["decorated"][0]
        self._decorated_from[target.start_byte] = (outer.start_byte, outer.start_point[0] + 1)
        if _OVERLOAD.fullmatch(node_text(decorator)):
            self._overloads.add(target.start_byte)
        # Each of stacked decorators is its own registration: it starts the span.
        self.events.append(stored(Decorate(
            scope, self._block(stack, scope), value(decorator), qualname,
            decorator.start_point[0] + 1, node_lines(caps["decorated"][0])[1])))

    # -- statements -----------------------------------------------------------

    def _statement(self, stack) -> tuple[str, int]:
        """The scope and block of a statement."""
        scope = self._scope(stack)
        return scope, self._block(stack, scope)

    def _call_statement(self, caps, stack, end_byte: int) -> None:
        call = value(caps["call.call"][0])
        if call[0] == CALL:
            self.events.append(stored(Call(*self._statement(stack), call,
                                           *node_lines(caps["call"][0]))))

    def _assign(self, caps, stack, end_byte: int) -> None:
        """`name = value`, and each name of a chain (`call_p = closed_call_p = value`)."""
        names = [node_text(caps["assign.target"][0])]
        right = caps["assign.value"][0]
        while right.type == "assignment" and right.child_by_field_name("left").type \
                == "identifier" and right.child_by_field_name("right") is not None:
            names.append(node_text(right.child_by_field_name("left")))
            right = right.child_by_field_name("right")
        line, end_line = node_lines(caps["assign"][0])
        if right.type == "lambda" and not stack:
            self._lambda(names[0], right)
        assigned = value(right)  # evaluated once, then given to each name from the left
        for name in names:
            self.events.append(stored(Assign(*self._statement(stack), name, assigned, line,
                                             end_line)))
            assigned = (NAME, names[0])
            self._variable(stack, name, line, end_line)

    def _lambda(self, name: str, node) -> None:
        """`name = lambda x: ...` at a module's top level: calling the name runs the
        lambda, so what its text calls or binds is the name's (as a function's is)."""
        start, end = node.start_byte, node.end_byte
        line = node.start_point[0] + 1
        self._lambda_spans.append((start, end))
        self._read_callees(name, [(start, end)], line, merge=False)
        self._read_binds(name, line, start, end)

    def _setattr(self, caps, stack, end_byte: int) -> None:
        """`obj.attr = value`: an Assign to the dotted name (no variable of the module)."""
        target = dotted(caps["setattr.target"][0])
        if target is not None:
            self.events.append(stored(Assign(*self._statement(stack), target,
                                             value(caps["setattr.value"][0]),
                                             *node_lines(caps["setattr"][0]))))

    def _unpack(self, caps, stack, end_byte: int) -> None:
        line, end_line = node_lines(caps["unpack"][0])
        targets = caps["unpack.target"][0]
        self.events.append(stored(Unpack(*self._statement(stack), value(targets),
                                         value(caps["unpack.value"][0]), line, end_line)))
        for target in targets.named_children:
            if target.type == "identifier":
                self._variable(stack, node_text(target), line, end_line)

    def _setitem(self, caps, stack, end_byte: int) -> None:
        target = caps["setitem.target"][0]
        key = target.child_by_field_name("subscript")
        self.events.append(stored(SetItem(
            *self._statement(stack), value(target.child_by_field_name("value")),
            value(key) if key is not None else UNKNOWN, value(caps["setitem.value"][0]),
            *node_lines(caps["setitem"][0]))))

    def _return(self, caps, stack, end_byte: int) -> None:
        self.events.append(stored(Return(*self._statement(stack),
                                         value(caps["return.value"][0]),
                                         *node_lines(caps["return"][0]))))

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
        self.deleted += [node_text(t) for t in targets if t.type == "identifier"]

    def _import(self, caps, stack, end_byte: int) -> None:
        node = caps["import"][0]
        scope = self._scope(stack)
        line = node.start_point[0] + 1
        if node.type == "import_statement":
            for child in node.named_children:
                if child.type == "dotted_name":
                    target = node_text(child)
                    # `import a.b` binds `a`; record the full path so `a.b.x` resolves.
                    self.imports.append(tuple(Import(scope, target, target, line, False)))
                elif child.type == "aliased_import":
                    alias = node_text(child.child_by_field_name("alias"))
                    target = node_text(child.child_by_field_name("name"))
                    self.imports.append(tuple(Import(scope, alias, target, line,
                                                     self._reexport(alias, target))))
            return
        source = node.child_by_field_name("module_name")
        base = self._absolute(node_text(source)) if source is not None else None
        if base is None:
            return
        if any(child.type == "wildcard_import" for child in node.children):
            self.imports.append(tuple(Import(scope, STAR, base, line, True)))
        for child in node.children_by_field_name("name"):
            explicit = child.type == "aliased_import"
            if explicit:
                name = node_text(child.child_by_field_name("name"))
                alias = node_text(child.child_by_field_name("alias"))
            else:
                name = alias = node_text(child)
            self.imports.append(tuple(Import(scope, alias, f"{base}.{name}" if base else name,
                                             line, explicit and self._reexport(alias, name))))

    def _unread_imports(self, qualname: str, start: int, end: int) -> None:
        """The imports of a body the parser left out, read from its text (strings and
        comments blanked): `from jax._src.lax import lax as lax_internal` inside a
        function names what its calls of `lax_internal.x` mean."""
        if self._source.find(b"import", start, end) < 0:  # most bodies: no need to look
            return
        code = masked(self._source[start:end])
        line = self._source.count(b"\n", 0, start) + 1
        for match in _UNREAD_IMPORT.finditer(code):
            at = line + code.count(b"\n", 0, match.start())
            base, names, modules = (g.decode() if g else None for g in match.groups())
            if modules is not None:
                for piece in _import_names(modules):
                    target, _, alias = piece.partition(" as ")
                    self.imports.append(tuple(Import(qualname, alias.strip() or target.strip(),
                                                     target.strip(), at, False)))
                continue
            absolute = self._absolute(base or "")
            if absolute is None or names is None or "*" in names:
                continue
            for piece in _import_names(names):
                name, _, alias = piece.partition(" as ")
                self.imports.append(tuple(Import(qualname, alias.strip() or name.strip(),
                                                 f"{absolute}.{name.strip()}", at, False)))

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
