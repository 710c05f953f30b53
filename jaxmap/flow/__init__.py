"""The call graph's value flow: what names, attributes, parameters and returns may
hold, and the call, binds and test rows read from it.

Three pieces fit together. Summaries: each file's value-flow facts (flowtext.py:
what each owner's text does with values, read from the text) are extracted with its
other facts (indexing/extract.py, calltext.py), in parallel helper processes for a
larger tree (worker.py), and stored with the file in the index (table `facts`);
flowfacts.py indexes those of the whole tree by module, owner and name.

Solve: graph.py builds a `Flow` (flow.py: engine.py and its parts) over all of them, and
calls.py reads the rows off it, module by module, on every core (forked.py: helpers
forked once the call sites and the largest modules are read; each pass of the call
sites is read on every core too, sitepasses.py). `Flow` is a memoised,
demand-driven evaluator whose keys are visited as Tarjan's algorithm visits a graph
(engine.py): the keys a key reads while it is computed are its edges, and keys that read
each other (a strongly connected component) are each computed once, every read of
another key of the component answering nothing, and memoised together when it closes. No
chain is cut at a depth (graph.py gives the solve a deep stack), and no table outside
that memo remembers a partial answer (a literal container's contents, a module-level
instance's fields, the classes annotating a field are keys too), nor does a read under
way lend another key its state (boundcalls.py: the locals a call's read has busy;
whether functions pass their parameters on is one least fixed point, not cut at the
first asked). So what a key holds depends on the components, not on which question
entered them first: the rows are the
same whatever order calls.py asks in (bench_order.py measures it; a test asks a tree of
cycles in eight orders). What a key holds with call sites' arguments includes what it
holds without them. The names a container is held by (`_holders`: stores through a name
are looked for once it holds the box) are noted in rounds: those the stores' targets,
then each pass of the call sites, find count once that round ends, so no value depends
on the order the sites are read in (a test shuffles them). Nor do the type aliases an
annotation reads (arrays.py: each annotation walks its own, a cycle of aliases too).

Iterating each component to its least fixed point instead (every key computed again
from the others' values until none grows) was measured on jax and dropped: with two
rounds, 149 and 2,173 call rows were found in one order only (against 1 and 0), the
engine's rules not being all monotone (what a parameter holds where one call site
hands it, a closure no call is known to have made); merged through higher-order
parameters, sets
grow past calls.MAX_LISTED (jit's `fun` held 1572 values after two global passes). A
call site in a test module hands nothing to a function outside tests (callsites.py),
and a test's subclass of a library class is not what `self` holds in its methods
(hierarchy.py), nor do tests' constructions or field annotations count for a library
class (members.py; engine.in_tests): library values do not depend on tests' calls or
classes, nor on a cycle through them. (What a test stores into a library registry, or
sets on a library class, still reaches library values.)

Update (indexing/indexer.py, indexing/moves.py): after an edit whose files' facts are
equal to their old ones, or differ only in line numbers or in local assignments
nothing reads (`unused = 1`), the rows are moved in place (after a first-phase
question, `locate`, at the next graph question: until then the call graph is
stale). Any other edit solves the tree again, from the facts kept for the files that
did not change and those extracted again. A process that solves again and again
(a server's build process: graph.keep_solves) records what every key, side-table entry
and root reads in each stage of a solve (recording.py) and keeps the solve; the next
starts from it (update.py): the inputs the edit changed are found by comparing the
two trees' tables and asking the resolver's questions again, a key whose reads did
not change keeps its value, one whose reads changed is computed again and compared,
so that what reads it is computed again only where its value changed, and a root (a
call of a pass, a module's rows) whose reads are all unchanged keeps what it found.
Where the update cannot follow an edit (a module added or removed, a definition's id
moved, a table of values of the whole tree changed) it gives up and the tree is
solved in full. A key of a cycle is computed again with every key of its recorded
cycle: what each holds does not depend on where the cycle was entered, so the keys an
edit takes out of the cycle are read with their values and those it puts in join it.
Which keys form a cycle can depend on the order keys are computed in (a key computed
while another is open reads it as nothing, and may then read less), and verifying a
frame's reads computes what changed among them ahead of a cold solve's turn: where
such a computation reads a key open around it, the update gives up (on jax, a new
cycle of two, `typeof` and `shaped_abstractify` calling each other, had joined a
recorded cycle of 4,600 keys that way). A command-line process solves in full,
unrecorded: nothing of a solve is kept on disk.

May import: indexing (its facts schema and the resolver's names), store (records),
knowledge, models, roots, errors. Never commands, render, scaffold, session or the front
ends.
"""
