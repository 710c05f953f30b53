"""explain's answer to a rule-missing message, on a small tree of its own: the examples
are the nearest siblings (same module, same family, registered the same way, else a
well-known simple one), never the alphabetically first; the registrars offered are
the public ones, with the call to write."""

from __future__ import annotations

import json

import pytest
from inline import indexed_tree

from jaxmap.commands import explain
from jaxmap.render import explain_text
from jaxmap.render import json as render_json
from jaxmap.render.view import View

_PRIVATE = {
    "jax/_src/core.py": '''
        class Primitive:
          def __init__(self, name):
            self.name = name

          def def_impl(self, impl):
            return impl
        ''',
    "jax/_src/interpreters/ad.py": '''
        primitive_jvps = {}


        def defjvp(primitive, *jvprules):
          primitive_jvps[primitive] = jvprules


        def defjvp_zero(primitive):
          primitive_jvps[primitive] = None


        def deflinear(primitive, transpose_rule):
          primitive_jvps[primitive] = transpose_rule


        class JVPTrace:
          def process_primitive(self, primitive):
            raise NotImplementedError(f"Differentiation rule for '{primitive}' not implemented")
        ''',
    "jax/_src/interpreters/batching.py": '''
        primitive_batchers = {}


        def defvectorized(prim):
          primitive_batchers[prim] = prim
        ''',
    "jax/_src/interpreters/mlir.py": '''
        _lowerings = {}
        _platform_specific_lowerings = {}


        def register_lowering(prim, rule, platform=None):
          if platform is None:
            _lowerings[prim] = rule
          else:
            _platform_specific_lowerings[platform] = {prim: rule}


        def lower_per_platform(name, platform):
          raise NotImplementedError(
              f"MLIR translation rule for primitive '{name}' not found for platform {platform}")
        ''',
}
_PUBLIC = {
    "jax/interpreters/__init__.py": "",
    "jax/interpreters/ad.py": '''
        from jax._src.interpreters.ad import defjvp as defjvp
        from jax._src.interpreters.ad import deflinear as deflinear
        from jax._src.interpreters.ad import primitive_jvps as primitive_jvps
        ''',
    "jax/interpreters/batching.py": '''
        from jax._src.interpreters.batching import defvectorized as defvectorized
        ''',
    "jax/interpreters/mlir.py": '''
        from jax._src.interpreters.mlir import _lowerings as _lowerings
        from jax._src.interpreters.mlir import register_lowering as register_lowering
        ''',
    "jax/lax/__init__.py": '''
        from jax._src.lax.lax import abs as abs
        from jax._src.lax.lax import real as real
        from jax._src.lax.lax import sign as sign
        from jax._src.lax.lax import sin as sin
        ''',
}
# JAX's plain primitives: `aaa` first by name but known by no public function; `abs`
# with long rules; `sign` differentiated with a private registrar; `sin` short.
_LAX = '''
    from jax._src import core
    from jax._src.interpreters import ad
    from jax._src.interpreters import batching
    from jax._src.interpreters import mlir


    def _abs_jvp(g, x):
      sign = x / x
      sign = sign * 1
      sign = sign + 0
      return g * sign


    def _abs_lowering(ctx, x):
      y = x
      y = y
      y = y
      return [y]


    aaa_p = core.Primitive('aaa')
    batching.defvectorized(aaa_p)
    ad.defjvp(aaa_p, lambda g, x: g)
    mlir.register_lowering(aaa_p, lambda ctx, x: [x])

    abs_p = core.Primitive('abs')
    batching.defvectorized(abs_p)
    ad.primitive_jvps[abs_p] = _abs_jvp
    mlir.register_lowering(abs_p, _abs_lowering)

    sign_p = core.Primitive('sign')
    batching.defvectorized(sign_p)
    ad.defjvp_zero(sign_p)

    sin_p = core.Primitive('sin')
    batching.defvectorized(sin_p)
    ad.defjvp(sin_p, lambda g, x: g * x)
    mlir.register_lowering(sin_p, lambda ctx, x: [x])

    real_p = core.Primitive('real')
    batching.defvectorized(real_p)
    ad.deflinear(real_p, lambda t: [t])
    mlir.register_lowering(real_p, lambda ctx, x: [x])


    def abs(x):
      return abs_p.bind(x)


    def sign(x):
      return sign_p.bind(x)


    def sin(x):
      return sin_p.bind(x)


    def real(x):
      return real_p.bind(x)
    '''
