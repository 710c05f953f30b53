"""A small abstract interpreter over a tree's facts.

Module-level statements run in source order; a function that builds or registers
primitives is summarised once (what it creates, what it registers on which parameter)
and the summary is applied at every call site; loops over literal sequences are
unrolled; branches whose condition is known are taken or skipped; `partial(f, ...)`
and decorator factories are followed. Registrations made through helpers are
reported at the module-level statement that triggered them. Statements and
expressions are evaluated through tables of handlers, one per record type or tag.

`Interpreter` puts together the parts, each a mixin of evaluator.py's `Evaluator`
(the evaluation of expressions) in a module of its own: statements.py (blocks and
statements), calling.py (what a call does) and summaries.py (functions summarised
once and applied at each call).
"""

from __future__ import annotations

from jaxmap.indexing.facts import Binds, FileFacts
from jaxmap.indexing.resolve.calling import Calling
from jaxmap.indexing.resolve.classes import Classes
from jaxmap.indexing.resolve.context import Context, Summary
from jaxmap.indexing.resolve.findings import Findings
from jaxmap.indexing.resolve.names import Names
from jaxmap.indexing.resolve.objects import Objects
from jaxmap.indexing.resolve.registrations import Registrations
from jaxmap.indexing.resolve.statements import Statements
from jaxmap.indexing.resolve.summaries import Summaries


class Interpreter(Calling, Summaries, Statements):
    """Runs modules and summarises functions. It makes its collaborators: `names` (its
    lookups read the module envs this runs and the members `objects` knows), `findings`,
    `classes` (whose base expressions this evaluates), `objects` and `registrations`
    (which record rules into `findings`).

    Running a module looks names up, and looking a name up runs the module that defines
    it or evaluates a class's bases: `names` and `classes` hold this interpreter's
    methods, and it holds them, a reference cycle. `close()` breaks it; call it once the
    resolution is done with them (`with contextlib.closing(Interpreter(files))`)."""

    def __init__(self, files: dict[str, FileFacts]):
        self.names = Names(files, self.module_env, self._member)
        self.findings = Findings(self.names)
        self.classes = Classes(self.names, self.findings, self.evaluate_at_module)
        self.objects = Objects(self.names, self.classes)
        self.registrations = Registrations(self.names, self.findings, self.classes,
                                           self.objects)
        self.envs: dict[str, dict] = {}
        self.summaries: dict[tuple[str, str], Summary | None] = {}
        self._specialising: set[tuple[str, str]] = set()
        self._inline_depth = 0  # lambdas and nested functions being run where called
        self._running: set[tuple[str, str]] = set()  # functions run where called, now
        self._by_scope: dict[str, dict[str, list]] = {}  # module -> scope -> statements

    def close(self) -> None:
        """Let go of the collaborators, which hold this interpreter's methods: the end of
        the reference cycle (see the class), so all of it is freed by reference counting
        once the caller lets go of it too. Nothing can run after."""
        del self.names, self.findings, self.classes, self.objects, self.registrations

    def let_go_of_statements(self) -> None:
        """Each module's statements (but its binds, which the call graph's binds rows
        read), loops, branches and messages let go, once every module has run and its
        messages are read: the call graph reads none of them, and they are a twentieth
        of its peak memory. Nothing may run a scope after."""
        modules = self.names.modules
        for module, (path, facts) in modules.items():
            modules[module] = path, facts._replace(
                events=tuple(e for e in facts.events if type(e) is Binds), blocks=(),
                messages=())
        self._by_scope = None  # type: ignore[assignment]  # asked again: an error

    def module_env(self, module: str) -> dict:
        """Run a module's top level once; the env of its names (partial while running)."""
        env = self.envs.get(module)
        if env is not None:
            return env
        env = dict(self.names.top_names[module])
        self.envs[module] = env
        facts = self.names.facts(module)
        self._block(self._statements(module, ""), -1, facts.blocks, Context(module, "", env))
        return env

    def evaluate_at_module(self, module: str, expr: tuple) -> tuple:
        """An expression's value at the top level of `module`."""
        return self.eval(expr, Context(module, "", self.module_env(module)))

    def _member(self, value: tuple, attr: str) -> tuple | None:
        """`value.attr`, where `objects` knows it: the member source of `names`."""
        return self.objects.member(value, attr)
