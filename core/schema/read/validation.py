"""Every jsonschema validator the library uses is built here, and none retrieves a reference.

A jsonschema validator built without a registry fetches a `$ref` it cannot resolve inside
the schema over HTTP (or reads it from a file). A schema is data, often not written by the
person running the tool, so every validator here gets a registry whose `retrieve` refuses
every URI: a reference resolves inside the schema (or the bundled meta-schemas) or not at
all. The compiler refuses non-local references before any validator sees them; the registry
is the second wall, for any reference a validator would follow that the compiler did not.
"""

from __future__ import annotations

import functools
from typing import Any

import jsonschema
import jsonschema.exceptions
import jsonschema.protocols
import referencing
import referencing.exceptions

from ...errors import SchemaError
from .meta import inlined
from .meta_check import Check, fast_meta_check

Validator = jsonschema.protocols.Validator


def _refuse_retrieval(uri: str) -> referencing.Resource[Any]:
    raise referencing.exceptions.NoSuchResource(ref=uri)  # type: ignore[call-arg]  # an attrs class mypy cannot read


# Bundled meta-schemas are added by jsonschema itself (SPECIFICATIONS.combine(registry)).
NO_RETRIEVAL: referencing.Registry[Any] = referencing.Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]  # attrs, as above
# jsonschema wraps referencing's Unresolvable (and subclasses it): catch this one class.
Unresolvable = referencing.exceptions.Unresolvable


def validator_class(schema: Any) -> type[Validator]:
    """The validator of the schema's draft (`$schema`; 2020-12 when absent or unknown).
    Raises SchemaError when `$schema` is not a string (jsonschema would fail reading it)."""
    if isinstance(schema, dict) and "$schema" in schema and not isinstance(schema["$schema"], str):
        raise SchemaError(
            f"`$schema` must be a string naming a draft's meta-schema, not {type(schema['$schema']).__name__}",
            hint='write e.g. "$schema": "https://json-schema.org/draft/2020-12/schema", or leave it out',
        )
    found: type[Validator] = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return found


def draft_name(schema: Any) -> str:
    """The schema's draft as people write it: `draft-07`, `2020-12`."""
    return name_of(validator_class(schema))


def name_of(draft: type[Validator]) -> str:
    """A validator class's draft as people write it: `draft-07`, `2020-12`."""
    number = draft.__name__.removeprefix("Draft").removesuffix("Validator")
    return f"{number[:4]}-{number[4:]}" if len(number) == 6 else f"draft-{int(number):02d}"


# Drafts whose `$ref` makes validators ignore every keyword beside it (2019-09 applies them).
_REF_ONLY_DRAFTS = frozenset({"Draft3Validator", "Draft4Validator", "Draft6Validator", "Draft7Validator"})


def draft_keywords(schema: Any) -> frozenset[str]:
    """The keywords that assert something under the schema's draft, as its validator reads
    them (2020-12 when undeclared). Draft 4's boolean exclusiveMinimum/exclusiveMaximum
    count: its `minimum`/`maximum` read them."""
    return asserting_keywords(validator_class(schema))


def asserting_keywords(draft: type[Validator]) -> frozenset[str]:
    """The keywords that assert something under a validator class's draft (see draft_keywords)."""
    keywords = frozenset(draft.VALIDATORS)
    if "minimum" in keywords and "exclusiveMinimum" not in keywords:
        keywords |= {"exclusiveMinimum", "exclusiveMaximum"}
    return keywords


def ref_ignores_siblings(schema: Any) -> bool:
    """Whether, in the schema's draft, a `$ref` makes every keyword beside it meaningless."""
    return ignores_ref_siblings(validator_class(schema))


def ignores_ref_siblings(draft: type[Validator]) -> bool:
    """Whether, in a validator class's draft, a `$ref` makes every keyword beside it meaningless."""
    return draft.__name__ in _REF_ONLY_DRAFTS


def validator_for_schema(root: Any) -> Validator:
    """A validator for `root` with its draft's format checker; references resolve inside
    `root` only. Cheap to build (nothing is crawled until a reference is followed); use
    `.evolve(schema=part)` for a part of `root` so that its references resolve in `root`."""
    cls = validator_class(root)
    return cls(root, format_checker=cls.FORMAT_CHECKER, registry=NO_RETRIEVAL)


def meta_schema_error(schema: Any) -> jsonschema.exceptions.ValidationError | None:
    """The first way `schema` fails its draft's meta-schema, or None (what check_schema
    raises, with the registry above: the meta-schemas are bundled). Most schemas pass the
    fast check (core.schema.read.meta_check); jsonschema settles, and words, the rest."""
    cls = validator_class(schema)
    passes = _fast_meta_check(cls)
    if passes is not None and passes(schema):
        return None
    return next(iter(_meta_validator(cls).iter_errors(schema)), None)


@functools.cache
def _fast_meta_check(cls: type[Validator]) -> Check | None:
    meta = _meta_validator(cls)
    return fast_meta_check(meta.schema, type(meta), type(meta).FORMAT_CHECKER)  # as _meta_validator checks


@functools.cache
def _meta_validator(cls: type[Validator]) -> Validator:
    """A validator of schemas of `cls`'s draft (2020-12's and 2019-09's meta-schemas inlined:
    core.schema.read.meta)."""
    if cls is jsonschema.Draft202012Validator:
        meta_schema = inlined("2020-12")
    elif cls is jsonschema.Draft201909Validator:
        meta_schema = inlined("2019-09")
    else:
        meta_schema = cls.META_SCHEMA
    meta_class = jsonschema.validators.validator_for(cls.META_SCHEMA, default=cls)
    return meta_class(meta_schema, format_checker=meta_class.FORMAT_CHECKER, registry=NO_RETRIEVAL)


def best_error(validator: Validator, value: Any) -> jsonschema.exceptions.ValidationError | None:
    """The most relevant way `value` fails, or None. Raises SchemaError when the schema
    holds a reference that does not resolve inside it."""
    try:
        return jsonschema.exceptions.best_match(validator.iter_errors(value))
    except Unresolvable as error:
        raise SchemaError(
            f"a $ref does not resolve inside the schema ({error}); references are never retrieved",
            hint="point every $ref at a part of the same schema ('#/$defs/...')",
        ) from None
