"""A server's prompts, resources and resource templates (its *entries*) as claims, vetted like tools.

Each advertised object is stored verbatim with a fingerprint of its contract (the members a model or
a user reads; :func:`toolvet.domain.fingerprint.fingerprint` over :data:`KINDS`' members), a digest of
the whole object, and the text findings its strings earn. :func:`reconcile_entries` is the entries'
half of a pass, data in, data out, like ``domain.reconcile`` for tools.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from toolvet.domain.findings.screen import plainly_clean
from toolvet.domain.findings.static import check_text
from toolvet.domain.findings.strings import Text
from toolvet.domain.fingerprint import fingerprint, text_digest_and_size
from toolvet.domain.reconcile import Rejection
from toolvet.jsontext import sorted_compact

__all__ = ["KINDS", "EntryChanges", "EntryClaim", "EntryError", "EntryUpsert", "Kind", "KindSpec",
           "StoredEntry", "entry_findings", "read_entry", "reconcile_entries"]

Kind = Literal["prompt", "resource", "template"]


@dataclass(frozen=True)
class KindSpec:
    """How one kind is listed and what of it is its identity and its contract."""

    kind: Kind
    method: str  # the list request
    list_key: str  # the member of its result holding the items
    capability: str  # the server capability that declares it
    key: str  # the member naming an item on its server
    contract: tuple[str, ...]  # the members the fingerprint covers

    @property
    def label(self) -> str:
        return "resource template" if self.kind == "template" else self.kind


#: The three kinds. A prompt's contract is what the model reads of it (its arguments included); a
#: resource's or a template's is its name, title, description and type. The key is no part of it: a
#: renamed prompt or a moved URI is another entry.
KINDS: Final[dict[Kind, KindSpec]] = {
    "prompt": KindSpec("prompt", "prompts/list", "prompts", "prompts", "name", ("title", "description", "arguments")),
    "resource": KindSpec("resource", "resources/list", "resources", "resources", "uri",
                         ("name", "title", "description", "mimeType")),
    "template": KindSpec("template", "resources/templates/list", "resourceTemplates", "resources", "uriTemplate",
                         ("name", "title", "description", "mimeType")),
}


class EntryError(ValueError):
    """An advertised entry that cannot be stored; the message says why."""


@dataclass(frozen=True)
class EntryClaim:
    """What a server claims about one entry, derived from the raw object."""

    kind: Kind
    key: str
    name: str | None
    title: str | None
    description: str | None
    definition: dict[str, Any]
    fingerprint: str
    digest: str
    text: str = field(compare=False, repr=False)


def _optional(raw: dict[str, Any], member: str) -> str | None:
    value = raw.get(member)
    if value is not None and not isinstance(value, str):
        raise EntryError(f"{member} must be a string, got {type(value).__name__}")
    return value


def _required(raw: dict[str, Any], member: str) -> str:
    value = raw.get(member)
    if not isinstance(value, str) or not value:
        raise EntryError(f"{member} is missing or not a non-empty string")
    return value


def _check_arguments(raw: dict[str, Any]) -> None:
    arguments = raw.get("arguments")
    if arguments is None:
        return
    if not isinstance(arguments, list):
        raise EntryError(f"arguments must be an array, got {type(arguments).__name__}")
    for index, argument in enumerate(arguments):
        if not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
            raise EntryError(f"arguments[{index}] is not an object with a string name")


def read_entry(kind: Kind, raw: Any, max_bytes: int) -> EntryClaim:
    """One advertised prompt, resource or template as a claim, or EntryError naming the problem."""
    spec = KINDS[kind]
    if not isinstance(raw, dict):
        raise EntryError(f"{spec.label} is not a JSON object (got {type(raw).__name__})")
    key = _required(raw, spec.key)
    name = _required(raw, "name") if kind == "prompt" else _optional(raw, "name")
    title, description = _optional(raw, "title"), _optional(raw, "description")
    if kind == "prompt":
        _check_arguments(raw)
    try:
        text = sorted_compact(raw)
        digest, size = text_digest_and_size(text)
        fp = fingerprint(raw, spec.contract)
    except TypeError as exc:
        raise EntryError(f"not serialisable as JSON: {exc}") from None
    except ValueError as exc:  # NaN, a lone surrogate, an integer JCS refuses
        raise EntryError(f"not canonical JSON (RFC 8785): {exc}") from None
    if size > max_bytes:
        raise EntryError(f"definition is {size} bytes, over the limit of {max_bytes}")
    return EntryClaim(kind, key, name, title, description, raw, fp, digest, text)


def _texts(definition: dict[str, Any]) -> list[Text]:
    """The strings a model or a user reads of an entry: name, title, description, and each prompt
    argument's name, title and description."""
    out = [Text(member, value) for member in ("name", "title", "description")
           if isinstance(value := definition.get(member), str)]
    arguments = definition.get("arguments")
    for index, argument in enumerate(arguments if isinstance(arguments, list) else ()):
        if isinstance(argument, dict):
            parameter = argument.get("name") if isinstance(argument.get("name"), str) else None
            out += [Text(f"arguments[{index}].{member}", value, parameter=parameter)
                    for member in ("name", "title", "description")
                    if isinstance(value := argument.get(member), str)]
    return out


