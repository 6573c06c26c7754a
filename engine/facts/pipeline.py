"""The analysis half of the fact pipeline: stages L0 → 5 and 8 (embed), pure of storage; :data:`STAGES` names all.

:meth:`Pipeline.analyse` turns one text into scored fact proposals plus a trace of every stage.  It reads nothing
from the vault except through the ``known`` hints it is given, so it runs on any thread, and the dry run of
``vault.events.extract`` shows exactly what enrichment would do.  Matching and deciding against stored facts (stages 6,
7, 9) happen in :mod:`engine.facts.decide`, inside the writer's transaction.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.ai.embedders import Embedder, Matrix
from engine.ai.llm import LLM, GuardedLLM, model_error_text
from engine.config import Settings
from engine.errors import ModelUnavailable, ValidationError
from engine.facts import params
from engine.facts.catalog import Catalog
from engine.facts.classifier import classify
from engine.facts.gates import gate
from engine.facts.llm_extract import ExtractionError, extract_with_model
from engine.facts.model import confidence, kind_of, normalise_object, render_statement, standing_for
from engine.facts.rules import extract as rules_extract
from engine.facts.rules.lexicon import PLAN_RE
from engine.facts.types import Proposition, StageTrace
from engine.privacy import FirewallResult, apply as firewall_apply
from engine.temporal import find_mentions
from engine.temporal.direction import pick
from engine.temporal.types import TemporalMention

#: Every stage of DESIGN §4, in the order ``vault.events.extract`` reports them.  The statements' vectors (Embed) are
#: computed before Match, in one batch outside the write transaction; the Embed entry follows Decide because what is
#: stored depends on the decisions (no new row for MERGE/LINK/NOOP, no vector for a quarantined fact).
STAGES: tuple[str, ...] = (
    "firewall",
    "classify",
    "context",
    "extract",
    "map",
    "gate",
    "score",
    "match",
    "decide",
    "embed",
    "tier",
)

#: Objects that carry no information on their own.
_EMPTY_OBJECTS = frozenset(
    "it that this them those these something anything nothing stuff things thing one some lot lots".split()
)


@dataclass(frozen=True, slots=True)
class Proposal:
    """A proposition after Map, Gate and Score: ready for Match/Decide."""

    proposition: Proposition
    subject: str
    predicate: str
    map_method: str
    object_text: str
    object_norm: str
    statement: str
    kind: str
    decay: str
    cardinality: str
    tier_hint: str
    importance: float
    utility: float
    source_class: str
    source_role: str
    confidence: float
    standing: str
    valid_from: float | None
    valid_to: float | None
    when: TemporalMention | None
    vector: npt.NDArray[np.float32] | None = None


@dataclass(slots=True)
class Analysis:
    """Everything the analysis stages produced for one text."""

    text: str
    role: str
    speaker: str
    occurred_at: datetime
    traces: list[StageTrace] = field(default_factory=list)
    proposals: list[Proposal] = field(default_factory=list)
    dropped: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    firewall: FirewallResult | None = None
    text_vector: npt.NDArray[np.float32] | None = None
    extractor: str = "rules"
    prompt_hash: str | None = None


class Pipeline:
    """Stages L0–5 and 8 with their collaborators (catalog, embedder, optional model)."""

    def __init__(
        self,
        catalog: Catalog,
        embedder: Embedder,
        settings: Settings,
        *,
        llm: Callable[[], LLM | None] = lambda: None,
    ) -> None:
        self.catalog = catalog
        self.embedder = embedder
        self.settings = settings
        self._llm = llm
        self._predicate_index: tuple[list[str], npt.NDArray[np.float32]] | None = None

    # -- the whole path ----------------------------------------------------------------------------------------
    def analyse(
        self,
        text: str,
        *,
        role: str,
        author: str | None,
        occurred_at: datetime,
        run_firewall: bool,
        source: str = "api",
        known: Sequence[str] = (),
        embed: bool = True,
        valid_time: datetime | None = None,
        earlier: Sequence[str] = (),
    ) -> Analysis:
        """Run the analysis stages on ``text``; see the module docstring.

        Relative dates resolve against ``occurred_at`` (when it was said); a fact without a date of its own is
        true from ``valid_time`` when the event gives one (it became true then), else from ``occurred_at``.
        ``earlier`` are the speaker's messages just before this one (oldest first): the rules resolve a pronoun
        that has nobody to point back to in ``text`` into them, and read nothing else there.
        """
        speaker = author or ("user" if role == "user" else role)
        out = Analysis(text=text, role=role, speaker=speaker, occurred_at=occurred_at)
        if run_firewall:
            text = self._stage_firewall(out, text)
            if out.firewall is not None and out.firewall.blocked:
                return out
        if role == "system":
            out.traces.append(StageTrace("classify", "system messages are not processed for memory"))
            return out
        segments, commands = self._stage_classify(out, text, role)
        if embed:
            self._stage_context(out, text)
        if not segments and not commands:
            return out
        propositions = self._stage_extract(out, text, segments, speaker, occurred_at, known, commands, earlier)
        mentions = self._temporal(text, occurred_at)
        if mentions and propositions:
            ahead = self._temporal(text, occurred_at, prefer="future")
            propositions = [_dated(p, mentions, ahead, occurred_at, text) for p in propositions]
        mapped = self._stage_map(out, propositions)
        gated = self._stage_gate(out, mapped)
        out.proposals = self._stage_score(
            out, gated, role=role, author=author, source=source, mentions=mentions, valid_time=valid_time
        )
        if embed and out.proposals:
            self._stage_embed(out)
        return out

    def _embed_or_warn(self, out: Analysis, texts: list[str]) -> Matrix | None:
        """Vectors of ``texts``, or None with a warning when the embedder is down (what is stored then waits in the
        backlog for its vector; nothing else is held up)."""
        try:
            return self.embedder.embed(texts)
        except ModelUnavailable as exc:
            out.warnings.append(f"embedder unavailable, vectors queued: {exc.message}")
            return None

    # -- L0 / L0.5 ---------------------------------------------------------------------------------------------
    def _stage_firewall(self, out: Analysis, text: str) -> str:
        t0 = time.perf_counter()
        result = firewall_apply(text, self.settings.privacy)
        out.firewall = result
        cats = sorted({f"{f.category}:{f.action}" for f in result.findings})
        summary = ("blocked: " if result.blocked else "") + (", ".join(cats) if cats else "nothing found")
        out.traces.append(
            StageTrace(
                "firewall",
                summary,
                {"findings": cats, "blocked": result.blocked, "text": result.text},
                _ms(t0),
            )
        )
        return result.text

    def _stage_classify(
        self, out: Analysis, text: str, role: str
    ) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """The statements to extract from, and the user's requests (read for the dated events they name only:
        "help me with a speech for Beatriz's party on the 14th")."""
        t0 = time.perf_counter()
        result = classify(text, role)
        kept = [(s.start, s.end) for s in result.kept]
        commands = [(s.start, s.end) for s in result.segments if s.label == "command" and role == "user"]
        labels = [{"text": text[s.start : s.end], "label": s.label, "keep": s.keep} for s in result.segments]
        summary = f"{len(kept)} of {len(result.segments)} segments kept"
        out.traces.append(StageTrace("classify", summary, {"segments": labels}, _ms(t0)))
        return kept, commands

    # -- 1 find context ----------------------------------------------------------------------------------------
    def _stage_context(self, out: Analysis, text: str) -> None:
        t0 = time.perf_counter()
        vectors = self._embed_or_warn(out, [text])
        out.text_vector = vectors[0] if vectors is not None else None
        out.traces.append(
            StageTrace(
                "context",
                f"embedded with {self.embedder.model_id}",
                {"embedder": self.embedder.model_id},
                _ms(t0),
            )
        )

    # -- 2 extract ---------------------------------------------------------------------------------------------
    def _stage_extract(
        self,
        out: Analysis,
        text: str,
        segments: list[tuple[int, int]],
        speaker: str,
        occurred_at: datetime,
        known: Sequence[str],
        commands: Sequence[tuple[int, int]] = (),
        earlier: Sequence[str] = (),
    ) -> list[Proposition]:
        t0 = time.perf_counter()
        found = list(
            rules_extract(
                text, speaker=speaker, catalog=self.catalog, segments=segments, commands=commands, earlier=earlier
            )
        )
        details: dict[str, Any] = {"rules": len(found)}
        llm = self._llm()
        if llm is not None:
            kept_text = " … ".join(text[a:b] for a, b in segments)
            try:
                result = extract_with_model(
                    llm,
                    text,
                    speaker=speaker,
                    event_date=occurred_at,
                    today=datetime.now(UTC),
                    predicates=[(s.name, s.label) for s in self.catalog],
                    known=known,
                    timeout_s=self.settings.llm.timeout_s,
                )
            except ModelUnavailable as exc:
                out.warnings.append(model_error_text(exc))
                details["model"] = {"error": exc.message, "fallback": "rules"}
            except ExtractionError as exc:
                # valid JSON of the wrong shape: the rules' facts stand and the event is done — retrying would ask
                # the same model the same question
                out.warnings.append(f"the model's answer was not usable ({exc.message}), used the rule path")
                if isinstance(llm, GuardedLLM):
                    llm.note_error(f"unusable answer: {exc.message}")
                details["model"] = {"error": exc.message, "fallback": "rules", "name": llm.name}
            else:
                gated: list[Proposition] = []
                gate_notes: list[dict[str, Any]] = []
                for prop in result.propositions:
                    judged = gate(text, prop, speaker)
                    if judged.notes:
                        gate_notes.append({"proposition": _prop_dict(prop), "gates": list(judged.notes)})
                    if judged.proposition is not None:
                        gated.append(judged.proposition)
                seen = {(p.subject.casefold(), normalise_object(p.object)) for p in found}
                added = [p for p in gated if (p.subject.casefold(), normalise_object(p.object)) not in seen]
                found.extend(added)
                out.extractor = llm.name
                out.prompt_hash = result.prompt_hash
                details["model"] = {
                    "name": llm.name,
                    "accepted": len(result.propositions),
                    "added": len(added),
                    "rejected": [{"item": i, "reason": r} for i, r in result.rejected],
                    "gates": gate_notes,
                    "segments": kept_text[:200],
                }
        if out.role in ("assistant", "tool"):
            # First person in an assistant's turn is the assistant talking about itself: not a memory (whichever
            # extractor read it).
            about_itself = [p for p in found if p.subject == speaker]
            if about_itself:
                details["about_the_speaker"] = [_prop_dict(p) for p in about_itself]
            found = [p for p in found if p.subject != speaker]
        summary = f"{len(found)} propositions" + (f" (model: {out.extractor})" if llm is not None else " (rules)")
        details["propositions"] = [_prop_dict(p) for p in found]
        out.traces.append(StageTrace("extract", summary, details, _ms(t0)))
        return found

    def _temporal(self, text: str, occurred_at: datetime, prefer: str = "past") -> list[TemporalMention]:
        try:
            return find_mentions(text, occurred_at, prefer="future" if prefer == "future" else "past")
        except Exception:  # time resolution must never cost a fact
            return []

    # -- 3 map -------------------------------------------------------------------------------------------------
    def _stage_map(self, out: Analysis, props: list[Proposition]) -> list[tuple[Proposition, str, str]]:
        t0 = time.perf_counter()
        mapped: list[tuple[Proposition, str, str]] = []
        unmapped: list[dict[str, str]] = []
        for prop in props:
            try:
                name, method = self.map_predicate(prop.predicate)
            except ValidationError as exc:  # a phrase no predicate name can be made from: drop it, visibly
                out.dropped.append((f"{prop.subject} {prop.predicate} {prop.object}", exc.message))
                unmapped.append({"raw": prop.predicate, "why": exc.message})
                continue
            mapped.append((prop, name, method))
        details: dict[str, Any] = {"mapping": [{"raw": p.predicate, "predicate": n, "method": m} for p, n, m in mapped]}
        if unmapped:
            details["unmapped"] = unmapped
        out.traces.append(StageTrace("map", f"{len(mapped)} mapped", details, _ms(t0)))
        return mapped

    def map_predicate(self, raw: str) -> tuple[str, str]:
        """A catalog predicate for ``raw``: exact, synonym/cue, nearest by embedding, else ``custom:<slug>``."""
        if raw in self.catalog:
            return raw, "exact"
        matched = self.catalog.match(raw)
        if matched is not None:
            return matched
        nearest = self._nearest_predicate(raw)
        if nearest is not None:
            return nearest, "embedding"
        return self.catalog.custom_slug(raw), "custom"

    def _nearest_predicate(self, raw: str) -> str | None:
        try:
            if self._predicate_index is None:
                texts = self.catalog.describe_texts()
                names = list(texts)
                self._predicate_index = (names, self.embedder.embed([texts[n] for n in names]))
            names, matrix = self._predicate_index
            if not names:
                return None
            query = self.embedder.embed([raw.replace("_", " ")])[0]
        except ModelUnavailable:
            return None  # the embedder is down: the phrase gets a custom predicate, as any unknown one does
        sims = matrix @ query
        best = int(np.argmax(sims))
        return names[best] if float(sims[best]) >= 0.6 else None

    # -- 4 gate ------------------------------------------------------------------------------------------------
    def _stage_gate(
        self, out: Analysis, mapped: list[tuple[Proposition, str, str]]
    ) -> list[tuple[Proposition, str, str, float, float]]:
        t0 = time.perf_counter()
        passed: list[tuple[Proposition, str, str, float, float]] = []
        decisions = []
        for prop, name, method in mapped:
            importance = self._importance(name)
            utility, why = _utility(prop, importance)
            if utility < params.GATE_MIN_UTILITY:
                out.dropped.append((f"{prop.subject} {name} {prop.object}", why))
                decisions.append(
                    {
                        "predicate": name,
                        "object": prop.object,
                        "utility": utility,
                        "pass": False,
                        "why": why,
                    }
                )
                continue
            decisions.append({"predicate": name, "object": prop.object, "utility": utility, "pass": True})
            passed.append((prop, name, method, importance, utility))
        out.traces.append(StageTrace("gate", f"{len(passed)} of {len(mapped)} pass", {"decisions": decisions}, _ms(t0)))
        return passed

    def _importance(self, name: str) -> float:
        if name in self.catalog:
            return float(self.catalog.get(name).importance)
        return params.CUSTOM_IMPORTANCE

    # -- 5 score -----------------------------------------------------------------------------------------------
    def _stage_score(
        self,
        out: Analysis,
        gated: list[tuple[Proposition, str, str, float, float]],
        *,
        role: str,
        author: str | None,
        source: str,
        mentions: list[TemporalMention],
        valid_time: datetime | None = None,
    ) -> list[Proposal]:
        t0 = time.perf_counter()
        proposals: list[Proposal] = []
        anchor = valid_time or out.occurred_at
        for prop, name, method, importance, utility in gated:
            spec = self.catalog.get(name) if name in self.catalog else None
            kind = kind_of(spec.kind if spec else "behavioral")
            decay = spec.decay if spec else "moderate"
            source_class = _source_class(role, author, prop.subject, out.speaker, source)
            conf = confidence(source_class, kind)
            when = prop.temporal or _mention_for(prop, mentions)
            valid_from = when.range.start.timestamp() if when else anchor.timestamp()
            valid_to = None
            if decay == "ephemeral":
                end = when.range.end if when and when.range.end > anchor else anchor
                valid_to = (end + timedelta(days=params.EPHEMERAL_VALID_DAYS)).timestamp()
            label = spec.label if spec else name.removeprefix("custom:").replace("_", " ").replace("-", " ")
            object_text = prop.object.strip().rstrip(".")
            statement = render_statement(prop.subject, label, object_text, when.range.start if when else None)
            proposals.append(
                Proposal(
                    proposition=prop,
                    subject=prop.subject,
                    predicate=name,
                    map_method=method,
                    object_text=object_text,
                    object_norm=normalise_object(object_text),
                    statement=statement,
                    kind=kind,
                    decay=decay,
                    cardinality=spec.cardinality if spec else "multi",
                    tier_hint=spec.tier_hint if spec else "warm",
                    importance=importance,
                    utility=utility,
                    source_class=source_class,
                    source_role="manual" if source == "manual" else role,
                    confidence=conf,
                    standing=standing_for(conf),
                    valid_from=valid_from,
                    valid_to=valid_to,
                    when=when,
                )
            )
        out.traces.append(
            StageTrace(
                "score",
                f"{len(proposals)} scored",
                {
                    "scores": [
                        {
                            "statement": p.statement,
                            "source": p.source_class,
                            "kind": p.kind,
                            "confidence": p.confidence,
                            "standing": p.standing,
                        }
                        for p in proposals
                    ]
                },
                _ms(t0),
            )
        )
        return proposals

    # -- 8 embed -----------------------------------------------------------------------------------------------
    def embed_batch(self, analyses: list[Analysis]) -> None:
        """Stages 1 and 8 for many analyses at once (one embedder call: batching is what makes ONNX fast)."""
        t0 = time.perf_counter()
        texts = [a.text for a in analyses]
        statements = [p.statement for a in analyses for p in a.proposals]
        vectors = self.embedder.embed(texts + statements)
        position = len(texts)
        for i, analysis in enumerate(analyses):
            analysis.text_vector = vectors[i]
            count = len(analysis.proposals)
            analysis.proposals = [_with_vector(p, vectors[position + j]) for j, p in enumerate(analysis.proposals)]
            position += count
            analysis.traces.append(
                StageTrace(
                    "embed",
                    f"text and {count} statements embedded (batch of {len(analyses)})",
                    {"embedder": self.embedder.model_id},
                    _ms(t0),
                )
            )

    def _stage_embed(self, out: Analysis) -> None:
        t0 = time.perf_counter()
        vectors = self._embed_or_warn(out, [p.statement for p in out.proposals])
        if vectors is None:
            out.traces.append(StageTrace("embed", "embedder unavailable: vectors queued", {}, _ms(t0)))
            return
        out.proposals = [_with_vector(p, vectors[i]) for i, p in enumerate(out.proposals)]
        out.traces.append(StageTrace("embed", f"{len(out.proposals)} statements embedded", {}, _ms(t0)))


def _with_vector(p: Proposal, vector: npt.NDArray[np.float32]) -> Proposal:
    return replace(p, vector=vector)


def _utility(prop: Proposition, importance: float) -> tuple[float, str]:
    """Stage 4: predicate importance discounted for weak objects."""
    obj = prop.object.strip().casefold()
    words = obj.split()
    if not words:
        return 0.0, "empty object"
    if obj == "*" and prop.negated:
        return importance, "ends every earlier value of the slot"
    if obj in _EMPTY_OBJECTS or (len(words) == 1 and words[0] in _EMPTY_OBJECTS):
        return 0.0, "the object says nothing on its own"
    if len(obj) > 200:
        return importance * 0.3, "object too long to be one fact"
    if prop.negated:
        return importance * 0.9, "negated"
    return importance, "ok"


def _source_class(role: str, author: str | None, subject: str, speaker: str, source: str) -> str:
    """S of the confidence formula: who is asserting, about whom."""
    if source == "manual":
        return "manual"
    if source.startswith("document"):
        return "document"
    if role in ("assistant", "tool"):
        return role
    if subject != speaker:
        return "third_party"
    return "group" if author else "user"


#: Predicates whose dates lie ahead of when they were said: a plan, a wish, a goal ("a trip in October").
FORWARD_PREDICATES = frozenset({"plans_to", "plans_to_visit", "wants", "goal", "career_goal"})


def _forward(prop: Proposition, text: str) -> bool:
    """True when what the proposition names lies ahead: a forward predicate, or a clause that makes a plan
    ("we are planning a climbing trip in October" is a present-tense clause about October to come)."""
    if prop.temporal is not None or prop.tense == "past":
        return False
    if prop.predicate in FORWARD_PREDICATES:
        return True
    # from the sentence's start: the clause a rule read may begin after the words that make it a plan
    end = prop.clause[1] if prop.clause is not None else prop.evidence.end
    return PLAN_RE.search(text, min(prop.evidence.start, end), end) is not None


def _dated(
    prop: Proposition, past: list[TemporalMention], ahead: list[TemporalMention], occurred_at: datetime, text: str
) -> Proposition:
    """A proposition dated by its own clause's time expression alone (or left undated), resolved in the direction
    the clause points; a plan without a known clause is dated by the expression in its sentence, read forward."""
    if prop.temporal is not None:
        return prop
    forward = _forward(prop, text)
    if prop.clause is None:
        ev = prop.evidence
        if not forward:
            # no clause read: the expression in the evidence, in the direction its tense points ("we're shifting
            # to Nelson on the 1st of November", said in October: the coming one, the nearer of the two)
            return replace(prop, temporal=pick((ev.start, ev.end), prop.tense or "present", past, ahead, occurred_at))
        inside = [m for m in ahead if m.start >= ev.start and m.end <= ev.end]
        return replace(prop, temporal=inside[0]) if inside else prop
    if not forward:
        return replace(prop, temporal=pick(prop.clause, prop.tense, past, ahead, occurred_at))
    best = pick(prop.clause, "future", past, ahead, occurred_at)
    if best is not None and best.range.end <= occurred_at:  # a plan's month is the one to come, however near the last
        best = next((m for m in ahead if (m.start, m.end) == (best.start, best.end)), best)
    return replace(prop, temporal=best)


def _mention_for(prop: Proposition, mentions: list[TemporalMention]) -> TemporalMention | None:
    """The time expression inside the proposition's evidence (for extractors that do not say which clause)."""
    if prop.clause is not None:
        return None
    ev = prop.evidence
    inside = [m for m in mentions if m.start >= ev.start and m.end <= ev.end]
    if inside:
        return inside[0]
    return None


def _prop_dict(p: Proposition) -> dict[str, Any]:
    return {
        "subject": p.subject,
        "predicate": p.predicate,
        "object": p.object,
        "evidence": p.evidence.text,
        "start": p.evidence.start,
        "end": p.evidence.end,
        "negated": p.negated,
        "change": p.change_cue,
        "rule": p.rule,
        "extractor": p.extractor,
    }


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 3)
