; Scopes and definitions. extract.py picks each pattern by its kind capture (the one
; capture without a dot); `kind.field` captures are its parts.

; def f(params): ...            -- functions and methods (rules of hijax classes are methods)
(function_definition
  name: (identifier) @function.name
  parameters: (parameters) @function.params) @function

; class C(Base, ...): ...       -- Primitive subclasses and hijax VJPHiPrimitive classes
(class_definition
  name: (identifier) @class.name
  superclasses: (argument_list)? @class.bases) @class

; @decorator def f(): ...       -- @p.def_impl, @partial(mlir.register_lowering, p), @register_lowering_rule(p)
(decorated_definition
  (decorator (_) @decorated.decorator)
  definition: (_) @decorated.definition) @decorated

; for x in [...]: ...           -- loops over literal lists/tuples of primitives or platforms
(for_statement
  left: (_) @loop.target
  right: (_) @loop.iterable) @loop

; type X = ...                  -- PEP 695 aliases (pallas/core.py `type BlockDim = ...`)
(type_alias_statement . (type (identifier) @type_alias.name)) @type_alias

; if cond: <body>               -- `if supports_batching: batching.primitive_batchers[prim] = ...`
(if_statement
  condition: (_) @if.condition
  consequence: (block) @if) @if.statement

; else: <body>                  -- `if multiple_results: ... else: prim.def_abstract_eval(...)`
(if_statement
  condition: (_) @else.condition
  alternative: (else_clause body: (block) @else)) @else.statement
