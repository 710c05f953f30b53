; Scopes and definitions. Each pattern index is named in extract.py.

; 0: def f(params): ...            -- functions and methods (rules of hijax classes are methods)
(function_definition
  name: (identifier) @name
  parameters: (parameters) @params) @def

; 1: class C(Base, ...): ...       -- Primitive subclasses and hijax VJPHiPrimitive classes
(class_definition
  name: (identifier) @name
  superclasses: (argument_list)? @bases) @def

; 2: @decorator def f(): ...       -- @p.def_impl, @partial(mlir.register_lowering, p), @register_lowering_rule(p)
(decorated_definition
  (decorator (_) @decorator)
  definition: (_) @def) @decorated

; 3: for x in [...]: ...           -- loops over literal lists/tuples of primitives or platforms
(for_statement
  left: (_) @target
  right: (_) @iter) @for

; 4: type X = ...                  -- PEP 695 aliases (pallas/core.py `type BlockDim = ...`)
(type_alias_statement . (type (identifier) @name)) @def

; 5: if cond: <body>               -- `if supports_batching: batching.primitive_batchers[prim] = ...`
(if_statement
  condition: (_) @condition
  consequence: (block) @body) @if

; 6: else: <body>                  -- `if multiple_results: ... else: prim.def_abstract_eval(...)`
(if_statement
  condition: (_) @condition
  alternative: (else_clause body: (block) @body)) @if
