"""The interpreter's part for summaries (a mixin of evaluator.py's `Evaluator`): what
calling a function of the tree does, with PARAM values for its parameters, summarised
once (or once per call where its arguments decide which way it goes) and applied at
each call site to the arguments.
"""

from __future__ import annotations

from jaxmap.indexing.facts import APPLIED, LAMBDA, MADE, NEW, PARAM, UNKNOWN
from jaxmap.indexing.resolve.context import Context, Guard, Summary
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
        general = self.summary(func[1], func[2])
        if general is None:
            return (APPLIED, func, args)
        summary = general
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

        offs, made = self._register(summary, subst, via, ctx, decorated)
        if specialised is not None:
            offs += self._skipped(general, specialised, bound, created, via)
        for target, kind, off_via, platform, guard in offs:
            if (target, kind, platform) not in made:  # else the `else:` of the same `if`
                self.registrations.switched_off(target, kind, off_via, platform, guard, ctx)
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

    def _register(self, summary: Summary, subst, via: str, ctx: Context,
                  decorated) -> tuple[list[tuple], list[tuple]]:
        """Register what a summary registers, its values rewritten by `subst`: what the
        call's arguments switch off, as (target, kind, via, platform, guard), and what
        it registers, as (target, kind, platform)."""
        offs = [(subst(target), kind, f"{via} > {inner_via}", subst(platform), guard)
                for target, kind, inner_via, platform, guard in summary.offs]
        made = []
        for target, kind, inner_via, platform, rule, guards, conditions in summary.regs:
            target, platform = subst(target), subst(platform)
            guards = tuple(g._replace(condition=subst(g.condition)) for g in guards)
            off = _switching_off(guards)
            if off is not None:  # registered in a branch this call does not take
                offs.append((target, kind, f"{via} > {inner_via}", platform, off))
                continue
            made.append((target, kind, platform))
            rule = subst(rule)
            if decorated is not None and not is_callable(rule):
                rule = decorated
            self.registrations.register(target, kind, f"{via} > {inner_via}", platform, rule,
                                        ctx, tuple(g for g in guards
                                                   if truth_of(g.condition) is None),
                                        conditions)
        return offs, made

    def _skipped(self, general: Summary, specialised: Summary, bound: dict,
                 created: dict, via: str) -> list[tuple]:
        """The registrations a call's arguments switch off where a specialised summary
        ran the call (its body skipped the branches they are in): those of the general
        summary that a guard the arguments decide leaves out, on what the call passed
        or created (a primitive the general summary creates is the specialised one's
        of the same place, where both make it of the same name)."""
        with_args = Rewrite(bound=bound, isinstance_of=self.objects.isinstance)
        offs = []
        for target, kind, inner_via, platform, _, guards, _ in general.regs:
            off = _switching_off(tuple(g._replace(condition=with_args(g.condition))
                                       for g in guards))
            if off is None:
                continue
            target = with_args(target)
            if target[0] == NEW:
                k = target[2]
                same = k < len(specialised.created) and \
                    with_args(general.created[k]) == specialised.created[k]
                target = created.get(k, UNKNOWN) if same else UNKNOWN
            offs.append((target, kind, f"{via} > {inner_via}", with_args(platform), off))
        return offs

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


def _switching_off(guards: tuple[Guard, ...]) -> Guard | None:
    """The first guard decided the other way from the branch the registration is in."""
    return next((g for g in guards if truth_of(g.condition) not in (None, g.taken)), None)


def _created_used(summary: Summary) -> list[int]:
    """The primitives a summary creates that a call makes: those it returns or
    registers rules on, in the order it creates them."""
    used = {value[2] for value in news_in(summary.returns)}
    used.update(target[2] for target, *_ in summary.regs if target[0] == NEW)
    return sorted(used)
