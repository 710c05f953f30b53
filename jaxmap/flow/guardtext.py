"""Call guards, read from an owner's text as flowtext.py reads its values: which names
an enclosing `if` requires to be None at each line (`if x is None:`, `if x is None and
y is None:`), equal to a word (`elif mode == "edge":`, kept as `mode==edge`), one of
several (`mode in ("a", "b")`, a literal tuple, list, set or dict's keys, or a name
bound once to one: `mode==a/b`) or none of them (`!=`, `not in`: `mode==!a/b`), and
what each call passes (by position and by keyword; a word literal as `'edge'`). The call graph
keeps them on its edges, so that a trace-time walk can leave out a call that its
callers' arguments never let run (`where(c, x, y)` never runs `where`'s one-argument
`nonzero(c)`).

Only what reads exactly guards a line: a condition with `or`, `not` (but `not in`) or
brackets (but a literal of words), an `else:` block, a header over several lines or
after its `:` on one line, guards nothing; nor does `in` a name the function or its
module may bind otherwise, or change (`Guards._named_words`); a name the function
binds anywhere but as its own parameter (`x = ...`, `for x in`, `as x`, `x :=`, `del
x`, a nested def's or lambda's parameter: read by Python's own parser, as below) is no
guard either, since it may not hold what the caller passed; nor is any name of a text
that parser cannot read as one function.

A name passed counts as surely not None only where a function binds it in one way
alone, `name = value` statements whose values are surely not None (`y = f(x)`,
`y = x + 1`; also unpacked from a literal of such values, `a, b = f(x), 1`, or from a
parameter of its own annotated `tuple[A, B]` with types that exclude None), and in
no other: read by Python's own parser from the function's text,
any other binding of the name anywhere in it (a parameter, its own or a nested def's
or lambda's, a loop's or comprehension's target, unpacking, `as`, `:=`, `global`,
`nonlocal`, `del`, an import, a `case` pattern, a chained target) keeps it maybe None;
or where it is a parameter of its own annotated with a type that excludes None (a
type-correct caller passes none: annotations are trusted); or where the call's own
arguments use it where None raises (`where(c | (a > b), b, a)`). A parameter of its
own that it binds in no other way is passed on (`@x`, or `&x` where it is also surely
not None): its callers decide.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right
from functools import lru_cache
from typing import NamedTuple

from jaxmap.flow.flowtext import masked
from jaxmap.models import GUARD_EQUALS, GUARD_NOT, GUARD_OR

_GUARD = re.compile(
    rb"[ \t\0]*(?:el)?if[ \t]+([A-Za-z_]\w*[ \t]+is[ \t]+None"
    rb"(?:[ \t]+and[ \t]+[A-Za-z_]\w*[ \t]+is[ \t]+None)*)[ \t]*:[ \t\0]*\Z")
_GUARDED = re.compile(rb"([A-Za-z_]\w*)[ \t]+is[ \t]+None")
# `(el)if name == "word":` (the word's contents masked: read from the source), and a
# word: a string literal of letters, digits, `_`, `-` and `.` only.
_EQUAL = re.compile(rb"[ \t\0]*(?:el)?if[ \t]+([A-Za-z_]\w*)[ \t]*(==|!=)[ \t]*[\"'](\0+)[\"']"
                    rb"[ \t]*:[ \t\0]*\Z")
# `(el)if name in ("a", "b"):` (a literal tuple, list, set or dict, read from the
# source) or `(el)if name not in words:` (a name the function or its module binds once).
_MEMBER = re.compile(rb"[ \t\0]*(?:el)?if[ \t]+([A-Za-z_]\w*)[ \t]+(not[ \t]+)?in[ \t]*"
                     rb"([(\[{].*[)\]}]|(?<=[ \t])[A-Za-z_]\w*)[ \t]*:[ \t\0]*\Z")
# What may start a guard: no need to read an owner's lines without one (` is None`,
# `==`, `!=`, `if x in`, `if x not in`); each alternative is told by its first byte, which
# lets the engine skip to the next place where one may start.
_MAY_GUARD = re.compile(
    rb"[ =!i](?:(?<= )is None|(?<=[=!])=|(?<=\bi)f[ \t]+\w+[ \t]+(?:not[ \t]+)?in\b)")
WORD = re.compile(r"[\w.-]+", re.ASCII)
_WORD_LITERAL = re.compile(rb"([\"'])(" + WORD.pattern.encode() + rb")\1")
EQUALS = GUARD_EQUALS  # `mode==edge`: a guard that parameter mode is the word "edge"
_NAME = re.compile(rb"[A-Za-z_]\w*")
_SEPARATOR = re.compile(
    rb'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|#[^\n]*|'
    rb"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|[()\[\]{},]")
_COMMENT = re.compile(rb"#[^\n]*")
_PLAIN_ARGUMENTS = re.compile(rb"\([^()\[\]{}\"'#]*\)")
_KEYWORD = re.compile(rb"\s*([A-Za-z_]\w*)\s*=(?!=)")
# What an argument is, where not a bare name (kept as written): None, a value that may
# be None (`None if axis is None else f(axis)`, `x or None`), any other value.
NONE, MAYBE, VALUE = "None", "?", "."
SPREAD = "*"  # `*args`: what follows is unknown
KEYWORDS = "**"  # `**kwargs`: any parameter not passed by name may be
FORWARD = "@"  # `@x`: the owner's parameter `x`, passed on as it came
SURELY = "&"  # `&x`: the same, surely not None (typed so, or the call proves it)
_MAYBE_NONE = re.compile(rb"\b(?:if|or|and|yield)\b")
_DOTTED = re.compile(rb"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")  # an attribute: may be None
# What a statement `name = value` may assign that is surely not None.
_VALUES = (ast.Call, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Subscript, ast.List,
           ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.SetComp, ast.DictComp,
           ast.GeneratorExp, ast.Lambda, ast.JoinedStr)
# Operators that raise on a None operand (not `|`: `int | None` is a type), and the
# expressions whose parts may not run.
_RAISING = (ast.Add, ast.Sub, ast.Mult, ast.MatMult, ast.Div, ast.FloorDiv, ast.Mod,
            ast.Pow, ast.LShift, ast.RShift, ast.BitAnd, ast.BitXor, ast.USub, ast.UAdd,
            ast.Invert, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
# Types whose values are never None, by their last name: a parameter annotated with
# them (or a union, or a subscript, of them: `Sequence[int | None]` is still a sequence)
# is trusted to hold no None. Not what may alias `Any` or `None` (`DimSize`, `Axis`).
_NOT_NONE = frozenset({
    "int", "float", "complex", "bool", "str", "bytes", "tuple", "list", "dict", "set",
    "frozenset", "type", "Tuple", "List", "Dict", "Set", "FrozenSet", "Type", "Sequence",
    "Mapping", "Iterable", "Iterator", "Collection", "Callable", "Hashable", "ndarray",
    "dtype", "Array", "ArrayLike", "DTypeLike", "Shape", "StaticScalar"})
# A call's text with none of these uses no name where None raises (no operator that
# raises, no subscript, no attribute): no need to parse it.
_MAY_RAISE = re.compile(rb"[-+*@/%<>&^~\[.]")
# The first word of a text's first statement, past blank and comment lines (or its
# opening quote): a text that starts with none of `_MAY_DEFINE` (nor with `@`, which
# this does not match) is no function's (an `if` is read as its block).
_FIRST_WORD = re.compile(rb"(?:[ \t\f]*(?:#[^\r\n]*)?\r?\n)*[ \t\f]*([A-Za-z_]\w*|[\"'])")
_MAY_DEFINE = (b"def", b"async", b"if")
# A plain `def` starting a function's text (indented: after `if 1:`), and what past it
# may bind a name: an assignment of any kind, a default, a keyword argument (or `<=`,
# `>=`), a loop's or comprehension's target, `as`, an import, a def, a class, a lambda,
# `global`, `nonlocal`, `del`, a `case` pattern. A keyword is read apart from the
# letters around it, not from digits before it (`[1for x in y]`). As in `_MAY_GUARD`,
# each alternative starts with the byte it is told by, what may not precede it looked
# behind from there.
_OWN_DEF = re.compile(rb"(?:if 1:\n)?[ \t]*(?:async[ \t]+)?def(?![\w])")
_MAY_BIND = re.compile(
    rb"=(?<![=!]=)(?!=)|[acdfgiln](?<![A-Za-z_][acdfgiln])(?:(?<=f)or|(?<=a)s|(?<=i)mport"
    rb"|(?<=d)ef|(?<=c)lass|(?<=l)ambda|(?<=g)lobal|(?<=n)onlocal|(?<=d)el|(?<=c)ase)(?!\w)")
# Nodes that hold nothing a walk for bindings looks at.
_CONTEXTS = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
_MAY_NOT_RUN = (ast.BoolOp, ast.IfExp, ast.Lambda, ast.ListComp, ast.SetComp,
                ast.DictComp, ast.GeneratorExp)


class Guards:
    """For each line of an owner's text, the names its enclosing `if`s require to be
    None; the names the text assigns; and (asked) the names surely not None."""

    def __init__(self, source: bytes, pieces: list[tuple[int, int]]):
        self._source, self._pieces = source, pieces
        self._bindings: _Bindings | None = None
        self._starts: list[int] = []
        self._guards: list[frozenset[str]] = []
        if any(_MAY_GUARD.search(source, start, end) for start, end in pieces):
            for start, end in pieces:
                self._read(source, start, end)

    def at(self, offset: int) -> frozenset[str]:
        """The names the line holding `offset` requires None."""
        found = bisect_right(self._starts, offset) - 1
        return self._guards[found] if found >= 0 else frozenset()

    def _read(self, source: bytes, start: int, end: int) -> None:
        code = masked(source[start:end])
        blocks: list[tuple[int, frozenset[str]]] = []  # (indent, names) of open guards
        guard: frozenset[str] = frozenset()
        depth, joined, at = 0, False, 0
        for line in code.split(b"\n"):
            indent = len(line) - len(line.lstrip(b" \t\0"))
            if depth <= 0 and not joined and line.strip(b" \t\0"):  # a statement starts
                while blocks and blocks[-1][0] >= indent:
                    blocks.pop()
                guard = frozenset().union(*(names for _indent, names in blocks))
                header = _GUARD.match(line)
                if header:
                    blocks.append((indent, frozenset(
                        name.decode() for name in _GUARDED.findall(header.group(1)))))
                words = self._words(line, start + at) if header is None else None
                if words is not None:
                    blocks.append((indent, frozenset({words})))
                depth = 0
            elif blocks and indent <= blocks[-1][0]:  # a continuation out of its block
                guard = frozenset()
            self._starts.append(start + at)
            self._guards.append(guard)
            depth += _depth(line)
            joined = line.rstrip(b" \t\0").endswith(b"\\")
            at += len(line) + 1

    def _words(self, line: bytes, offset: int) -> str | None:
        """The guard `name==words` of a header `line` (masked; at `offset` of the
        source) that requires a parameter to be (or, negated, not to be) one of some
        words, if it is one and its words read surely."""
        equal = _EQUAL.match(line)
        if equal is not None:  # the word, read where the mask blanked it
            word = self._source[offset + equal.start(3):offset + equal.end(3)]
            words = frozenset({word.decode("latin-1")}) \
                if WORD.fullmatch(word.decode("latin-1")) else None
            name, negated = equal.group(1), equal.group(2) == b"!="
        else:
            member = _MEMBER.match(line)
            if member is None:
                return None
            text = self._source[offset + member.start(3):offset + member.end(3)]
            words = _literal_words(text) if text[:1] in b"([{" \
                else self._named_words(text.decode())
            name, negated = member.group(1), member.group(2) is not None
        return None if words is None else \
            f"{name.decode()}{EQUALS}{GUARD_NOT if negated else ''}{GUARD_OR.join(sorted(words))}"

    def _named_words(self, name: str) -> frozenset[str] | None:
        """The words of the literal that `name` holds wherever the function runs: bound
        once, by a statement of the function's own body (or, bound nowhere in it, of its
        module's top level, and nowhere else in the module) to a literal of words, and,
        unless a tuple, used only where nothing changes it (`in`, `==`, `name[k]`, a
        loop). Another module changing it (`lax_numpy.modes["x"] = f`) is not seen."""
        function = self._read_bindings().function
        if function is None:
            return None
        root: ast.FunctionDef | ast.AsyncFunctionDef | ast.Module | None = function
        names = _names(function)
        if name not in names.bound:
            root, names = _module(self._source)
        bound = names.bound.get(name, [])
        if root is None or len(bound) != 1 or bound[0] not in root.body:
            return None
        _target, value = _simple(bound[0])
        words = _words(value)
        return words if isinstance(value, ast.Tuple) or name not in names.changed else None

    def surely_value(self, name: bytes) -> bool:
        """Whether the text binds `name` only to values surely not None, or it is a
        parameter annotated with a type that excludes None."""
        return name.decode() in self._read_bindings().values

    def parameters(self) -> frozenset[str]:
        """The function's own parameters that its text binds in no other way."""
        return self._read_bindings().parameters

    @property
    def assigned(self) -> frozenset[str]:
        """The names the text binds but as the function's own parameters (`if x is
        None:` on them guards nothing); where Python cannot read it as one function,
        every name a guard names."""
        if not any(self._guards):
            return frozenset()
        bound = self._read_bindings().bound
        return frozenset(guard.partition(EQUALS)[0] for guard in frozenset().union(
            *self._guards)) if bound is None else bound

    def values(self) -> frozenset[str]:
        """The names a function's text binds only to values surely not None, and its
        parameters annotated with types that exclude None. A module's or class's text
        has none: a function may rebind its names (`global`), and another module its
        module's."""
        return self._read_bindings().values

    def _read_bindings(self) -> _Bindings:
        """The function's text read by Python's parser, once asked; a text whose first
        statement is no def (a module's, a class's) is not parsed: it binds as none."""
        if self._bindings is None:
            start, end = self._pieces[0][0], self._pieces[-1][1]
            line_start = self._source.rfind(b"\n", 0, start) + 1
            first = _FIRST_WORD.match(self._source, line_start, end)
            if first is not None and first.group(1) not in _MAY_DEFINE:
                self._bindings = _UNREAD
                return self._bindings
            text = self._source[line_start:end]
            if line_start < start:  # indented: a method or a nested def
                text = b"if 1:\n" + text
            self._bindings = _bindings(text)
        return self._bindings