# A module whose primitive `chol` lacks a JVP rule: `eigh` (first by name, short rule)
# is batched otherwise than chol; `svd` is batched as chol is.
_LINALG = '''
    from jax._src import core
    from jax._src.interpreters import ad
    from jax._src.interpreters import batching


    def _batch(args, dims):
      return args, dims


    def _svd_jvp(g, x):
      y = g
      y = y * x
      return y


    chol_p = core.Primitive('chol')
    batching.primitive_batchers[chol_p] = _batch

    eigh_p = core.Primitive('eigh')
    batching.defvectorized(eigh_p)
    ad.defjvp(eigh_p, lambda g, x: g)

    svd_p = core.Primitive('svd')
    batching.primitive_batchers[svd_p] = _batch
    ad.primitive_jvps[svd_p] = _svd_jvp
    '''
# A package whose modules each hold one primitive: `gather` lacks a JVP rule, its
# family's `scatter` has one.
_SPARSE = {
    "jax/_src/sparse/__init__.py": "",
    "jax/_src/sparse/gather.py": '''
        from jax._src import core

        gather_p = core.Primitive('gather')
        gather_p.def_impl(lambda x: x)
        ''',
    "jax/_src/sparse/scatter.py": '''
        from jax._src import core
        from jax._src.interpreters import ad

        scatter_p = core.Primitive('scatter')
        scatter_p.def_impl(lambda x: x)
        ad.defjvp(scatter_p, lambda g, x: g)
        ''',
}


# Two raises of one wording, the looser template in the file a traceback names.
_GETATTRS = {
    "jax/_src/deprecations.py": '''
        def getattr(module, name):
          raise AttributeError(f"module {module!r} has no attribute {name!r}")
        ''',
    "jax/_src/lazy_loader.py": '''
        def attach(package_name, name):
          raise AttributeError(f"module '{package_name}' has no attribute '{name}'")
        ''',
}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    files = {**_PRIVATE, **_PUBLIC, **_SPARSE, "jax/_src/lax/lax.py": _LAX,
             "jax/_src/lax/linalg.py": _LINALG, "jax/__init__.py": "",
             "jax/_src/__init__.py": "", "jax/_src/lax/__init__.py": "",
             "jax/_src/interpreters/__init__.py": "",
             "jax/version.py": '_version = "0.9.0"\n', **_GETATTRS}
    found = indexed_tree(tmp_path_factory, files)
    yield found
    found.close()


def _missing(index, message: str):
    found = explain.explain(index, "NotImplementedError: " + message)
    assert found.missing is not None, found
    return found.missing


@pytest.mark.parametrize(("message", "examples"), [
    # the user's own primitive: a well-known, simple one first, not `aaa`; a JVP not
    # from a linear primitive's registration (`real`'s `ad.deflinear`)
    ("Differentiation rule for 'my_prim' not implemented", ["sin", "abs", "aaa"]),
    ("MLIR translation rule for primitive 'my_prim' not found for platform cpu",
     ["sin", "real", "abs"]),
    # the same module first, the sibling batched the same way before the shorter one
    ("Differentiation rule for 'chol' not implemented", ["svd", "eigh", "sin"]),
    # the same family (package) before JAX's plain primitives
    ("Differentiation rule for 'gather' not implemented", ["scatter", "sin", "abs"]),
])
def test_the_examples_are_the_nearest_siblings(index, message, examples):
    assert [s.name for s in _missing(index, message).siblings] == examples


