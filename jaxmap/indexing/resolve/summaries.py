"""The interpreter's part for summaries (a mixin of evaluator.py's `Evaluator`): what
calling a function of the tree does, with PARAM values for its parameters, summarised
once (or once per call where its arguments decide which way it goes) and applied at
each call site to the arguments.
"""

from __future__ import annotations

from jaxmap.indexing.facts import APPLIED, LAMBDA, MADE, NEW, PARAM, UNKNOWN
from jaxmap.indexing.resolve.context import Context, Summary
from jaxmap.indexing.resolve.evaluator import Evaluator
from jaxmap.indexing.resolve.values import (
    Rewrite,
    bind_params,
    is_callable,
    mentions_new,
    news_in,
    param_locals,
    truth_of,
)


class Summaries(Evaluator):
    """Summaries of functions, and applying them where a function is called."""

    def apply(self, func: tuple, args, kwargs, ctx, via, decorated) -> tuple:
        """A call of a function of the tree: its summary, applied to the arguments."""
        summary = self.summary(func[1], func[2])
        if summary is None:
            return (APPLIED, func, args)
        spec = self.names.facts(func[1]).funcs[func[2]]
        bound = bind_params(spec.params, args, kwargs, spec.defaults)
        specialised = self._specialise(func, spec.params, bound) \
            if summary.per_call else None
        if specialised is not None:  # its parameters are the arguments already
            summary = specialised
        if ctx.summary is not None and summary.per_call:
            ctx.summary.per_call = True
        with_args = Rewrite(bound=None if specialised is not None else bound,
                            isinstance_of=self.objects.isinstance)
        created = {k: self.construct(with_args(summary.created[k]), ctx)
                   for k in _created_used(summary)}
        with_new = Rewrite(created=created)

        def subst(value):
            return with_new(with_args(value))

        for target, kind, inner_via, platform, rule, guards, conditions in summary.regs:
            guards = tuple((subst(condition), branch) for condition, branch in guards)
            if any(truth_of(condition) not in (None, branch) for condition, branch in guards):
                continue  # registered in a branch this call does not take
            rule = subst(rule)
            if decorated is not None and not is_callable(rule):
                rule = decorated
            self.registrations.register(subst(target), kind, f"{via} > {inner_via}",
                                        subst(platform), rule, ctx,
                                        tuple(g for g in guards if truth_of(g[0]) is None),
                                        conditions)
        if summary.returns[0] == LAMBDA:  # a rule factory (`_argnum_weak_type(0)`)
            returned = (MADE, func, args)
        else:
            returned = subst(summary.returns) if summary.returns != UNKNOWN \
                else (APPLIED, func, args)
        if with_args.exceeded or with_new.exceeded:
            self.findings.diagnose(ctx.site_in, ctx.site[0], f"a value passed to or returned "
                                   f"by {func[1]}.{func[2]} nests too deep to follow: parts "
                                   f"of it are unknown")
        return returned

    def summary(self, module: str, qualname: str) -> Summary | None:
        """What calling a function does, with PARAM values for its parameters."""
        key = (module, qualname)
        if key in self.summaries:
            return self.summaries[key]
        facts = self.names.facts(module)
        if qualname not in facts.funcs:
            return None
        self.summaries[key] = None  # recursion guard
        params = facts.funcs[qualname].params
        summary = self._summarise(module, qualname, {p: (PARAM, i) for i, p in
                                                      enumerate(params) if p != "*"})
        self.summaries[key] = summary
        return summary

    def _specialise(self, func: tuple, params: tuple, bound: dict) -> Summary | None:
        """The summary of one call, its body run with the arguments themselves (None
        under recursion, or where an argument is a primitive an outer summary creates)."""
        key = (func[1], func[2])
        if key in self._specialising or any(mentions_new(v) for v in bound.values()):
            return None
        self._specialising.add(key)
        try:
            return self._summarise(func[1], func[2], param_locals(params, bound))
        finally:
            self._specialising.discard(key)

    def _summarise(self, module: str, qualname: str, locals_: dict) -> Summary:
        summary = Summary()
        ctx = Context(module, qualname, locals_, summary=summary)
        facts = self.names.facts(module)
        events = self._statements(module, qualname)
        self._block(events, -1, facts.blocks, ctx)
        return summary


def _created_used(summary: Summary) -> list[int]:
    """The primitives a summary creates that a call makes: those it returns or
    registers rules on, in the order it creates them."""
    used = {value[2] for value in news_in(summary.returns)}
    used.update(target[2] for target, *_ in summary.regs if target[0] == NEW)
    return sorted(used)