class _Bindings(NamedTuple):
    """How a function binds its names: those only to values surely not None (and its
    parameters typed to exclude None), its own parameters bound in no other way, and
    every name bound but as its own parameter (None: not read); and its tree."""

    values: frozenset[str]
    parameters: frozenset[str]
    bound: frozenset[str] | None
    function: ast.FunctionDef | ast.AsyncFunctionDef | None


_UNREAD = _Bindings(frozenset(), frozenset(), None, None)


def _simple(node: ast.AST) -> tuple[ast.expr | None, ast.expr | None]:
    """The target and value of a statement with one target (`a = v`, `a: T = v`)."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        return node.targets[0], node.value
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        return node.target, node.value
    return None, None


def _bindings(text: bytes) -> _Bindings:
    """How the one function of `text` binds its names: only by `name = value`
    statements whose values are surely not None (or unpacked from such values), as its
    own parameters (not `*args`,
    `**kw`) and in no other way, or anyhow but as its own parameters; not read if
    `text` is no function Python parses."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _UNREAD
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.If) else tree.body
    if len(body) != 1 or not isinstance(body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return _UNREAD
    signature = body[0].args
    args = (*signature.posonlyargs, *signature.args, *signature.kwonlyargs)
    positional = (*signature.posonlyargs, *signature.args)
    defaults = [*[None] * (len(positional) - len(signature.defaults)), *signature.defaults,
                *signature.kw_defaults]
    typed = {arg.arg for arg, default in zip(args, defaults) if arg.annotation
             and _not_none(arg.annotation) and not _is_none(default)}
    if _signature_binds_only(text):  # only its parameters, `*args` and `**kw` bind
        spread = {arg.arg for arg in (signature.vararg, signature.kwarg) if arg is not None}
        return _Bindings(frozenset(typed - spread),
                         frozenset(arg.arg for arg in args) - spread, frozenset(spread), body[0])
    own = {id(arg) for arg in args}
    elements = {arg.arg: _typed_elements(arg.annotation) for arg in args
                if arg.arg in typed and arg.annotation is not None}
    simple: set[str] = set()
    other: set[str] = set()
    parameters: set[str] = set()
    read: set[int] = set()  # the targets of the statements read as `name = value`
    unpacked: list[tuple[str, list[str]]] = []  # `a, b = param`: valued if param's are
    for node in _walk(body[0]):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            target, value = _simple(node)
            if isinstance(target, ast.Name):
                (simple if _valued(value) else other).add(target.id)
                read.add(id(target))
            elif isinstance(target, (ast.Tuple, ast.List)) and _names_only(target):
                names = [item.id for item in target.elts if isinstance(item, ast.Name)]
                if isinstance(value, (ast.Tuple, ast.List)) and _unstarred(value, len(names)):
                    for name, item in zip(names, value.elts):
                        (simple if _valued(item) else other).add(name)
                elif isinstance(value, ast.Name) and elements.get(value.id) == len(names):
                    unpacked.append((value.id, names))
                else:
                    continue
                read.update(id(item) for item in target.elts)
            elif isinstance(node, ast.AnnAssign) and node.value is None:
                read.add(id(node.target))  # `x: T` alone binds nothing
        elif isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load) and id(node) not in read:
                other.add(node.id)
        elif isinstance(node, ast.arg):
            (parameters if id(node) in own else other).add(node.arg)
        elif type(node) in _BINDERS and node is not body[0]:  # (its own name: outside)
            other.update(_binding(node))
    for param, names in unpacked:  # a parameter bound in no other way: its elements
        (simple if param not in other | simple else other).update(names)
    return _Bindings(frozenset(simple - other - parameters | typed - other),
                     frozenset(parameters - other - simple),
                     frozenset(simple | other), body[0])