def entry_findings(claim: EntryClaim) -> list[dict[str, Any]]:
    """The text findings an entry's strings earn (the rules tools' descriptions are read with)."""
    if plainly_clean(claim.text):
        return []
    found: list[dict[str, Any]] = []
    for text in _texts(claim.definition):
        found += check_text(text)
    return found


@dataclass(frozen=True)
class StoredEntry:
    """What reconcile needs of an entry already in the registry."""

    id: int
    key: str
    digest: str
    retired: bool


@dataclass(frozen=True)
class EntryUpsert:
    """A claim to write, with its findings. ``entry_id`` is None for a new entry."""

    entry_id: int | None
    claim: EntryClaim
    findings: list[dict[str, Any]]


@dataclass
class EntryChanges:
    """What one complete list of one kind changes."""

    kind: Kind
    added: list[EntryUpsert] = field(default_factory=list)
    changed: list[EntryUpsert] = field(default_factory=list)
    unchanged_ids: list[int] = field(default_factory=list)
    retire_ids: list[int] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)


def reconcile_entries(kind: Kind, stored: Sequence[StoredEntry], listing: Sequence[Any], *,
                      max_definition_bytes: int) -> EntryChanges:
    """Compare a server's complete list of one kind with its stored entries of that kind: new ones
    added, changed ones (or retired ones seen again) rewritten, the rest touched, the ones no longer
    listed retired. An item that cannot be read, or whose key is listed twice, is rejected (and a
    stored entry it would have been is retired: its stored contract is no longer what is advertised)."""
    spec = KINDS[kind]
    changes = EntryChanges(kind)
    by_key = {entry.key: entry for entry in stored}
    keys = [raw.get(spec.key) if isinstance(raw, dict) else None for raw in listing]
    counts = Counter(k for k in keys if isinstance(k, str))
    seen: set[str] = set()
    for index, (raw, key) in enumerate(zip(listing, keys, strict=True)):
        shown = key if isinstance(key, str) else None
        if shown is not None and counts[shown] > 1:
            changes.rejected.append(Rejection(index, shown, f"{spec.key} {shown!r} is listed {counts[shown]} times"))
            continue
        try:
            claim = read_entry(kind, raw, max_definition_bytes)
        except EntryError as exc:
            changes.rejected.append(Rejection(index, shown, f"{spec.label}: {exc}"))
            continue
        seen.add(claim.key)
        known = by_key.get(claim.key)
        if known is None:
            changes.added.append(EntryUpsert(None, claim, entry_findings(claim)))
        elif known.digest != claim.digest or known.retired:
            changes.changed.append(EntryUpsert(known.id, claim, entry_findings(claim)))
        else:
            changes.unchanged_ids.append(known.id)
    changes.retire_ids = [entry.id for entry in stored if not entry.retired and entry.key not in seen]
    return changes
