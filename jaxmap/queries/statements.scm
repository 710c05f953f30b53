; Statements that can construct a primitive, register a rule, or pass a primitive along.

; 0: f(...) as a statement        -- ad.deflinear2(p, t), mlir.register_lowering(p, rule), p.def_impl(f)
(expression_statement (call) @call) @stmt

; 1: x = value                    -- psum_p = core.Primitive('psum'); reducer_p = standard_primitive(...)
(expression_statement
  (assignment left: (identifier) @target right: (_) @value)) @stmt

; 2: table[key] = value           -- ad.primitive_jvps[p] = f; batching.fancy_primitive_batchers[p] = f
(expression_statement
  (assignment left: (subscript) @target right: (_) @value)) @stmt

; 3: return value                 -- helpers that return the primitive they built
(return_statement (_) @value) @stmt

; 4: a, b = value                 -- hijax class attributes: `lin, linearized = linearize_from_jvp`
(expression_statement
  (assignment left: (pattern_list) @target right: (_) @value)) @stmt
