"""Life facts: the shapes that read where a person lives and works, who their people and pets are, their health,
diet and habits, and the dated events of their life — with the clause context that decides whether a statement is
theirs, true, negated, a change, or only a plan.

:func:`life_facts` is one sentence shape of the rule extractor.  Its facts carry the clause they were read from
(``Found.span``): the extractor dates them from the time expressions of that clause alone, and leaves the clause
heads inside it to these shapes rather than reading them again with the generic verb rules.
"""

from __future__ import annotations

from collections.abc import Iterator

from engine.facts.catalog import Catalog
from engine.facts.rules.life.effects import effects
from engine.facts.rules.life.events import events
from engine.facts.rules.life.happenings import happenings
from engine.facts.rules.life.health import health
from engine.facts.rules.life.places import places
from engine.facts.rules.life.relations import relations
from engine.facts.rules.life.things import things
from engine.facts.rules.life.views import views
from engine.facts.rules.life.work import work
from engine.facts.rules.model import Found, Sentence

_SHAPES = (places, work, relations, health, things, events, views, effects, happenings)


def life_facts(s: Sentence, catalog: Catalog) -> Iterator[Found]:
    """Every life fact of one sentence."""
    for shape in _SHAPES:
        yield from shape(s, catalog)
