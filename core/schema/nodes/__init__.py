"""The typed schema model: SchemaNodes read from a schema document, merged (conjunction), `oneOf`
branches made exclusive (disjoint), and a node written back as a schema for the validator (render).
May import: the base modules, automaton/, lexical/, read/ and schema's base modules (refusals,
work_limits) (schema/__init__.py's Order).
"""
