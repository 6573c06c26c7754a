"""The predicate catalog: built-in predicates from ``resources/predicates.toml`` plus
plugin-registered ones.

The catalog owns three things the fact pipeline needs from predicates:

* the **specs** (kind, cardinality, importance, decay, tier hint) that gate, score and tier a fact;
* the **mapping** of a raw predicate phrase an extractor produced ("work as", "employed by",
"favorite food") to a catalog name — exact, synonym (the name or label in another inflection) or cue
(a phrase from the entry's ``cues``) — and a ``custom:<slug>`` name for what does not map (DESIGN
§4, stage 3);
* one **descriptive text** per predicate, which the pipeline embeds for nearest-predicate mapping.

A catalog is immutable and validated when built: a duplicate name, a field of the wrong type or
value, or a cue claimed by two predicates is a :class:`~engine.errors.ValidationError` naming the
predicate, because a silently ambiguous catalog would map the same phrase to different predicates
from one run to the next.
"""

from __future__ import annotations

import json
import re
import tomllib
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Literal

import pluggy

from engine.errors import ValidationError
from engine.plugin_api import PredicateSpec

if TYPE_CHECKING:
    from engine.store import Store

MatchMethod = Literal["exact", "synonym", "cue"]
Kind = Literal["identity", "occupational", "preference", "behavioral", "temporal", "relational"]

_KINDS: tuple[Kind, ...] = (
    "identity",
    "occupational",
    "preference",
    "behavioral",
    "temporal",
    "relational",
)
_CARDINALITIES = ("single", "multi")
_DECAYS = ("stable", "moderate", "ephemeral")
_TIERS = ("hot", "warm", "cold")
_FIELDS = (
    "name",
    "label",
    "description",
    "kind",
    "cardinality",
    "importance",
    "decay",
    "tier_hint",
    "cues",
    "examples",
)
_REQUIRED = _FIELDS[:8]

_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{1,63}$")
_CUE_RE = re.compile(r"^[a-z0-9][a-z0-9 '/&+.-]{0,47}$")
_WORD_RE = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
_CUSTOM_PREFIX = "custom:"
_SLUG_MAX = 48

#: Leading function words dropped when a raw phrase is compared with a predicate's name ("has_pet" ~
#: "pet", "is_named" ~ "named"): extractors and models phrase the same predicate with or without
#: them.
_LEADING_FILLER = frozenset({"is", "am", "are", "was", "be", "has", "have", "had", "i", "my", "the", "a", "an"})
#: British and informal spellings folded before comparison so cues need only one spelling.
_SPELLING = {"favourite": "favorite", "fav": "favorite", "colour": "color", "organise": "organize"}


def _stem(word: str) -> str:
    """A deliberately crude stemmer: enough to equate "works"/"work", "living"/"live",
    "named"/"name".

    Both sides of every comparison go through it, so it only has to be consistent, not
    linguistically right.
    """
    w = _SPELLING.get(word, word)
    w = w.replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) > 4 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 3 and w.endswith("ied"):
        w = w[:-3] + "y"
    elif len(w) > 3 and w.endswith("ed"):
        w = w[:-2]
    elif len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 3 and (w.endswith(("ches", "shes")) or (w.endswith("es") and w[-3] in "sxz")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]
    return _SPELLING.get(w, w)


def _tokens(phrase: str) -> tuple[str, ...]:
    """Lowercase stemmed word tokens of a phrase; underscores and hyphens separate words."""
    text = unicodedata.normalize("NFKC", phrase).casefold().replace("_", " ").replace("-", " ")
    return tuple(_stem(w) for w in _WORD_RE.findall(text))


def _strip_leading(tokens: tuple[str, ...]) -> tuple[str, ...]:
    i = 0
    while i < len(tokens) - 1 and tokens[i] in _LEADING_FILLER:
        i += 1
    return tokens[i:]


