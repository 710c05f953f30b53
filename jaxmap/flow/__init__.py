"""The call graph's value flow: what names, attributes, parameters and returns may
hold, and the call, binds and test rows read from it.

May import: indexing (its facts schema and the resolver's names), store (records),
knowledge, models, roots, errors. Never commands, render, scaffold, session or the front
ends.
"""
