"""The call graph's value flow: what names, attributes, parameters and returns may
hold, and the call, binds and test rows read from it.

Three pieces fit together. Summaries: each file's value-flow facts (flowtext.py:
what each owner's text does with values, read from the text) are extracted with its
other facts (indexing/extract.py, calltext.py), in parallel helper processes for a
larger tree (worker.py), and stored with the file in the index (table `facts`);
flowfacts.py indexes those of the whole tree by module, owner and name.

Solve: graph.py builds a `Flow` (flow.py: engine.py and its parts) over all of them,
and calls.py reads the rows off it. `Flow` is a memoised, demand-driven evaluator,
not a fixed point: a key's values are computed when a question first needs them; a
key asked for again while it is being computed (a cycle) answers nothing, a chain of
keys deeper than engine.py's bound is cut the same way, and what was computed past
such a cut is memoised as it is (but for a field a method sets to its parameter, read
again when asked from fewer keys deep: members.py). So its answers depend on the order in which the
questions are asked (`ordered` keeps that order off the hash seed): calls.py asks
them in one order, every call site first, then module by module in the tree's
order, which each cold index repeats; the same tree gives the same rows. The cuts
do precision work too: iterating these same rules to their least fixed point (every
key computed again, from what the memo holds, until none grows) merges what every
caller hands a higher-order function's parameter (two passes in, `jit`'s `fun` holds
1572 values, and what one `while_loop` call returns 448, the carries of loops all over
the tree), until a set of about 900 values reaches even parameters no call site hands
anything, and sets grow past calls.MAX_LISTED; a fixed point
needs that bounded first (per call site, or JAX's loops as known summaries). Two
cheaper ways to answers no order decides were measured on jax, and neither pays: asking
each module's questions alone from what the call sites left (so no module's rows depend
on another's, and modules could go to separate cores) did 18 times the work of the
shared loop (374 s against 21 s, one fork per module: modules ask mostly the same
keys); and memoising only what no cut touched (each key as if asked first: 14k of the
270k keys computed read a cut) had not finished in 7 minutes against 25 s. A call site
in a test module hands nothing to a function outside tests (callsites.py), and a
test's subclass of a library class is not what `self` holds in its methods
(hierarchy.py), nor do tests' constructions or field annotations count for a library
class (members.py; engine.in_tests): library values do not depend on tests' calls or
classes, nor on a cycle through them. (What a test stores into a library registry, or
sets on a library class, still reaches library values.)

Update (indexing/indexer.py, indexing/moves.py): after an edit whose files' facts are
equal to their old ones, or differ only in line numbers or in local assignments
nothing reads (`unused = 1`), the rows are moved in place (after a first-phase
question, `locate`, at the next graph question: until then the call graph is
stale). Any other edit, or a file added or removed, solves the whole tree again,
from the facts kept for the files that did not change and those extracted again:
nothing of a solve is kept to redo only the part an edit touches.

May import: indexing (its facts schema and the resolver's names), store (records),
knowledge, models, roots, errors. Never commands, render, scaffold, session or the front
ends.
"""