def _signature_binds_only(text: bytes) -> bool:
    """Whether a function's text, a plain `def` (no decorator), has nothing past its
    `def` that may bind a name: no `=` but in `==` and `!=`, and none of the keywords
    that bind (a string or a comment that holds one counts too)."""
    own = _OWN_DEF.match(text)
    return own is not None and _MAY_BIND.search(text, own.end()) is None


class _Names(NamedTuple):
    """Where a tree binds each name (`_binding`), and the names it uses where what they
    hold may change: anywhere but a comparison (`in`, `==`), a subscript read (`name[k]`)
    or a loop's iterable."""

    bound: dict[str, list[ast.AST]]
    changed: frozenset[str]


def _names(root: ast.AST) -> _Names:
    """How `root`'s tree (not `root` itself) binds and uses its names: one walk."""
    bound: dict[str, list[ast.AST]] = {}
    reads: set[int] = set()  # the uses that change nothing, and the targets read
    loads: list[ast.Name] = []
    for node in _walk(root):
        target, _value = _simple(node)
        if isinstance(target, ast.Name):
            bound.setdefault(target.id, []).append(node)
            reads.add(id(target))
        elif isinstance(node, ast.Compare):
            reads.update(map(id, (node.left, *node.comparators)))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            reads.add(id(node.value))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            reads.add(id(node.iter))
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                loads.append(node)
            elif id(node) not in reads:
                bound.setdefault(node.id, []).append(node)
        elif node is not root and type(node) in _BINDERS:
            for name in _binding(node):
                bound.setdefault(name, []).append(node)
    return _Names(bound, frozenset(load.id for load in loads if id(load) not in reads))


