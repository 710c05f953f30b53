"""The schema between extract and resolve: every tag, the one UNKNOWN, named records.

extract.py writes a file's facts as plain dicts, tuples and strings, because the index
stores them with marshal, which takes no named tuples. `FileFacts.wrap` turns that
stored form into the records below, and the resolver reads them by name only.

Expressions and the resolver's values are small tuples whose first item is a tag.
Literals are the same tuple as an expression and as a value: a string expression
`(STR, "psum")` evaluates to itself.
"""

from __future__ import annotations

from typing import NamedTuple

UNKNOWN = ("?",)  # an expression extract does not model, or a value not known

# -- expressions (what extract records) and the literals shared with values -------------
NAME = "n"  # (NAME, "a.b.c"): a dotted name
ATTRIBUTE = "a"  # (ATTRIBUTE, object, "attr"): an attribute of something not a name
CALL = "c"  # (CALL, callee, args, {keyword: value})
SUBSCRIPT = "sub"  # (SUBSCRIPT, base, key)
SPLAT = "*"  # (SPLAT,): `*args` or `**kwargs` in a call
STR = "s"  # (STR, "text")
CONST = "k"  # (CONST, True | False | None)
TUPLE = "t"  # (TUPLE, items): tuples and lists
DICT = "d"  # (DICT, ((key, value), ...))
LAMBDA = "l"  # (LAMBDA, line, params, defaults, body)
NOT = "not"  # (NOT, operand)
ADD = "+"  # (ADD, left, right): `name + "_wrapper"`; a value only while a side is a PARAM
# Operators whose value is one of their operands, or a truth, where that can be told;
# kept as values only while an operand is a PARAM (decided where a summary is applied):
OR = "or"  # (OR, left, right): `rule or _default_rule`
AND = "and"  # (AND, left, right)
IS = "is"  # (IS, left, right): `rule is None`; `is not` is (NOT, (IS, ...))
ISA = "isa"  # (ISA, value, class): `isinstance(value, class)` while value is a PARAM
CHOICE = "ifx"  # (CHOICE, condition, then, otherwise): `then if condition else otherwise`

# -- values only the resolver makes --------------------------------------------------------
PRIM = "prim"  # (PRIM, index): a primitive found in the tree
NEW = "new"  # (NEW, name, k): the k-th primitive a function under summary creates
PARAM = "param"  # (PARAM, i): parameter i of a function under summary
FUNC = "func"  # (FUNC, module, qualname)
CLASS = "class"  # (CLASS, module, qualname)
MODULE = "module"  # (MODULE, module)
SYM = "sym"  # (SYM, "qualified.name"): outside the tree, or a variable not tracked
PARTIAL = "partial"  # (PARTIAL, callee, args, kwargs[, (module, name, line)]):
                     # functools.partial(...), with the module-level name it is bound to
APPLIED = "applied"  # (APPLIED, callee, args): the result of a call not followed
MADE = "made"  # (MADE, factory, args): the lambda a call of a rule factory returns
METHOD = "method"  # (METHOD, target, "name"): a bound method, e.g. p.def_impl
RULES = "rules"  # (RULES, (rule, ...)): one registration's functions (defbilinear's two)
INSTANCE = "inst"  # (INSTANCE, class, k): the k-th object of a class of the tree made
                   # (its attributes are the interpreter's, by k)
SUPER = "super"  # (SUPER, class, self): `super()` in a method of `class`, for `self`
CLOSURE = "closure"  # (CLOSURE, module, qualname, env): a nested function, with the locals
                     # of the function that defined it

# -- records -----------------------------------------------------------------------------
# Each statement and block records the function it is in (`scope`: the innermost
# function's qualname, `outer.inner` for a nested one, '' at module level) and its
# innermost loop or branch (`block`: an index into FileFacts.blocks, -1 for none).


class Call(NamedTuple):
    """`f(...)` as a statement."""

    scope: str
    block: int
    call: tuple
    line: int
    end_line: int


