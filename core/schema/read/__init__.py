"""A schema read and checked: its sources (file, packaged name, pydantic model), JSON parsing, the
meta-schema check and its hints, where each `$ref` leads, subschemas of other drafts, the keywords
known and the judgement of unknown ones, and every jsonschema validator the library builds.
May import: the base modules, automaton/, and the rooms before it in core/schema/__init__.py's Order
(lexical/, refusals.py, work_limits.py).
"""
