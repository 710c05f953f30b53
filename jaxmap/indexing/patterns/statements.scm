; Statements that can construct a primitive, register a rule, or pass a primitive along.
; Each pattern's kind capture is the whole statement; `kind.field` captures are its parts.

; f(...) as a statement        -- ad.deflinear2(p, t), mlir.register_lowering(p, rule), p.def_impl(f)
(expression_statement (call) @call.call) @call

; x = value                    -- psum_p = core.Primitive('psum'); reducer_p = standard_primitive(...)
(expression_statement
  (assignment left: (identifier) @assign.target right: (_) @assign.value)) @assign

; obj.attr = value             -- self.primitive = core.Primitive(name); cls.outer_primitive = p
(expression_statement
  (assignment left: (attribute) @setattr.target right: (_) @setattr.value)) @setattr

; table[key] = value           -- ad.primitive_jvps[p] = f; batching.fancy_primitive_batchers[p] = f
(expression_statement
  (assignment left: (subscript) @setitem.target right: (_) @setitem.value)) @setitem

; return value                 -- helpers that return the primitive they built
(return_statement (_) @return.value) @return

; del a, b                     -- a module-level name deleted is not exported (`del jax_api`)
(delete_statement) @delete

; a, b = value                 -- hijax class attributes: `lin, linearized = linearize_from_jvp`
(expression_statement
  (assignment left: (pattern_list) @unpack.target right: (_) @unpack.value)) @unpack
