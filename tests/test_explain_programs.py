"""explain on failing programs of our own, as users see them (default traceback
filtering): no wrong site, the site that fired first, every non-JAX traceback 'not from
JAX', and messages worded as older releases word them. The programs run in one child
process (tests/explain_programs.py), jax imported once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jaxmap.commands import explain
from jaxmap.commands.explain import Status

_PSEUDO = {"JaxStackTraceBeforeTransformation", "UnfilteredStackTrace"}
# 67 of 70 (0.96). Left: a leaked tracer, whose wording two places raise and nothing the
# traceback shows tells apart (Primitive.bind's check and the eval trace's, which one
# depends on the tracer's trace at run time), and two errors whose message is not JAX's
# raised below the frames JAX's filtering removes: Python's unpacking error in
# custom_vmap's batching (no JAX frame shown at all) and jaxlib's safe_map in a shape
# rule (the index takes `map, unsafe_map = safe_map, map` for the builtin `map`).
_FIRST_AT_LEAST = 0.95

# Messages as jax 0.4.38 / 0.6.2 word them, and the function of this release (0.10.2)
# that raises the successor (None: not raised in this tree).
OLDER = [
    ("ValueError: Incompatible shapes for matmul arguments: (2, 3) and (4, 5)",
     "matmul"),
    (("TypeError: reshape total size must be unchanged, got new_sizes (4,) (of total size 4) "
      "for shape (3,) (of total size 3)."),
     None),
    (("TypeError: dynamic_slice start_indices must have length equal to the number of "
      "dimensions of the operand, got indices (0, 0) for operand shape (3,)."),
     "_dynamic_slice_shape_rule"),
    (("TypeError: broadcast_in_dim broadcast_dimensions must be strictly increasing; got "
      "broadcast_dimensions (1, 0)"),
     "_broadcast_in_dim_shape_rule"),
    (("TypeError: scan body function carry input and carry output must have equal types (e.g. "
      "shapes and dtypes of arrays), but they differ:\n\n* the input carry c has type "
      "float32[] but the corresponding output carry component has type int32[]"),
     "_check_carry_type"),
    ("ValueError: `unroll` must be a `bool` or a positive `int`.",
     "scan"),
    (("NotImplementedError: autodiff of pmap functions with out_axes=None is not supported. "
      "Consider using shard_map instead."),
     None),
    (("ValueError: On multi-host platforms, pmapped functions must run across all devices, i.e. "
      "num_replicas * num_partitions should equal the number of local devices."),
     None),
    (("ValueError: The 'vectorized' argument of jax.pure_callback was removed in JAX v0.6.0. "
      "Use 'vmap_method' instead."),
     None),
    ("ValueError: Nested pmap with explicit devices argument.",
     None),
    ("ValueError: Ordered effects not supported in `pmap`.",
     None),
    (("ValueError: compiling computation `f` that requires 8 replicas, but only 1 XLA devices "
      "are available."),
     None),
]


@pytest.fixture(scope="module")
def programs():
    pytest.importorskip("jax")
    script = Path(__file__).with_name("explain_programs.py")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         check=True, env={**os.environ, "JAX_PLATFORMS": "cpu"}).stdout
    return json.loads(out)


@pytest.fixture(scope="module")
def verdicts(installed_index, programs):
    return _verdicts(installed_index, programs)


def _fired(chain) -> tuple[str, str, int] | None:
    """(class, file, line) of the last exception of the chain raised in JAX."""
    for exception, file, line in reversed(chain):
        if exception not in _PSEUDO and file:
            return exception, file, line
    return None


def _places(answer) -> list[tuple[str, int]]:
    """Where an answer says the exception was raised, first first."""
    raised = [s for s in answer.sites
              if not (s.returned or s.function.endswith("__init__"))]
    return [(s.file, s.line) for s in list(answer.raised_by) + raised]


def _verdicts(index, programs) -> dict[str, str]:
    """Per JAX program: 'first' (the site that fired is the answer's first place),
    'listed' (among them), 'wrong' (a placed answer that leaves it out), 'unplaced'."""
    verdicts = {}
    for name, program in programs.items():
        fired = _fired(program["chain"]) if program["jax"] else None
        if fired is None:
            continue
        answers = explain.explain_all(index, program["traceback"])
        verdicts[name] = "unplaced"
        for answer in answers:
            shown = (answer.exception or "").rpartition(".")[2]
            if shown != fired[0] or answer.status not in (Status.MATCHED, Status.FRAME,
                                                          Status.RUNTIME):
                continue
            places = _places(answer)
            verdicts[name] = "first" if places[:1] == [fired[1:]] else \
                "listed" if fired[1:] in places else "wrong"
    return verdicts


def test_there_are_enough_programs(programs):
    jax_programs = [p for p in programs.values() if p["jax"]]
    assert len(jax_programs) >= 40
    assert len(programs) - len(jax_programs) >= 10


def test_no_program_is_placed_at_a_wrong_site(verdicts):
    assert [name for name, verdict in verdicts.items() if verdict == "wrong"] == []


def test_the_site_that_fired_comes_first(verdicts):
    first = [name for name, verdict in verdicts.items() if verdict == "first"]
    missed = sorted(set(verdicts) - set(first))
    assert len(first) / len(verdicts) >= _FIRST_AT_LEAST, missed


def test_every_traceback_without_jax_is_not_from_jax(installed_index, programs):
    for name, program in programs.items():
        if not program["jax"]:
            answers = explain.explain_all(installed_index, program["traceback"])
            assert [a.status for a in answers] == [Status.NOT_JAX], name


@pytest.mark.parametrize(("message", "successor"), OLDER)
def test_a_message_worded_as_an_older_release_is_placed_at_its_successor(
        installed_index, message, successor):
    [answer] = explain.explain_all(installed_index, message)
    assert answer.status == Status.OLDER and answer.older.version in ("0.4.38", "0.6.2")
    assert [s.function.rpartition(".")[2] for s in answer.older.successors] == \
        ([successor] if successor else [])