class Catalog:
    """An immutable, validated set of predicates with raw-phrase mapping.

    Iterating yields :class:`PredicateSpec` objects in catalog order (built-ins in file order, then
    plugin predicates in registration order); ``name in catalog`` tests a predicate name.
    """

    def __init__(self, specs: Iterable[PredicateSpec]) -> None:
        """Validate ``specs`` and build the lookup tables.

        Raises:
            ValidationError: a spec has a bad field, a name repeats, or a cue is claimed by two
            predicates.
        """
        self._specs: dict[str, PredicateSpec] = {}
        for spec in specs:
            _validate_spec(spec)
            if spec.name in self._specs:
                raise ValidationError(
                    f"predicate {spec.name}",
                    "is defined twice",
                    fix="Give each predicate a unique name.",
                )
            self._specs[spec.name] = spec
        self._position = {name: i for i, name in enumerate(self._specs)}
        self._synonyms = self._build_synonyms()
        self._cues = self._build_cues()
        self._phrase_index: dict[str, list[tuple[tuple[str, ...], str, int]]] | None = None
        # Longest cues first, so the most specific phrase wins ("favorite food" before "favorite").
        self._cue_order = sorted(
            self._cues.items(),
            key=lambda item: (
                -len(item[0]),
                -self._specs[item[1]].importance,
                self._position[item[1]],
            ),
        )

    # -- collection protocol
    # ----------------------------------------------------------------------------------
    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._specs

    def __iter__(self) -> Iterator[PredicateSpec]:
        return iter(self._specs.values())

    def __len__(self) -> int:
        return len(self._specs)

    def __repr__(self) -> str:
        return f"Catalog({len(self._specs)} predicates)"

    def get(self, name: str) -> PredicateSpec:
        """The spec of predicate ``name``.

        Raises:
            ValidationError: ``name`` is not in the catalog.
        """
        try:
            return self._specs[name]
        except KeyError:
            raise ValidationError(
                "predicate",
                f"unknown predicate {name!r}",
                fix="Use a catalog name or map the phrase first.",
            ) from None

    def names(self) -> tuple[str, ...]:
        """All predicate names in catalog order."""
        return tuple(self._specs)

    def by_kind(self) -> dict[str, tuple[PredicateSpec, ...]]:
        """Predicates grouped by kind; every kind is a key, in the order of DESIGN §3."""
        return {kind: tuple(s for s in self._specs.values() if s.kind == kind) for kind in _KINDS}

    # -- mapping
    # --------------------------------------------------------------------------------------------
    def match(self, raw: str) -> tuple[str, MatchMethod] | None:
        """Map a raw predicate phrase to ``(name, method)``, or None when nothing fits.

        ``exact``: the phrase is a name ("works_as", "works as").  ``synonym``: the name or label in
        another inflection or without its leading auxiliary ("work as", "named", "pet").  ``cue``:
        the phrase is, or contains, one of a predicate's cues ("job", "employed by", "my favorite
        food"); the longest contained cue wins, then the more important predicate.
        """
        text = unicodedata.normalize("NFKC", raw).strip().casefold()
        if not text:
            return None
        snake = re.sub(r"[\s-]+", "_", text)
        if snake in self._specs:
            return snake, "exact"
        tokens = _tokens(text)
        if not tokens:
            return None
        for key in (tokens, _strip_leading(tokens)):
            name = self._synonyms.get(key)
            if name is not None:
                return name, "synonym"
        name = self._cues.get(tokens) or self._cues.get(_strip_leading(tokens))
        if name is not None:
            return name, "cue"
        for cue, name in self._cue_order:
            if _contains(tokens, cue):
                return name, "cue"
        return None

    def predicates_in(self, text: str, *, limit: int = 3) -> tuple[str, ...]:
        """Predicates whose cues, names or labels occur in free ``text`` (a recall query), most specific first.

        Phrases are looked up by their first word, so the cost follows the query's length, not the catalog's.
        """
        tokens = _tokens(text)
        if not tokens:
            return ()
        if self._phrase_index is None:
            index: dict[str, list[tuple[tuple[str, ...], str, int]]] = {}
            for rank, (cue, name) in enumerate(self._cue_order):
                index.setdefault(cue[0], []).append((cue, name, rank))
            offset = len(self._cue_order)
            synonyms = sorted(self._synonyms.items(), key=lambda item: -len(item[0]))
            for rank, (key, name) in enumerate(synonyms):
                if len(key) > 1:
                    index.setdefault(key[0], []).append((key, name, offset + rank))
            self._phrase_index = index
        found: dict[str, int] = {}
        for i, token in enumerate(tokens):
            for phrase, name, rank in self._phrase_index.get(token, ()):
                if tokens[i : i + len(phrase)] == phrase and rank < found.get(name, 1 << 30):
                    found[name] = rank
        return tuple(sorted(found, key=found.__getitem__)[:limit])

    def custom_slug(self, raw: str) -> str:
        """``custom:<slug>`` for a phrase that maps to no predicate (ASCII, lowercase, underscores).

        Raises:
            ValidationError: the phrase has no letters or digits to build a slug from.
        """
        folded = unicodedata.normalize("NFKD", raw.replace("đ", "d").replace("Đ", "D"))
        ascii_text = folded.encode("ascii", "ignore").decode("ascii").casefold()
        if ascii_text.startswith(_CUSTOM_PREFIX):
            ascii_text = ascii_text[len(_CUSTOM_PREFIX) :]
        slug = re.sub(r"[^a-z0-9]+", "_", ascii_text).strip("_")[:_SLUG_MAX].rstrip("_")
        if not slug:
            raise ValidationError("predicate", f"cannot make a predicate name from {raw!r}")
        return _CUSTOM_PREFIX + slug

    def describe_texts(self) -> dict[str, str]:
        """One descriptive text per predicate (label, description, cues, examples) for embedding."""
        texts: dict[str, str] = {}
        for spec in self._specs.values():
            parts = [f"{spec.label}: {spec.description}"]
            if spec.cues:
                parts.append("Also said as: " + ", ".join(spec.cues) + ".")
            if spec.examples:
                parts.append("For example: " + " ".join(spec.examples))
            texts[spec.name] = " ".join(parts)
        return texts

    # -- construction helpers
    # ---------------------------------------------------------------------------------
    def _build_synonyms(self) -> dict[tuple[str, ...], str]:
        """Stemmed forms of each name and label; a form two predicates share is dropped as
        ambiguous."""
        seen: dict[tuple[str, ...], set[str]] = {}
        for spec in self._specs.values():
            for phrase in (spec.name, spec.label):
                tokens = _tokens(phrase)
                for key in {tokens, _strip_leading(tokens)}:
                    if key:
                        seen.setdefault(key, set()).add(spec.name)
        return {key: next(iter(names)) for key, names in seen.items() if len(names) == 1}

    def _build_cues(self) -> dict[tuple[str, ...], str]:
        cues: dict[tuple[str, ...], str] = {}
        for spec in self._specs.values():
            for cue in spec.cues:
                key = _tokens(cue)
                owner = cues.get(key)
                if owner is not None and owner != spec.name:
                    raise ValidationError(
                        f"predicate {spec.name}",
                        f"cue {cue!r} is already a cue of {owner}",
                        fix="A cue must point at one predicate; drop it from one of them.",
                    )
                cues[key] = spec.name
        return cues