class Assign(NamedTuple):
    """`name = value`, or `obj.attr = value` (then `name` is dotted: `self.primitive`)."""

    scope: str
    block: int
    name: str
    value: tuple
    line: int
    end_line: int


class SetItem(NamedTuple):
    """`table[key] = value`."""

    scope: str
    block: int
    table: tuple
    key: tuple
    value: tuple
    line: int
    end_line: int


class Unpack(NamedTuple):
    """`a, b = value`."""

    scope: str
    block: int
    targets: tuple
    value: tuple
    line: int
    end_line: int


class Decorate(NamedTuple):
    """`@decorator` on the definition `qualname`."""

    scope: str
    block: int
    decorator: tuple
    qualname: str
    line: int
    end_line: int


class Define(NamedTuple):
    """`def name(...)` nested in a function: binds `name` there to the nested function
    `qualname` (`outer.name`), whose statements have that scope."""

    scope: str
    block: int
    name: str
    qualname: str
    line: int
    end_line: int


class Return(NamedTuple):
    """`return value`."""

    scope: str
    block: int
    value: tuple
    line: int
    end_line: int


class Binds(NamedTuple):
    """A `name.bind(` in a function's text (read even where the body is not walked)."""

    scope: str
    block: int
    name: str
    line: int


class Loop(NamedTuple):
    """`for target in iterable:`."""

    scope: str
    parent: int
    target: tuple
    iterable: tuple
    line: int


class Branch(NamedTuple):
    """The body of `if condition:` (taken=True) or of its `else:` (taken=False); `text`:
    the condition as written (on one line), for a registration it leaves undecided."""

    scope: str
    parent: int
    condition: tuple
    taken: bool
    line: int
    text: str


class Definition(NamedTuple):
    """A module-level function, class or variable, or a method (`Class.method`); `doc`
    is the first line of a function's or class's docstring. `@overload` stubs are not
    definitions: the implementation they declare is."""

    name: str
    qualname: str
    kind: str
    line: int
    end_line: int
    doc: str | None = None


class ClassSpec(NamedTuple):
    """A class: its base expressions, and its members as written, name -> lines."""

    bases: tuple
    line: int
    end_line: int
    members: dict


class FuncSpec(NamedTuple):
    """A function or method. `walked`: its body was read (else it has no events);
    `defaults`: parameter -> default expression."""

    params: tuple
    line: int
    end_line: int
    walked: bool
    defaults: dict


class Import(NamedTuple):
    """`alias` names `target` (a dotted name) in `scope`. `reexport`: written as a
    re-export (`from m import f as f`, or any `as` in a package's `__init__`); a star
    import (`from m import *`) has alias STAR and the module as target."""

    scope: str
    alias: str
    target: str
    line: int
    reexport: bool


STAR = "*"


class Callee(NamedTuple):
    """A dotted name in a function's text (nested functions and lambdas included), or
    in the code outside functions (a class body, the top level), at its first line
    there. `called`: written as a call (`lax.psum(`, `self._f(`); otherwise a reference
    that may hand a function on (`partial(lax.dot_general, ...)`, `jit(_einsum)`, a
    default `=lax.dot_general`) or name a primitive (`add_p`). `guard`: the names that
    an enclosing `if` requires None at every use of it (`if x is None:`); `sites`: what
    each of its calls passes (flow/guardtext.py's `arguments`), once per different call;
    `lines`: the line of the first call that passes each of `sites`."""

    name: str
    line: int
    called: bool
    guard: tuple[str, ...] = ()
    sites: tuple[tuple[str, ...], ...] = ()
    lines: tuple[int, ...] = ()


class Message(NamedTuple):
    """A message raised (`raise E(...)`, exception E), warned (exception 'warning') or
    returned as an exception in function `scope` ('' at module level): its literal
    pieces, a placeholder between each two (see messages.py)."""

    scope: str
    line: int
    exception: str
    pieces: tuple
    returned: bool  # `return E(...)`: the function builds it, its callers raise it


