; Where statements are: parse.py queries each block of statements only to depth 2 and
; follows these to the blocks inside them, so the query engine never walks expressions
; outside the bodies of functions that are read. Not facts: parse.py keeps them.

; a function: its body is queried in full when the function is read
(function_definition body: (block) @function_body.body) @function_body

; statements whose clauses hold blocks (`if ...: else:`, `try: except:`, a class body)
[(if_statement) (for_statement) (while_statement) (try_statement) (with_statement)
 (match_statement) (class_definition)] @compound
