"""The typed schema model: SchemaNodes read from a schema document, merged (conjunction), `oneOf`
branches made exclusive (disjoint), and a node written back as a schema for the validator (render).
May import: the base modules, automaton/, and the rooms before it in core/schema/__init__.py's Order
(lexical/, refusals.py, work_limits.py, read/).
"""