def _contains(tokens: tuple[str, ...], cue: tuple[str, ...]) -> bool:
    n = len(cue)
    return any(tokens[i : i + n] == cue for i in range(len(tokens) - n + 1))


# -- validation ------------------------------------------------------------------------------------
def _validate_spec(spec: object) -> None:
    """Raise a ValidationError naming the predicate when ``spec`` is not a well-formed
    PredicateSpec."""
    if not isinstance(spec, PredicateSpec):
        raise ValidationError("predicate", f"expected a PredicateSpec, got {type(spec).__name__}")
    name = spec.name
    where = f"predicate {name!r}" if isinstance(name, str) and name else "predicate"
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise ValidationError(where, "name must be snake_case: a-z, 0-9 and _, starting with a letter")
    for attr in ("label", "description"):
        value = getattr(spec, attr)
        if not isinstance(value, str) or not value.strip():
            raise ValidationError(f"{where}.{attr}", "must be a non-empty string")
    _check_choice(where, "kind", spec.kind, _KINDS)
    _check_choice(where, "cardinality", spec.cardinality, _CARDINALITIES)
    _check_choice(where, "decay", spec.decay, _DECAYS)
    _check_choice(where, "tier_hint", spec.tier_hint, _TIERS)
    importance = spec.importance
    if isinstance(importance, bool) or not isinstance(importance, int | float) or not 0 <= importance <= 1:
        raise ValidationError(f"{where}.importance", f"must be a number from 0 to 1, got {importance!r}")
    if not isinstance(spec.cues, tuple) or not isinstance(spec.examples, tuple):
        raise ValidationError(where, "cues and examples must be tuples of strings")
    for cue in spec.cues:
        if not isinstance(cue, str) or not _CUE_RE.match(cue) or not _tokens(cue):
            raise ValidationError(f"{where}.cues", f"{cue!r} is not a short lowercase phrase")
    for example in spec.examples:
        if not isinstance(example, str) or not example.strip():
            raise ValidationError(f"{where}.examples", "examples must be non-empty sentences")


