"""acks.yaml: the alerts people have looked at, kept in git beside the spec (triage without a server).

Format: a YAML mapping ``<alert id>: <reason>`` (comments free), e.g. what
``Alert.ack_snippet`` prints::

    # csit-vpp-perf-mrr-daily-master-2n-icx tests.vpp...64b-2t1c-ethip4-ip4base-mrr mrr: ...
    3f2a9c1b7d4e: "VPP-2051, fixed by gerrit 35123"

An empty file is no acks. Anything else (not a mapping, an id that is not 12 hex digits, an
empty reason, a duplicate id) is a SpecError naming the file and line.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from pal.errors import SpecError

_ID = re.compile(r"^[0-9a-f]{12}$")


def load_acks(path: str | Path) -> dict[str, str]:
    """Read acks.yaml into {alert id: reason}."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError("(file)", str(path), f"a readable acks file ({exc.strerror})", str(path)) from None
    return parse_acks(text, str(path))


def parse_acks(text: str, source: str = "<acks>") -> dict[str, str]:
    """The acks of ``text``; ``source`` names the file in errors."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "(document)"
        raise SpecError(where, getattr(exc, "problem", str(exc)), "valid YAML", source) from None
    if node is None:
        return {}
    if not isinstance(node, yaml.MappingNode):
        raise SpecError(f"line {node.start_mark.line + 1}", node.value if isinstance(node, yaml.ScalarNode) else node.tag,
                        "a mapping of alert id: reason", source)
    acks: dict[str, str] = {}
    for knode, vnode in node.value:
        line = knode.start_mark.line + 1
        key = str(knode.value).strip().lower() if isinstance(knode, yaml.ScalarNode) else None
        if key is None or not _ID.match(key):
            raise SpecError(f"line {line}", knode.value, "an alert id (12 hex digits, see Alert.id)", source)
        if key in acks:
            raise SpecError(f"{key} (line {line})", key, "an alert id not listed before", source)
        if not isinstance(vnode, yaml.ScalarNode) or not str(vnode.value).strip():
            raise SpecError(f"{key} (line {vnode.start_mark.line + 1})", getattr(vnode, "value", None),
                            "a non-empty reason (text)", source)
        acks[key] = str(vnode.value).strip()
    return acks