def test_a_lowering_is_registered_with_the_public_api_for_the_platform_named(index):
    missing = _missing(
        index, "MLIR translation rule for primitive 'my_prim' not found for platform cpu")
    # a primitive of the user's (not in the tree), whose other lowerings are unknown:
    # the platform's first, then a default one, which serves every platform
    public, default = missing.register_with
    assert public.name == default.name == "mlir.register_lowering"
    assert public.public == "jax.interpreters.mlir.register_lowering"
    assert public.call == "mlir.register_lowering(my_prim_p, rule, platform='cpu')"
    assert default.call == "mlir.register_lowering(my_prim_p, rule)"
    assert public.imports == "from jax.interpreters import mlir"
    assert {r.name for r in missing.internal} == {"mlir._lowerings",
                                                  "mlir._platform_specific_lowerings"}
    found = explain.explain(index, "MLIR translation rule for primitive 'my_prim' not "
                                   "found for platform cpu")
    text = explain_text.explanation((found,), View(""))
    advice = text.split("JAX internally")[0]
    assert "register_lowering(my_prim_p" in advice and "_lowerings" not in advice
    document = json.loads(render_json.explanation_document((found,), View("")))
    assert [r["call"] for r in document["missing_rule"]["register_with"]] == \
        [public.call, default.call]


def test_a_private_registrar_is_never_the_advice(index):
    missing = _missing(index, "Differentiation rule for 'my_prim' not implemented")
    assert [r.name for r in missing.register_with] == ["ad.defjvp", "ad.deflinear",
                                                       "ad.primitive_jvps"]
    assert [r.call for r in missing.register_with] == [
        "ad.defjvp(my_prim_p, rule)", "ad.deflinear(my_prim_p, rule)",
        "ad.primitive_jvps[my_prim_p] = rule"]
    assert [r.name for r in missing.internal] == ["ad.defjvp_zero"]


def test_a_primitive_of_the_index_is_registered_through_its_own_variable(index):
    missing = _missing(index, "Differentiation rule for 'chol' not implemented")
    assert missing.register_with[0].call == "ad.defjvp(chol_p, rule)"


@pytest.mark.parametrize(("made", "holder"), [
    ('my_p = jax.extend.core.Primitive("my_double")\n', "my_p"),
    ("doubler: Primitive = Primitive('my_double')\n", "doubler"),
    ("other_p = Primitive('my_doubled')\n", "my_double_p"),  # another primitive's
])
def test_a_users_primitive_is_registered_through_the_variable_their_file_makes(
        index, tmp_path, made, holder):
    script = tmp_path / "prim.py"
    script.write_text(f"import jax\nfrom jax.extend.core import Primitive\n{made}")
    found = explain.explain(index, (
        "Traceback (most recent call last):\n"
        f'  File "{script}", line 9, in <module>\n'
        "    jax.jacfwd(f)(1.0)\n"
        '  File "/env/site-packages/jax/_src/interpreters/ad.py", line 354, in jvp\n'
        "    raise NotImplementedError(msg)\n"
        "NotImplementedError: Differentiation rule for 'my_double' not implemented\n"))
    assert found.missing.register_with[0].call == f"ad.defjvp({holder}, rule)"


@pytest.mark.parametrize(("name", "fix"), [
    ("register_lowering", "import it as `jax.interpreters.mlir.register_lowering`"),
    ("_lowering_helper", "it is not public here; `jaxmap locate _lowering_helper`"),
])
def test_a_name_a_jax_module_lacks_is_answered_with_where_it_is_public(index, name, fix):
    found = explain.explain(index, (
        "Traceback (most recent call last):\n"
        '  File "/home/me/old.py", line 3, in <module>\n'
        f"    jax.core.{name}\n"
        '  File "/env/site-packages/jax/_src/deprecations.py", line 3, in getattr\n'
        '    raise AttributeError(f"module {module!r} has no attribute {name!r}")\n'
        f"AttributeError: module 'jax.core' has no attribute '{name}'\n"))
    # the frame's site first, though the other's template quotes the message more closely
    assert [(site.file, site.line) for site in found.sites] == \
        [("jax/_src/deprecations.py", 3), ("jax/_src/lazy_loader.py", 3)]
    assert found.fix.fix == f"this jax has no `jax.core.{name}`: " + fix + (
        "" if fix.startswith("import") else
        " says where it is defined, and what is private may change in any release")
