"""Eighteen questions a new JAX contributor asks in the first week (twelve on day one,
six later: messages, public names, core classes, alternate paths, what a public
function binds), each answered from the committed maps alone: the lines `grep` (one
line per match) or a section read whole (`sed` from a heading to the next) must hold
the answer, completely (path, line, function, registry where the question asks), and
all eighteen answers together stay within 40k characters of the map files.

The maps are the generated REPO-MAP.md and the pages beside it of the pinned jax;
test_repomap.py keeps them fresh."""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

import pytest

TOP = Path(__file__).resolve().parent.parent
MAP, PRIMITIVES = "REPO-MAP.md", "REPO-MAP-PRIMITIVES.md"
NAMES, BINDS = "REPO-MAP-NAMES.md", "REPO-MAP-BINDS.md"
MESSAGES, NUMERIC_MESSAGES = "REPO-MAP-MESSAGES.md", "REPO-MAP-MESSAGES-NUMERICS.md"
BUDGET = 40_000  # characters all answers may read together

LOC = r"jax/[\w/]+\.py:\d+"  # a whole path and a line


class Read(NamedTuple):
    """Lines of one map: every line matching `pattern` (`grep`), or with `section`,
    from the heading matching it to the next heading of its level or above (`sed`)."""

    file: str
    pattern: str
    section: bool = False


class Question(NamedTuple):
    ask: str
    reads: tuple[Read, ...]
    must: tuple[str, ...]  # regular expressions the answer must all contain


def grep(file: str, pattern: str) -> Read:
    return Read(file, pattern)


def sed(file: str, heading: str) -> Read:
    return Read(file, heading, section=True)


