"""The option matrix `jaxmap new-primitive` is tested across: name -> PrimitiveSpec."""

from jaxmap.scaffold import PrimitiveSpec

SCALE = (("scale", "float"),)

CASES = [
    PrimitiveSpec("jm_unary"),
    PrimitiveSpec("jm_binary", arity=2),
    PrimitiveSpec("jm_linear", arity=2, linear=True),
    PrimitiveSpec("jm_params", arity=2, params=SCALE + (("n", "int"), ("flag", "bool"),
                                                        ("mode", "str"))),
    PrimitiveSpec("jm_multi", multiple_results=True, params=SCALE),
    PrimitiveSpec("jm_hlo", arity=3, lowering="hlo", params=SCALE),
    PrimitiveSpec("jm_platforms", arity=2, platforms=("cpu", "cuda", "tpu")),
    PrimitiveSpec("jm_hlo_linear", arity=2, linear=True, lowering="hlo",
                  platforms=("rocm",), params=SCALE),
    PrimitiveSpec("jm_hlo_multi", arity=2, multiple_results=True, lowering="hlo"),
    PrimitiveSpec("jm_hijax", arity=2, style="hijax", params=SCALE),
    PrimitiveSpec("jm_hijax_linear", arity=2, linear=True, style="hijax"),
    # enough parameters that the jaxpr printer wraps the equation after its `[`
    PrimitiveSpec("jm_hijax_multi", multiple_results=True, style="hijax",
                  params=(("n", "int"), ("flag", "bool"), ("mode", "str"))),
]

# Bad input: (generate keyword arguments, a fragment of the one-line message).
BAD_SPECS = [
    ({"name": "1abc"}, "not a valid Python identifier"),
    ({"name": "my-op"}, "not a valid Python identifier"),
    ({"name": "café"}, "is not ASCII"),
    ({"name": "lambda"}, "Python keyword"),
    ({"name": "_hidden"}, "starts with '_'"),
    ({"name": "jnp"}, "would shadow"),
    ({"name": "json"}, "standard-library module"),
    ({"name": "scipy"}, "a module that scipy installs"),  # jax imports it
    ({"name": "ml_dtypes"}, "a module that ml_dtypes installs"),
    ({"name": "testop"}, "pytest would collect"),
    ({"name": "conftest"}, "pytest's plugin module"),
    ({"name": "my_op_p"}, "give 'my_op' (its variable is 'my_op_p')"),
    ({"name": "op", "arity": 0}, "--arity"),
    ({"name": "op", "linear": True, "multiple_results": True}, "not supported"),
    ({"name": "op", "params": (("scale", "complex"),)},
     "parameter 'scale' has unknown type 'complex'; types are float, int, bool, str"),
    ({"name": "op", "params": (("class", "int"),)}, "Python keyword"),
    ({"name": "op", "params": (("x", "float"),)},
     "parameter name 'x' is reserved: the generated code uses it for an operand"),
    ({"name": "op", "params": (("op", "float"),)},
     "reserved: the generated code uses it for the primitive's function"),
    ({"name": "op", "params": (("jnp", "float"),)}, "reserved"),
    ({"name": "op", "params": (("ctx", "float"),)}, "reserved"),
    ({"name": "op", "params": (("scale", "float"), ("scale", "int"))},
     "--params gives parameter 'scale' twice"),
    ({"name": "op", "platforms": ("metal",)}, "--platform must be one of"),
    ({"name": "op", "platforms": ("cpu", "cpu")}, "repeats"),
    ({"name": "op", "style": "hijax", "lowering": "hlo"}, "need --style classic"),
    ({"name": "op", "style": "fancy"}, "--style must be one of"),
    ({"name": "op", "lowering": "xla"}, "--lowering must be one of"),
]

BAD_PARAMS = ["scale", "scale=", "=float", "scale=float,,n=int"]