# The kinds of node `_binding` finds names in (what Python's parser makes: no subclass);
# most nodes are none, and are passed over without asking.
_BINDERS = frozenset({ast.arg, ast.alias, ast.Global, ast.Nonlocal, ast.FunctionDef,
                      ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler, ast.MatchAs,
                      ast.MatchStar, ast.MatchMapping})


def _binding(node: ast.AST) -> tuple[str, ...]:
    """The names a node but a `Name` binds: a parameter, an import, a def, `global`,
    `as`, a `case` capture."""
    if isinstance(node, ast.arg):
        return (node.arg,)
    if isinstance(node, ast.alias):
        return ((node.asname or node.name).partition(".")[0],)
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return tuple(node.names)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                         ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
        return (node.name,) if node.name else ()
    if isinstance(node, ast.MatchMapping):
        return (node.rest,) if node.rest else ()
    return ()


@lru_cache(maxsize=1)
def _module(source: bytes) -> tuple[ast.Module | None, _Names]:
    """A module's tree and its names, for the names its functions read (its owners are
    read in turn)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None, _Names({}, frozenset())
    return tree, _names(tree)


def _literal_words(text: bytes) -> frozenset[str] | None:
    """The words of a literal written `text` (`("a", "b")`), as `_words` reads them."""
    try:
        return _words(ast.parse(text, mode="eval").body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _words(value: ast.expr | None) -> frozenset[str] | None:
    """The words of a literal tuple, list or set of words, or of a dict's keys (`in`
    tests a dict's keys); None where it is anything else, or empty."""
    items = value.keys if isinstance(value, ast.Dict) else value.elts \
        if isinstance(value, (ast.Tuple, ast.List, ast.Set)) else []
    words = [item.value for item in items if isinstance(item, ast.Constant)
             and isinstance(item.value, str) and WORD.fullmatch(item.value)]
    return frozenset(words) if words and len(words) == len(items) else None


