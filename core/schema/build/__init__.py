"""Typed nodes built into regex trees: one builder per kind of value (numbers, strings, arrays,
objects), listed values, anyOf/oneOf, `not` folded (as a complement where no simpler shape
holds: complement.py, deciding overlaps in overlap.py and strings_overlap.py), generic tree
shapes, written against the
small `Build` protocol (protocol.py) that compilation.py's Compilation implements, so no builder
imports the dispatch back.
May import: the base modules, automaton/, and the rooms before it in core/schema/__init__.py's Order
(lexical/, refusals.py, work_limits.py, read/, nodes/).
"""