def _check_choice(where: str, field: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValidationError(f"{where}.{field}", f"{value!r} is not one of {', '.join(allowed)}")


def spec_from_mapping(table: Mapping[str, Any]) -> PredicateSpec:
    """Build a PredicateSpec from one ``[[predicate]]`` table, checking that its fields are exactly
    the spec's.

    Raises:
        ValidationError: a field is missing or unknown (the spec's own values are checked by
        :class:`Catalog`).
    """
    name = table.get("name")
    where = f"predicate {name!r}" if isinstance(name, str) and name else "predicate"
    missing = [f for f in _REQUIRED if f not in table]
    if missing:
        raise ValidationError(where, f"missing field(s): {', '.join(missing)}")
    unknown = sorted(set(table) - set(_FIELDS))
    if unknown:
        raise ValidationError(where, f"unknown field(s): {', '.join(unknown)}")
    cues, examples = table.get("cues", []), table.get("examples", [])
    if not isinstance(cues, list) or not isinstance(examples, list):
        raise ValidationError(where, "cues and examples must be lists of strings")
    return PredicateSpec(
        name=table["name"],
        label=table["label"],
        description=table["description"],
        kind=table["kind"],
        cardinality=table["cardinality"],
        importance=table["importance"],
        decay=table["decay"],
        tier_hint=table["tier_hint"],
        cues=tuple(cues),
        examples=tuple(examples),
    )


def parse_catalog_toml(text: str, *, source: str = "predicates.toml") -> list[PredicateSpec]:
    """The predicate specs of a catalog file's text (``[[predicate]]`` tables).

    Raises:
        ValidationError: the text is not TOML, has no predicate list, or a table is malformed.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValidationError(source, f"not valid TOML: {exc}") from None
    tables = data.get("predicate")
    if not isinstance(tables, list):
        raise ValidationError(source, "expected [[predicate]] tables")
    return [spec_from_mapping(table) for table in tables]


@cache
def _builtin_specs() -> tuple[PredicateSpec, ...]:
    # The packaged file never changes while the process runs; parse it once.
    text = resources.files("resources").joinpath("predicates.toml").read_text(encoding="utf-8")
    return tuple(parse_catalog_toml(text))


def load_catalog(pm: pluggy.PluginManager | None = None) -> Catalog:
    """The built-in catalog plus every predicate registered through ``register_predicates``.

    Args:
        pm: a plugin manager with Cairn's hookspecs (``engine.plugin_api.new_plugin_manager()``), or
        None for the built-in predicates only.

    Raises:
        ValidationError: the catalog file or a plugin predicate is malformed, a plugin reuses a
        predicate name, or two predicates claim the same cue.
    """
    specs: list[PredicateSpec] = list(_builtin_specs())
    if pm is not None:
        registered: list[PredicateSpec] = []

        def register(spec: PredicateSpec) -> None:
            _validate_spec(spec)
            registered.append(spec)

        pm.hook.register_predicates(register=register)
        specs.extend(registered)
    return Catalog(specs)


def sync_predicates(store: Store, catalog: Catalog) -> None:
    """Mirror the catalog (resource file + plugins) into the ``predicates`` table."""
    rows = [
        (
            s.name,
            s.label,
            s.description,
            s.kind,
            s.cardinality,
            s.importance,
            s.decay,
            s.tier_hint,
            json.dumps(list(s.cues)),
            json.dumps(list(s.examples)),
        )
        for s in catalog
    ]

    def op(tx: Any) -> None:
        tx.execute("DELETE FROM predicates WHERE origin = 'catalog'")
        tx.executemany(
            "INSERT INTO predicates(name, label, description, kind, cardinality, importance, decay, tier_hint, "
            "cues, examples, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'catalog') "
            "ON CONFLICT(name) DO UPDATE SET label = excluded.label, description = excluded.description, "
            "kind = excluded.kind, cardinality = excluded.cardinality, importance = excluded.importance, "
            "decay = excluded.decay, tier_hint = excluded.tier_hint, cues = excluded.cues, "
            "examples = excluded.examples, origin = 'catalog'",
            rows,
        )

    if store.writer is not None:
        store.write(op)