def _valued(value: ast.expr | None) -> bool:
    """Whether an assigned expression is surely not None."""
    return isinstance(value, _VALUES) or isinstance(value, ast.Constant) \
        and value.value is not None


def _names_only(node: ast.Tuple | ast.List) -> bool:
    """Whether a tuple or list target holds plain names only (`a, b`)."""
    return all(isinstance(item, ast.Name) for item in node.elts)


def _unstarred(node: ast.Tuple | ast.List, count: int) -> bool:
    """Whether a tuple or list literal has `count` elements, none starred."""
    return len(node.elts) == count and not any(isinstance(item, ast.Starred)
                                               for item in node.elts)


def _typed_elements(annotation: ast.expr) -> int | None:
    """How many elements a `tuple[A, B]` annotation gives, each of a type that excludes
    None; None for any other annotation (`tuple[int, ...]`, `tuple[int | None, int]`)."""
    read = _unquoted(annotation)
    if not isinstance(read, ast.Subscript) or _last_name(read.value) not in ("tuple", "Tuple"):
        return None
    parts = read.slice.elts if isinstance(read.slice, ast.Tuple) else [read.slice]
    if any(_is_ellipsis(part) or not _not_none(part) for part in parts):
        return None
    return len(parts)


def _is_ellipsis(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is Ellipsis


def _is_none(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _walk(root: ast.AST) -> list[ast.AST]:
    """Every node of `root`'s tree, each after its parent, but contexts and operators:
    `ast.walk`'s nodes, in less time."""
    found, node_type = [root], ast.AST
    for node in found:
        for field in node._fields:
            child = getattr(node, field, None)
            if type(child) is list:
                found += [item for item in child if isinstance(item, node_type)]
            elif isinstance(child, node_type) and not isinstance(child, _CONTEXTS):
                found.append(child)
    return found


def _not_none(annotation: ast.expr) -> bool:
    """Whether an annotation names only types whose values are never None."""
    unquoted = _unquoted(annotation)
    if unquoted is not annotation:
        return unquoted is not None and _not_none(unquoted)
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _not_none(annotation.left) and _not_none(annotation.right)
    if isinstance(annotation, ast.Subscript):
        if _last_name(annotation.value) != "Union":
            return _not_none(annotation.value)
        parts = annotation.slice
        return all(map(_not_none, parts.elts if isinstance(parts, ast.Tuple) else (parts,)))
    return _last_name(annotation) in _NOT_NONE


def _unquoted(annotation: ast.expr) -> ast.expr | None:
    """A string annotation (`'int | None'`) read as the expression it holds (None where
    Python cannot read it); any other as it is."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            return ast.parse(annotation.value, mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    return annotation


def _last_name(node: ast.expr) -> str | None:
    return node.id if isinstance(node, ast.Name) else \
        node.attr if isinstance(node, ast.Attribute) else None


def operands(call: bytes) -> frozenset[str]:
    """The names that the arguments of `call` (its text from `(`) surely use where None
    raises, before the call: an operand of an arithmetic operator but `|`, of `<`, `<=`,
    `>`, `>=` (the first of a chain), of unary `-`, `+`, `~`; what is subscripted; what
    an attribute not `__dunder__` is read of. Not under `and`, `or`, `a if c else b`, a
    lambda or a comprehension (they may not run), nor a name `:=` rebinds."""
    if not _MAY_RAISE.search(call):
        return frozenset()
    try:
        tree = ast.parse(b"_" + call, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    if not isinstance(tree.body, ast.Call):
        return frozenset()
    found: set[str] = set()
    stack: list[ast.AST] = [*tree.body.args, *(k.value for k in tree.body.keywords)]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Compare):  # `a < b < c`: what follows `b` may not run
            found.update(part.id for part in _raising(node) if isinstance(part, ast.Name))
            stack += (node.left, node.comparators[0])
        elif not isinstance(node, _MAY_NOT_RUN):
            found.update(part.id for part in _raising(node) if isinstance(part, ast.Name))
            stack.extend(ast.iter_child_nodes(node))
    rebound = {node.target.id for node in ast.walk(tree) if isinstance(node, ast.NamedExpr)}
    return frozenset(found - rebound)


def _raising(node: ast.AST) -> tuple[ast.AST, ...]:
    """The parts of `node` that None would make raise."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return (node.left,)  # `"%s" % None` formats it
    if isinstance(node, ast.BinOp) and isinstance(node.op, _RAISING):
        return node.left, node.right
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, _RAISING):
        return (node.operand,)
    if isinstance(node, ast.Compare) and isinstance(node.ops[0], _RAISING):
        return node.left, node.comparators[0]
    if isinstance(node, ast.Subscript) or isinstance(node, ast.Attribute) \
            and not (node.attr.startswith("__") and node.attr.endswith("__")):
        return (node.value,)
    return ()


def _depth(text: bytes) -> int:
    count = text.count
    return count(b"(") + count(b"[") + count(b"{") - count(b")") - count(b"]") - count(b"}")


def arguments(source: bytes, at: int, values: Guards | None = None) -> tuple[str, ...]:
    """What the call whose `(` is at `at` passes: for each positional argument, `None`,
    `?` (a value that may be None: a name, unless `values` (the owner's guards) knows
    it surely is not, or the call's own arguments use it where None would raise; a
    condition, `or`, `and`, `yield`, an attribute), `@name` (a parameter of the owner's
    own that it binds in no other way: its callers decide), `'word'` (a string literal
    of a word), or `.` (anything else: a literal, a call, an operation, a subscript);
    `*` for `*args` (what follows is unknown); then `name=` and the same for each
    keyword, `**` for `**kwargs`."""
    plain = _PLAIN_ARGUMENTS.match(source, at)
    if plain:  # no bracket, string or comment inside: its commas separate its arguments
        return _passed(source[at + 1:plain.end() - 1].split(b","), plain.group(), values)
    pieces: list[bytes] = []
    depth, piece = 0, at + 1
    for match in _SEPARATOR.finditer(source, at):
        token = match.group()
        if token in (b"(", b"[", b"{"):
            depth += 1
        elif token in (b")", b"]", b"}") or token == b"," and depth == 1:
            if token != b",":
                depth -= 1
            if depth == 0 or token == b",":
                pieces.append(source[piece:match.start()])
                piece = match.end()
            if depth == 0:
                return _passed(pieces, source[at:match.end()], values)
    return (*_passed(pieces, b"", values), SPREAD)  # never closed (a bound, or broken text)


def _passed(pieces: list[bytes], call: bytes, values: Guards | None) -> tuple[str, ...]:
    found: list[str] = []
    used: frozenset[str] | None = None  # the names the call's arguments prove, once asked
    for text in pieces:
        text = _COMMENT.sub(b"", text).strip() if b"#" in text else text.strip()
        if not text:
            continue
        if text.startswith(b"*"):
            found.append(KEYWORDS if text.startswith(b"**") else SPREAD)
            continue
        keyword = _KEYWORD.match(text) if b"=" in text else None
        if keyword:
            text = text[keyword.end():].strip()
        if text != b"None" and _NAME.fullmatch(text):  # a bare name (`_value`'s MAYBE)
            if used is None and call.count(text) > 1:  # else the call uses it only here
                used = operands(call)
            value = _name_value(text, used or frozenset(), values)
        else:
            value = _value(text)
        found.append(f"{keyword.group(1).decode()}={value}" if keyword else value)
    return tuple(found)


def _name_value(name: bytes, used: frozenset[str], values: Guards | None) -> str:
    """What a bare name passed is: a parameter passed on (surely not None, or not
    known), else surely a value or maybe None."""
    text = name.decode()
    surely = text in used or values is not None and values.surely_value(name)
    if values is not None and text in values.parameters():
        return (SURELY if surely else FORWARD) + text
    return VALUE if surely else MAYBE


def _value(text: bytes) -> str:
    if text == b"None":
        return NONE
    word = _WORD_LITERAL.fullmatch(text)
    if word:  # a value; which, for a guard `mode==edge`
        return f"'{word.group(2).decode()}'"
    # A name may hold None: a parameter its callers choose, a local bound by any of
    # Python's forms (unpacked, a loop's, a lambda's, `as`), a global.
    return MAYBE if _NAME.fullmatch(text) or _MAYBE_NONE.search(text) \
        or _DOTTED.fullmatch(text) else VALUE
