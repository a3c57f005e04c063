"""A JSON Schema read, checked and compiled into one regex tree for the automaton (no tokens, no model).
May import: the base modules and automaton/ (core/__init__.py's Order).

Its rooms follow the data, one folder per stage and a few modules at the top:
- lexical/: JSON's lexical pieces as regex trees (numbers, string characters, formats, `pattern`);
- refusals.py, work_limits.py: keywords refused (strictly or leniently), and the bounds on compile
  work and on a document's shortest length;
- read/: a schema loaded from its source, checked against its meta-schema, its `$ref`s resolved,
  its keywords judged, and every jsonschema validator the library builds;
- nodes/: the typed model read from the schema, merged (conjunction), made exclusive (disjoint),
  written back for the validator (render);
- build/: typed nodes built into regex trees, per kind of value, behind the `Build` protocol;
- compiler.py: the entry, from a schema to its tree.
A room may import itself and the rooms before it in this order, never one after it or beside it;
tests/test_structure.py keeps it so.

Order: lexical, refusals, work_limits < read < nodes < build < compiler
"""
