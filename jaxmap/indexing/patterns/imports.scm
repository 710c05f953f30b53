; Imports and their aliases: `import a.b as c`, `from jax._src.interpreters import ad`,
; `from jax._src import core as jax_core`, relative `from . import x`.

; import a.b / import a.b as c
(import_statement) @import

; from m import x / from m import x as y / from . import x
(import_from_statement) @import