class Test(NamedTuple):
    """A test function: its line and the dotted names its text calls or uses."""

    line: int
    names: tuple


Event = Call | Assign | Unpack | SetItem | Decorate | Define | Return | Binds  # FileFacts.events
EVENTS: dict[str, type[Event]] = {
    "call": Call, "assign": Assign, "unpack": Unpack, "setitem": SetItem, "dec": Decorate,
    "def": Define, "return": Return, "binds": Binds}
BLOCKS: dict[str, type[Loop | Branch]] = {"for": Loop, "if": Branch}
_TAGS: dict[type, str] = {record: tag for tag, record in (*EVENTS.items(), *BLOCKS.items())}


def stored(record: Event | Loop | Branch) -> tuple:
    """The plain form of an event or block, as extract writes it: its tag, then its fields."""
    return (_TAGS[type(record)], *record)


# One int object for each line number of every file's records: each file's facts are
# unmarshalled apart, each with its own (about 5 MB of the peak on jax).
_SHARED: dict[int, int] = {}


def _shared(value):
    return _SHARED.setdefault(value, value) if type(value) is int else value


# One tuple for each equal `sites` and `lines` of every file's callees: 55k of each on
# jax, 11k different (most `lines` are one line), 6 MB of the peak.
_SHARED_CALLS: dict[tuple, tuple] = {}


def _callee(name: str, line: int, called: bool, guard: tuple, sites: tuple,
            lines: tuple) -> Callee:
    return Callee(name, _shared(line), called, guard, _SHARED_CALLS.setdefault(sites, sites),
                  _SHARED_CALLS.setdefault(lines, lines))


def forget_shared_calls() -> None:
    """Let go of the table of shared callee tuples once a tree's files are wrapped:
    the records keep the tuples, and the table alone is about 1 MB on jax."""
    _SHARED_CALLS.clear()


class FileFacts(NamedTuple):
    """One file's facts, read by name."""

    module: str
    doc: str | None
    defs: tuple[Definition, ...]
    classes: dict[str, ClassSpec]
    funcs: dict[str, FuncSpec]
    imports: tuple[Import, ...]
    blocks: tuple[Loop | Branch, ...]
    events: tuple
    tests: dict[str, Test]
    # function, class body (the class's qualname) or top level ('') -> what its text
    # calls or names
    callees: dict[str, tuple[Callee, ...]]
    trace_calls: dict[str, tuple]  # function -> Trace methods it calls (`process_map`)
    messages: tuple[Message, ...]
    deleted: tuple[str, ...]  # names the top level deletes (`del jax_api`)
    error: str | None
    # The first lines of the top level's own statements that no loop, branch, `try`,
    # `with` or class holds: each runs once, in line order, when the module is imported.
    straight: frozenset[int] = frozenset()

    @classmethod
    def wrap(cls, raw: dict) -> FileFacts:
        """Records from the stored form (extract's dict)."""
        return cls(
            raw["module"], raw["doc"],
            tuple(Definition._make(map(_shared, d)) for d in raw["defs"]),
            {q: ClassSpec._make(spec) for q, spec in raw["classes"].items()},
            {q: FuncSpec._make(map(_shared, spec)) for q, spec in raw["funcs"].items()},
            tuple(map(Import._make, raw["imports"])),
            tuple(BLOCKS[b[0]]._make(map(_shared, b[1:])) for b in raw["blocks"]),
            tuple(EVENTS[e[0]]._make(map(_shared, e[1:])) for e in raw["events"]),
            {q: Test._make(map(_shared, test)) for q, test in raw["tests"].items()},
            {q: tuple(_callee(*callee) for callee in found)
             for q, found in raw["callees"].items()},
            raw["trace_calls"],
            tuple(Message._make(map(_shared, message)) for message in raw["messages"]),
            tuple(raw["deleted"]), raw.get("error"), frozenset(raw.get("straight", ())))
