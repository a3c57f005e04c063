"""The keywords the schema layer knows: annotations, the keywords of each type, and the
formats JSON Schema specifies.

Which keywords *assert* something is the schema's draft's business (see validation.py);
this module only says which of those this compiler enforces.
"""

from __future__ import annotations

ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "$schema",
        "$id",
        "id",
        "$anchor",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$defs",
        "definitions",
        "contentEncoding",
        "contentMediaType",
        "x-grounded",  # whether a plain string must be a span of the document (core.grounding)
    }
)
STRING_KEYWORDS = frozenset({"minLength", "maxLength", "format", "pattern"})
NUMBER_KEYWORDS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"})
ARRAY_KEYWORDS = frozenset({"items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems"})
OBJECT_KEYWORDS = frozenset(
    {
        "properties",
        "required",
        "additionalProperties",
        "minProperties",
        "maxProperties",
        "patternProperties",
        "propertyNames",
        "dependencies",
        "dependentRequired",
        "dependentSchemas",
    }
)
# The keywords of each type that imply it when `type` is absent (`{"minimum": 1}` is
# generated as integers: numeric keywords imply `integer`, never fractions).
TYPE_KEYWORDS: dict[str, frozenset[str]] = {
    "null": frozenset(),
    "boolean": frozenset(),
    "integer": NUMBER_KEYWORDS,
    "number": frozenset(),
    "string": STRING_KEYWORDS,
    "array": ARRAY_KEYWORDS,
    "object": OBJECT_KEYWORDS,
}
ALL_TYPES = tuple(TYPE_KEYWORDS)
APPLICATORS = frozenset({"type", "$ref", "enum", "const", "anyOf", "oneOf", "allOf", "not", "if", "then", "else"})
# Keywords this compiler enforces (or, for annotations, knows to carry no constraint).
SUPPORTED = ANNOTATIONS | APPLICATORS | STRING_KEYWORDS | NUMBER_KEYWORDS | ARRAY_KEYWORDS | OBJECT_KEYWORDS
# Formats JSON Schema defines: enforced or refused. Other names (OpenAPI's int32, byte, ...)
# are ignored by validators, so they are ignored here too and listed as such.
SPECIFIED_FORMATS = frozenset(
    {
        "date",
        "time",
        "date-time",
        "duration",
        "email",
        "idn-email",
        "hostname",
        "idn-hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "iri",
        "iri-reference",
        "uuid",
        "uri-template",
        "json-pointer",
        "relative-json-pointer",
        "regex",
    }
)
