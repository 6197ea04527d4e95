"""Generate the JSON Schema of records from the LinkML schema (introspection via linkml-runtime).

The LinkML file in ``schemas/`` is the source of truth; the JSON Schema beside it is generated
by this module and committed, so validation never imports linkml-runtime (slow to import).
The output follows the conventions of LinkML's JSON Schema generator, which is what
bioai-evidence-validator 0.8.0 validated against, so records get the same SCHEMA outcome:
closed objects, optional single values nullable, ``uri`` as ``format: uri`` and
``datetime`` as ``format: date-time``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_FORMATS = {"uri": "uri", "datetime": "date-time", "date": "date"}
_JSON_TYPES = {"integer": "integer", "float": "number", "double": "number", "decimal": "number",
               "boolean": "boolean"}


def generate(schema_path: Path) -> dict[str, Any]:
    """Compile the LinkML schema at ``schema_path`` to a JSON Schema (draft 2020-12) dict."""
    from linkml_runtime.utils.schemaview import SchemaView

    view = SchemaView(str(schema_path))
    schema = view.schema
    defs: dict[str, Any] = {}
    for name, enum in view.all_enums(imports=False).items():
        defs[str(name)] = {
            "description": enum.description or "",
            "enum": [str(v) for v in enum.permissible_values],
            "title": str(name),
            "type": "string",
        }
    root = None
    for name in view.all_classes(imports=False):
        cls = view.get_class(name)
        if cls.tree_root:
            root = str(name)
        properties: dict[str, Any] = {}
        required: list[str] = []
        for slot_name in view.class_slots(name):
            slot = view.induced_slot(slot_name, name)
            properties[str(slot_name)] = _slot_schema(view, slot)
            if slot.required:
                required.append(str(slot_name))
        defs[str(name)] = {
            "additionalProperties": False,
            "description": cls.description or "",
            "properties": properties,
            "required": required,
            "title": str(name),
            "type": "object",
        }
    if root is None:
        raise ValueError(f"{schema_path}: no class is marked tree_root")
    top = dict(defs[root])
    top.update({
        "$defs": defs,
        "$id": str(schema.id),
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": str(schema.name),
        "description": " ".join((schema.description or "").split()),
        "version": str(schema.version),
    })
    return top


def _slot_schema(view: Any, slot: Any) -> dict[str, Any]:
    rng = str(slot.range or view.schema.default_range or "string")
    required = bool(slot.required)
    if rng in view.all_classes():
        base: dict[str, Any] = {"$ref": f"#/$defs/{rng}"}
        scalar_type: Any = None
    elif rng in view.all_enums():
        base = {"$ref": f"#/$defs/{rng}"}
        scalar_type = None
    else:
        type_def = view.get_type(rng)
        base_name = rng
        while type_def is not None and base_name not in _FORMATS and base_name not in _JSON_TYPES \
                and type_def.typeof:
            base_name = str(type_def.typeof)
            type_def = view.get_type(base_name)
        scalar_type = _JSON_TYPES.get(base_name, "string")
        base = {"type": scalar_type}
        if base_name in _FORMATS:
            base["format"] = _FORMATS[base_name]
        if slot.pattern:
            base["pattern"] = slot.pattern
    if slot.multivalued:
        out: dict[str, Any] = {"items": base, "type": "array" if required else ["array", "null"]}
        if slot.minimum_cardinality is not None:
            out["minItems"] = int(slot.minimum_cardinality)
        return out
    if required:
        return base
    if scalar_type is None:
        return {"anyOf": [base, {"type": "null"}]}
    base["type"] = [scalar_type, "null"]
    return base


def render(schema_path: Path) -> str:
    """The committed text form: sorted keys, two-space indent, trailing newline."""
    return json.dumps(generate(schema_path), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
