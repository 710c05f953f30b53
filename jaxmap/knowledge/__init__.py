"""What jaxmap knows about JAX, as tables: a new idiom or release is a row.

  registrars   who registers which rule kinds; where primitives come from; aliases
  orientation  what REPO-MAP.md orients a newcomer with
  versions     what generated code needs from each jax release
  rungs        the escalation ladder and the `jaxmap new` kinds of each rung
  traces       the rule kind each Trace class's methods stand for
  transformations  the words of the functions that carry out each public transformation
  fixes        what usually fixes each family of JAX error messages
  interpreters  what runs only when a jaxpr is evaluated or lowered; the modules users import

May import: models and errors only.
"""
