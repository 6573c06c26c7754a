"""The predicate catalog: the built-in file, validation, plugin predicates, raw-phrase mapping."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from engine.errors import ValidationError
from engine.facts.catalog import Catalog, load_catalog, parse_catalog_toml
from engine.facts.rules import extract
from engine.plugin_api import PredicateSpec, hookimpl, new_plugin_manager

KINDS = {"identity", "occupational", "preference", "behavioral", "temporal", "relational"}


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def _spec(name: str = "plays_chess", **changes: object) -> PredicateSpec:
    base = PredicateSpec(
        name=name,
        label="plays chess",
        description="A chess variant the person plays.",
        kind="behavioral",
        cardinality="multi",
        importance=0.4,
        decay="moderate",
        tier_hint="warm",
        cues=("chess variant",),
        examples=("I play blitz chess.",),
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


# -- the built-in catalog --------------------------------------------------------------------------


def test_builtin_catalog_is_large_and_covers_every_kind(catalog: Catalog) -> None:
    assert len(catalog) >= 70
    assert set(catalog.by_kind()) == KINDS
    assert all(catalog.by_kind()[kind] for kind in KINDS)


@pytest.mark.parametrize(
    ("name", "tier"),
    [
        ("is_named", "hot"),
        ("works_as", "hot"),
        ("primary_language", "hot"),
        ("prefers_framework", "warm"),
        ("has_deadline", "warm"),
        ("reported_issue", "warm"),
        ("uses_technology", "warm"),
    ],
)
def test_seed_predicates_and_their_tiers(catalog: Catalog, name: str, tier: str) -> None:
    assert catalog.get(name).tier_hint == tier


def _names(text: str) -> list[str]:
    return text.split()


REQUIRED = _names(
    """
    is_named has_age has_pronouns has_birthday has_nationality identifies_as
    works_as works_at studies_at studies career_goal
    lives_in is_from moved_to visited plans_to_visit
    likes loves dislikes prefers has_favorite owns has_pet
    has_spouse has_partner has_child has_parent has_sibling has_friend relationship_status
    plans_to has_deadline has_event attended participated_in experienced achieved
    started finished does_regularly exercises
    has_skill speaks_language primary_language learning plays_instrument
    uses_technology prefers_framework uses_tool reported_issue
    has_allergy has_condition diet has_hobby interested_in reads watches creates_art
    values feels goal
    """
)


def test_required_predicates_are_present(catalog: Catalog) -> None:
    assert [name for name in REQUIRED if name not in catalog] == []


@pytest.mark.parametrize(
    ("name", "cardinality"),
    [
        ("lives_in", "single"),
        ("is_named", "single"),
        ("works_as", "single"),
        ("has_spouse", "single"),
        ("favorite_food", "single"),
        ("likes", "multi"),
        ("has_child", "multi"),
        ("visited", "multi"),
        ("has_allergy", "multi"),
    ],
)
def test_cardinality(catalog: Catalog, name: str, cardinality: str) -> None:
    assert catalog.get(name).cardinality == cardinality


def test_feelings_are_ephemeral_and_identity_is_stable(catalog: Catalog) -> None:
    assert catalog.get("feels").decay == "ephemeral"
    assert catalog.get("is_named").decay == "stable"


def test_every_spec_is_well_formed(catalog: Catalog) -> None:
    for spec in catalog:
        assert spec.kind in KINDS, spec.name
        assert 0 <= spec.importance <= 1, spec.name
        assert spec.cues and spec.examples, spec.name
        assert all(cue == cue.lower().strip() for cue in spec.cues), spec.name


def test_every_predicate_has_an_example_the_rules_reproduce(catalog: Catalog) -> None:
    """The examples are documentation; they also pin the rule extractor to the catalog's wording."""
    missing = [
        spec.name
        for spec in catalog
        if not any(p.predicate == spec.name for ex in spec.examples for p in extract(ex, speaker="u", catalog=catalog))
    ]
    assert missing == []


def test_collection_protocol(catalog: Catalog) -> None:
    names = catalog.names()
    assert names[0] == "is_named"
    assert "works_as" in catalog and "nonsense" not in catalog and 42 not in catalog
    assert [spec.name for spec in catalog] == list(names)
    assert isinstance(catalog.get("likes"), PredicateSpec)
    with pytest.raises(ValidationError, match="unknown predicate 'flies_to_mars'"):
        catalog.get("flies_to_mars")


def test_describe_texts_one_per_predicate(catalog: Catalog) -> None:
    texts = catalog.describe_texts()
    assert list(texts) == list(catalog.names())
    spec = catalog.get("works_as")
    assert spec.label in texts["works_as"] and spec.description in texts["works_as"]
    assert spec.examples[0] in texts["works_as"]


# -- mapping raw phrases ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("works_as", ("works_as", "exact")),
        ("Works As", ("works_as", "exact")),
        ("work as", ("works_as", "synonym")),
        ("like", ("likes", "synonym")),
        ("named", ("is_named", "synonym")),
        ("pet", ("has_pet", "synonym")),
        ("favourite colour", ("favorite_color", "synonym")),
        ("job", ("works_as", "cue")),
        ("employed by", ("works_at", "cue")),
        ("employer", ("works_at", "cue")),
        ("favorite food", ("favorite_food", "exact")),
        ("my favorite dish", ("favorite_food", "cue")),
        ("my favorite season", ("has_favorite", "cue")),
        ("married to", ("has_spouse", "synonym")),
        ("dark mode", ("prefers_theme", "cue")),
    ],
)
def test_match(catalog: Catalog, raw: str, expected: tuple[str, str]) -> None:
    assert catalog.match(raw) == expected