QUESTIONS: tuple[Question, ...] = (
    Question("Where is the dot_general primitive created?",
             (grep(PRIMITIVES, r"^dot_general  primitive  "),),
             (rf"dot_general_p  {LOC} \(definition\)",)),
    Question("Where is dot_general's batching rule registered, in which registry, and "
             "where is the rule function defined?",
             (grep(PRIMITIVES, r"^dot_general  batching  "),),
             (r"batching\.\w*primitive_batchers",
              rf"{LOC} \(registration\)  -> _dot_general_batch_rule {LOC} \(definition\), "
              rf"a partial of _dot_batch_rule {LOC} \(definition\)")),
    Question("Which lowerings does sin have, per platform and Pallas backend, and where "
             "is each defined?",
             (grep(PRIMITIVES, r"^sin  lowering"),),
             (rf"^sin  lowering  mlir\.register_lowering  {LOC} \(registration\)  -> \w+ {LOC}",
              r"^sin  lowering\[mosaic_tpu\]  .* -> \w+ jax/_src/pallas/mosaic/",
              r"^sin  lowering\[mosaic_gpu\]  ", r"^sin  lowering\[triton\]  ")),
    Question("How does cond take part in partial evaluation and DCE?",
             (grep(PRIMITIVES, r"^cond  (partial_eval|dce)  "),),
             (r"cond  partial_eval  pe\.custom_partial_eval_rules",
              (rf"cond  dce  pe\.dce_rules\[\.\.\.\] =  {LOC} \(registration\)  -> "
               rf"_cond_dce_rule {LOC} \(definition\)"))),
    Question("My new linear primitive needs a transpose rule: which registry or helper, "
             "and what do I copy?",
             (sed(MAP, r"### transpose"),),
             (rf"`ad\.primitive_transposes` — defined at `{LOC}`", r"`ad\.deflinear2`",
              rf"- example: `\w+` registers `\w+` \(defined at `{LOC}`\) via .* at `{LOC}`")),
    Question("JAX says \"Differentiation rule for 'foo' not implemented\": where do I add "
             "the rule?",
             (sed(MAP, r"### jvp"),),
             (r"Differentiation rule for '\{name\}' not implemented",
              rf"`ad\.primitive_jvps` — defined at `{LOC}`",
              rf"`ad\.defjvp` — defined at `{LOC}`",
              rf"- example: .* at `{LOC}`")),
    Question("Where do I register a Pallas TPU (Mosaic) lowering, with an example?",
             (sed(MAP, r"### lowering\[mosaic_tpu\]"),),
             (rf"`jax\._src\.pallas\.mosaic\.lowering\.lowering_rules` — defined at `{LOC}`",
              r"`jax\._src\.pallas\.mosaic\.lowering\.register_lowering_rule` — defined at",
              rf"- example: `\w+` registers `\w+` \(defined at `jax/_src/pallas/mosaic/{LOC[4:]}",
              r"Unimplemented primitive in Pallas TPU lowering")),
    Question("And the GPU backends of Pallas, Mosaic GPU and Triton?",
             (sed(MAP, r"### lowering\[mosaic_gpu\]"), sed(MAP, r"### lowering\[triton\]")),
             (r"`jax\._src\.pallas\.mosaic_gpu\.lowering\.mosaic_lowering_rules` — defined at",
              r"`jax\._src\.pallas\.triton\.lowering\.triton_lowering_rules` — defined at",
              r"`jax\._src\.pallas\.triton\.lowering\.register_lowering` — defined at",
              r"registers `\w+` \(defined at `jax/_src/pallas/triton/lowering\.py:\d+`\)")),
    Question("What happens when jax.jit(f)(x) runs, and where is each step defined?",
             (sed(MAP, r"## Pipeline: how jax\.jit\(f\)\(x\) runs"),),
             (rf"`api\.jit` defined at `{LOC}`", rf"`Primitive\.bind` defined at `{LOC}`",
              rf"`mlir\.lower_jaxpr_to_module` defined at `{LOC}`",
              rf"`compiler\.compile_or_get_cached` defined at `{LOC}`")),
    Question("Which core modules do I read first, and in what order?",
             (sed(MAP, r"## Core modules in reading order"),),
             (r"1\. `jax\._src\.core` \(`jax/_src/core\.py:1`\)",
              r"`jax\._src\.linear_util`", r"`jax\._src\.api_util`",
              r"`jax\._src\.source_info_util`", r"`jax\._src\.effects`",
              r"`jax\._src\.interpreters\.partial_eval`", r"`jax\._src\.interpreters\.mlir`")),
    Question("Which test files cover lax, autodiff and vmap, and how do I run one?",
             (grep(MAP, r"^- (lax|Autodiff|Batching): "), grep(MAP, r"^Run one with ")),
             (r"`tests/lax_test\.py`", r"`tests/lax_autodiff_test\.py`",
              r"`tests/lax_vmap_test\.py`", r"pytest .*tests/lax_test\.py")),
    Question("How does an Exported become bytes: which module writes them?",
             (sed(MAP, r"## Export: from a function to bytes and back"),),
             (rf"`Exported\.serialize` defined at `{LOC}`",
              (r"module that writes the bytes.*`serialization\.serialize` defined at "
               r"`jax/_src/export/serialization\.py:\d+`"), r"`_export\.deserialize` defined at")),
    # -- the first week ----------------------------------------------------------------
    Question("vmap said \"vmap in_axes must be an int, None, or a tuple\": where is that "
             "checked, and which public functions get there?",
             (grep(MESSAGES, r"vmap in_axes must be an int, None, or a tuple"),),
             (rf"^TypeError  vmap in_axes must be an int, None, or a tuple .*\{{\}}.*  "
              rf"{LOC}  vmap  <- jax\.vmap",)),
    Question("A user saw \"Incompatible shapes for broadcasting\": where is the shape check, "
             "and which public functions reach it?",
             (grep(NUMERIC_MESSAGES, r"Incompatible shapes for broadcasting"),),
             (r"^ValueError  Incompatible shapes for broadcasting: .*  "
              r"jax/_src/lax/lax\.py:\d+  \w+  <- .*jax\.",)),
    Question("Which primitives do jnp.sum, jax.nn.relu and jax.lax.cumsum bind?",
             (grep(BINDS, r"^jax\.(numpy\.sum|nn\.relu|lax\.cumsum)  "),),
             (rf"^jax\.numpy\.sum  {LOC}  .*\breduce_sum\(\d\)",
              rf"^jax\.nn\.relu  {LOC}  .*\bmax\(\d\)",
              rf"^jax\.lax\.cumsum  {LOC}  cumsum\(0\)")),
    Question("Where are jax.lax.Precision and the jax_enable_x64 option defined?",
             (grep(NAMES, r"^(jax\.lax\.Precision|jax_enable_x64)  "),),
             (rf"^jax\.lax\.Precision  enum  {LOC}",
              r"^jax_enable_x64  enable_x64  jax/_src/config\.py:\d+")),
    Question("Which base classes do traces, tracers and shardings extend, where are they, "
             "and what extends them?",
             (sed(MAP, r"## Core classes"),),
             (rf"`core\.Trace` `{LOC}`: .*extended by .*:\n(  - .*\n)*  - `ad\.JVPTrace` `{LOC}`",
              rf"`core\.Tracer` `{LOC}`: .*\n(  - .*\n)*  - `batching\.BatchTracer` `{LOC}`",
              rf"`sharding\.Sharding` `{LOC}`: .*\n  - `named_sharding\.NamedSharding`",
              rf"`core\.AbstractValue` `{LOC}`", rf"`effects\.Effect` `{LOC}`")),
    Question("Pallas interpret mode: which function runs the kernel, and where does "
             "pallas_call dispatch to it?",
             (sed(MAP, r"## Alternate paths"),),
             (rf"`hlo_interpreter\.pallas_call_hlo_interpret` defined at `{LOC}`;\n"
              rf"  `pallas_call\._pallas_call_lowering` calls it at `{LOC}`",
              r"jax/_src/pallas/mosaic/interpret/interpret_pallas_call\.py:\d+")),
)


def read(r: Read) -> str:
    lines = (TOP / r.file).read_text(encoding="utf-8").splitlines()
    if not r.section:
        return "\n".join(line for line in lines if re.search(r.pattern, line))
    start = next((i for i, line in enumerate(lines) if re.match(r.pattern, line)), None)
    if start is None:
        return ""
    level = len(lines[start]) - len(lines[start].lstrip("#"))
    end = next((i for i in range(start + 1, len(lines))
                if re.match(rf"#{{1,{level}}} ", lines[i])), len(lines))
    return "\n".join(lines[start:end])


def answer(question: Question) -> str:
    return "\n".join(read(r) for r in question.reads)


def test_there_are_eighteen_questions():
    assert len(QUESTIONS) == 18


@pytest.mark.parametrize("question", QUESTIONS, ids=lambda q: q.ask[:50])
def test_the_map_answers(question):
    text = answer(question)
    missing = [m for m in question.must if not re.search(m, text, re.MULTILINE)]
    assert not missing, f"{question.ask}\nnot answered: {missing}\nread:\n{text}"


def test_all_answers_fit_in_the_budget():
    assert sum(len(answer(q)) for q in QUESTIONS) <= BUDGET