@pytest.mark.parametrize("raw", ["", "   ", "quantum flux capacitor", "!!!"])
def test_match_none(catalog: Catalog, raw: str) -> None:
    assert catalog.match(raw) is None


@pytest.mark.parametrize(
    ("raw", "slug"),
    [
        ("Plays   Bass!", "custom:plays_bass"),
        ("custom:already", "custom:already"),
        ("Đi học ở trường", "custom:di_hoc_o_truong"),
        ("x" * 80, "custom:" + "x" * 48),
    ],
)
def test_custom_slug(catalog: Catalog, raw: str, slug: str) -> None:
    assert catalog.custom_slug(raw) == slug


def test_custom_slug_needs_letters(catalog: Catalog) -> None:
    with pytest.raises(ValidationError):
        catalog.custom_slug("?!")


# -- validation ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"name": "Plays Chess"}, "snake_case"),
        ({"kind": "hobby"}, "kind"),
        ({"cardinality": "many"}, "cardinality"),
        ({"decay": "never"}, "decay"),
        ({"tier_hint": "lukewarm"}, "tier_hint"),
        ({"importance": 1.5}, "importance"),
        ({"importance": True}, "importance"),
        ({"label": " "}, "label"),
        ({"cues": ("Chess Variant",)}, "cues"),
        ({"cues": ["chess"]}, "tuples"),
        ({"examples": ("",)}, "examples"),
    ],
)
def test_bad_fields_are_rejected_naming_the_predicate(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message) as err:
        Catalog([_spec(**changes)])
    assert "predicate" in err.value.field


def test_duplicate_names_are_rejected() -> None:
    with pytest.raises(ValidationError, match=r"plays_chess.*defined twice"):
        Catalog([_spec(), _spec()])


def test_a_cue_belongs_to_one_predicate() -> None:
    with pytest.raises(ValidationError, match="already a cue of plays_chess"):
        Catalog([_spec(), _spec("plays_go", cues=("chess variant",))])


def test_not_a_spec_is_rejected() -> None:
    with pytest.raises(ValidationError, match="expected a PredicateSpec"):
        Catalog([{"name": "plays_chess"}])  # type: ignore[list-item]


TOML_OK = """
[[predicate]]
name = "plays_chess"
label = "plays chess"
description = "A chess variant the person plays."
kind = "behavioral"
cardinality = "multi"
importance = 0.4
decay = "moderate"
tier_hint = "warm"
cues = ["chess variant"]
examples = ["I play blitz chess."]
"""


def test_parse_catalog_toml() -> None:
    (spec,) = parse_catalog_toml(TOML_OK)
    assert spec == _spec()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (TOML_OK.replace('decay = "moderate"\n', ""), "missing field.*decay"),
        (TOML_OK + 'colour = "red"\n', "unknown field.*colour"),
        ("[[predicate]\nname=", "not valid TOML"),
        ('title = "no tables"', r"\[\[predicate\]\]"),
        (TOML_OK.replace('cues = ["chess variant"]', 'cues = "chess"'), "lists of strings"),
    ],
)
def test_parse_catalog_toml_errors(text: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        parse_catalog_toml(text)


# -- plugin predicates -----------------------------------------------------------------------------


class _ChessPlugin:
    def __init__(self, *specs: object) -> None:
        self.specs = specs

    @hookimpl
    def register_predicates(self, register: Callable[[PredicateSpec], None]) -> None:
        for spec in self.specs:
            register(spec)  # type: ignore[arg-type]


def test_plugin_predicates_join_the_catalog() -> None:
    pm = new_plugin_manager()
    pm.register(_ChessPlugin(_spec()))
    catalog = load_catalog(pm)
    assert "plays_chess" in catalog
    assert catalog.names()[-1] == "plays_chess"
    assert catalog.match("my chess variant") == ("plays_chess", "cue")
    assert len(catalog) == len(load_catalog()) + 1


def test_a_longer_plugin_cue_wins_over_a_builtin_one() -> None:
    pm = new_plugin_manager()
    pm.register(_ChessPlugin(_spec("favorite_team", cues=("favorite team",), kind="preference")))
    catalog = load_catalog(pm)
    assert catalog.match("favorite team") == ("favorite_team", "exact")
    assert catalog.match("my all-time favorite team") == ("favorite_team", "cue")
    assert catalog.match("my favorite season") == ("has_favorite", "cue")


def test_plugin_cannot_redefine_a_builtin_predicate() -> None:
    pm = new_plugin_manager()
    pm.register(_ChessPlugin(_spec("likes", cues=("adore chess",))))
    with pytest.raises(ValidationError, match=r"likes.*defined twice"):
        load_catalog(pm)


def test_plugin_registering_garbage_is_rejected() -> None:
    pm = new_plugin_manager()
    pm.register(_ChessPlugin("plays_chess"))
    with pytest.raises(ValidationError, match="expected a PredicateSpec"):
        load_catalog(pm)


def test_load_catalog_without_plugins_equals_builtin_only() -> None:
    assert load_catalog(new_plugin_manager()).names() == load_catalog().names()
