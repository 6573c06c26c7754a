"""Work: roles and employers, and their changes.

"I'm a UX designer at Zalando", "im an icu nurse in st james's", "Co-founder and COO at Parcelwise", "she's a
nurse at grady", "works for the Métropole de Lyon", "I quit Zalando", "last day at greenlight is jan 30", "start
at mailchimp monday feb 2", "GOT THE JOB at hola coffee", "they promoted me to audit manager", "I'm now director of
sales", "opened my own practice: Ribeiro Advocacia", "moved from icu to the emergency department".

Leaving an employer is a negated ``works_at`` (it retracts the stored one); joining one, being promoted or hired,
or a role said with "now" is a change of the slot.  A start still ahead is dated to when it begins.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from engine.facts.catalog import Catalog
from engine.facts.rules.life.common import (
    LATER_START_RE,
    MONTH_WORD,
    WEEKDAY_WORD,
    ctx_at,
    lowercase_writer,
    make,
    read_name,
    speaker_ctx,
    words_of,
)
from engine.facts.rules.life.people import resolve_pronoun
from engine.facts.rules.life.words import ROLE_HEADS, ROLE_MODIFIERS_STOP
from engine.facts.rules.model import Found, Sentence

_HEADS = "|".join(sorted((re.escape(h) for h in ROLE_HEADS), key=len, reverse=True))
#: A sentence runs the role pattern only when it names a job title (or its plural).
_ROLE_GATE = frozenset(ROLE_HEADS) | frozenset(f"{h}s" for h in ROLE_HEADS)
#: Words without which a sentence says nothing about work.
_WORK_WORDS = _ROLE_GATE | frozenset(
    """work works worked working quit quitting left leaving resigned resigning resign retired fired laid last start
    starts started starting join joined joining job hired accepted promoted appointed department dept ward unit team
    notice resignation new own owns co-own co-owns run runs opened open opening founded have has focus specialise
    specialize specialised specialized taken took landed found made boss manager supervisor lead report reports
    reporting sup supe living bakery salon clinic restaurant shop cafe café workshop garage
    driving teaching coaching tutoring nursing designing translating cleaning bartending waitressing
    farming plumbing programming lecturing retiring retire""".split()
)
#: "<lead> (a|an|the) <role> [at|in|for <org>]"
#: A word that may stand before a job title's head ("UX", "senior backend", "self-employed"): not a function word.
_ROLE_WORD = (
    r"(?!(?:is|are|was|were|am|be|been|not|no|never|my|your|his|her|our|their|the|a|an|i|i['’]m|im|he|she|we|"
    r"they|you|it|and|or|but|to|of|for|in|at|with|on|as|so|that|this|who|which|time|first)\b)[\w&/.'’-]+"
)
_ROLE_RE = re.compile(
    r"(?P<lead>(?:\b(?:i['’]?m|im|i\s+am|i\s+was|i['’]ve\s+been|i\s+have\s+been|been|am|is|are|was|were|"
    r"(?:he|she)['’]?s|['’]s|['’]re|as|became|become|becoming|promoted\s+(?:me\s+)?to|now)"
    r"|[,(—–-]|\band|(?<![\w'’-]))\s*(?:(?:now|still|currently|also|actually|officially|just|already|basically|"
    r"technically|finally|not|no\s+longer|never)\s+)*)(?:(?:an?|the)\s+)?"
    r"(?P<role>(?:" + _ROLE_WORD + r"\s+){0,4}?(?:" + _HEADS + r")s?)(?![\w-])(?P<tail>\s+of\s+[\w-]+)?",
    re.IGNORECASE,
)
#: "works as a nurse", "hired as …": "as" names a role only after words of working.
_AS_A_JOB_RE = re.compile(r"\b(?:work|works|working|worked|job|hired|employed)\b", re.IGNORECASE)
_MORE_HEAD_RE = re.compile(
    r"(?:\s+and(?:\s+an?)?)?(?:\s+" + _ROLE_WORD + r"){0,2}?\s+(?:" + _HEADS + r")s?(?![\w-])", re.IGNORECASE
)
#: After a role that opens a verbless fragment: what may follow it ("Doctor told me" is not a role).
_FRAGMENT_FOLLOW_RE = re.compile(r"\s*(?:[,.(;:!—–-]|$|(?:at|in|for|with|and|since|from)\b)", re.IGNORECASE)
_WORK_RE = re.compile(
    r"\b(?P<verb>work|works|worked|working)\s+(?:(?:full[- ]time|part[- ]time|remotely|remote|"
    r"\d+\s+(?:weeks|months|years|days)|now|still|currently|there)\s+)*"
    r"(?:as\s+(?:an?\s+)?(?P<role>[\w\s-]{2,40}?)\s+)?(?P<prep>at|for|with|in)\s+",
    re.IGNORECASE,
)
_LEAVE_RE = re.compile(
    r"(?<!\bback\s)(?<!\bthe\s)(?<!\bmy\s)(?<!\bhis\s)(?<!\bher\s)(?<!\byour\s)(?<!\bon\s)\b(?P<verb>quit|quitting|left|leaving|resigned\s+from|resigning\s+from|resign\s+from|retired\s+from|"
    r"fired\s+from|laid\s+off\s+from|(?:(?:my|our)\s+)?last\s+day\s+(?:was\s+|is\s+|will\s+be\s+)?at)\s+"
    r"(?:my\s+job\s+at\s+)?",
    re.IGNORECASE,
)
_JOIN_RE = re.compile(
    r"\b(?P<verb>start|starts|started|starting|joined|joining|join|"
    r"(?:got|taken|took|landed|accepted|found)\s+(?:the|a|my\s+new|a\s+new|an?\s+)\s*(?:new\s+)?(?:job|position|role|offer)|"
    r"new\s+job|hired)"
    r"(?P<gap>(?:\s+[\w]+){0,3}?)\s+(?:at|with|by)\s+",
    re.IGNORECASE,
)
_ACCEPTED_RE = re.compile(
    r"\b(?:(?:i['’]ve|i\s+have|i)\s+accepted|(?:i['’]ve|i\s+have|i|we|he|she|just)\s+joined|joined)\s+(?=(?-i:[A-Z]))",
    re.IGNORECASE,
)
#: "I got offer to be in-house translator at Qazaq Minerals", "got a job offer from Nine Lanterns"
_OFFER_RE = re.compile(
    r"\b(?:got|received|get|have|had)\s+(?:an?\s+|the\s+|their\s+)?(?:job\s+|formal\s+|official\s+)?offer\s+"
    r"(?:to\s+(?:be|join\s+as|work\s+as)\s+(?:an?\s+|the\s+)?(?P<role>[\w\s-]{2,40}?)\s+)?(?:at|from|with)\s+",
    re.IGNORECASE,
)
#: "taking the kaimana job", "I'll take the Deloitte offer", "accepted the Souqly position"
_TAKING_JOB_RE = re.compile(
    r"\b(?:taking|took|i['’]ll\s+take|i\s+will\s+take|accepting|accepted|going\s+with|got|landed)\s+the\s+"
    r"(?P<org>(?:(?!new\b|other\b|first\b|second\b|second\b|better\b|remote\b)[\w&'’.-]+\s+){1,3}?)"
    r"(?:job|offer|position|role)\b",
    re.IGNORECASE,
)
_OFFERED_RE = re.compile(
    r"\b(?:offered|offer\s+(?:of|to\s+be|as)|interview\w*\s+for|applied\s+for|applying\s+for)\b", re.IGNORECASE
)
#: The offer taken, said anywhere in the message.
_SAID_YES_RE = re.compile(
    r"\b(?:i\s+(?:already\s+|just\s+)?(?:said\s+yes|accepted|signed|took\s+it)|i['’]?m\s+taking\s+it|"
    r"i\s+(?:already\s+|just\s+)?accepted\s+(?:it|the\s+offer))\b",
    re.IGNORECASE,
)
_NOTICE_RE = re.compile(
    r"\b(?:handed\s+in|gave|give|giving|put\s+in)\s+(?:my|in\s+my)\s+(?:notice|resignation)(?:\s+(?:at|to)\s+)?",
    re.IGNORECASE,
)
_NEW_JOB_RE = re.compile(r"\b(?:my|a|the)\s+new\s+(?:job|role|position)\s+(?:at|with)\s+", re.IGNORECASE)
_PROMOTED_RE = re.compile(
    r"\b(?:promoted|hired|appointed|made)\s+(?:me\s+)?(?:as\s+|to\s+)(?:an?\s+|the\s+)?", re.IGNORECASE
)
_DEPT_RE = re.compile(
    r"\b(?:in|to|into|at)\s+(?:the\s+)?(?P<dept>(?:[\w&-]+\s+){0,3}?(?:department|dept|ward|unit|team))\b",
    re.IGNORECASE,
)
_BUSINESS_GATE = frozenset(
    """izakaya restaurant cafe café coffee shop bakery bar pub garage practice firm studio company business startup
    start-up agency salon clinic store workshop truck farm consultancy""".split()
)
_BUSINESS_RE = re.compile(
    r"\b(?P<verb>have|has|own|owns|co-own|co-owns|run|runs|opened|open|opening|started|starting|founded)\s+"
    r"(?:(?:a|an|my|our)\s+)?(?:own\s+)?(?:(?:small|little|new|tiny)\s+)?"
    r"(?P<kind>(?:[\w-]+\s+)?(?:izakaya|restaurant|cafe|café|coffee\s+shop|shop|bakery|bar|pub|garage|practice|"
    r"firm|studio|company|business|startup|start-up|agency|salon|clinic|store|workshop|food\s+truck|farm|"
    r"consultancy))\b",
    re.IGNORECASE,
)
_NAMED_RE = re.compile(
    r"[^.;!?]{0,80}?(?:\b(?:called|named)\s+|\bname\s+is\s+|:\s*|,\s*(?=[A-Z\"“]))",
    re.IGNORECASE,
)
_FOCUS_RE = re.compile(
    r"\b(?:we|i)\s+(?:focus|specialise|specialize|specialised|specialized)\s+(?:on|in)\s+", re.IGNORECASE
)
_START_DATE_RE = re.compile(r"\b(?:start|starts|started|starting|start\s+date\s+is|from|join|joining)\b", re.IGNORECASE)
_WORK_PLACE_RE = re.compile(r"(?:\s*,\s*[^,.;!?()]{1,30}?)?\s*,?\s+(?:in|here\s+in)\s+(?=(?-i:[A-Z]))", re.IGNORECASE)
#: A new job said in the clause before a role ("I've taken a job with X as a site supervisor"): the role changes.
_NEW_JOB_CUE_RE = re.compile(
    r"\b(?:taken|took|accepted|got|landed|started|starting|joined|joining|hired|promoted)\b[^.;!?]{0,60}?\b(?:job|position|role|as)\b",
    re.IGNORECASE,
)
_SCHOOLISH_RE = re.compile(
    r"\b(?:university|college|school|academy|polytechnic|uni|institute\s+of\s+technology)\b", re.I
)
_ORG_NOUN_RE = re.compile(
    r"\s+(?:hospital|clinic|infirmary|school|college|university|bank|hotel|restaurant|cafe|café|bakery|pharmacy|"
    r"library|museum|council|ministry|agency|studio|garage|factory|plant|warehouse|store|shop|group|institute)\b",
    re.IGNORECASE,
)
_NOT_ORG = frozenset(
    """home work school uni university college class office night nights day days weekend weekends morning
    mornings the a an my our his her their it this that least all first once least""".split()
)
_PAST = frozenset("was were been worked left quit resigned retired".split())


def work(s: Sentence, catalog: Catalog) -> Iterator[Found]:  # noqa: C901 — a cascade of rules read top to bottom; not yet split
    """Roles, employers, departments, businesses and their changes in one sentence."""
    text, low = s.text, s.low
    words = words_of(low)
    if not words & _WORK_WORDS:
        return
    lower_ok = lowercase_writer(text)
    if words & _MANAGER_WORDS:
        yield from _managers(s, lower_ok)
    if "promot" in low or "hired" in low or "appointed" in low:
        yield from _promotions(s)
    if words & _ROLE_GATE:
        yield from _roles(s, lower_ok)
    if "work" in low:
        for m in _WORK_RE.finditer(text, s.start, s.end):
            yield from _works(s, m, lower_ok)
    if any(w in low for w in ("quit", "left", "leav", "resign", "retired from", "fired", "laid off", "last day")):
        for m in _LEAVE_RE.finditer(text, s.start, s.end):
            org = _org(text, m.end(), s.end, lower_ok)
            verb = m.group("verb").casefold()
            ctx = ctx_at(s, m.start(), time="future" if verb.startswith("leaving") else "past")
            if org is None or ctx is None or ctx.negated:
                continue
            if verb.startswith("quit") and _is_activity(org[0]):
                continue
            yield make(ctx, s, "works_at", org[0], "leave", end=org[1], negated=True, change=True)
    if "been" in words:
        yield from _doing_for_years(s, lower_ok)
    if "for a living" in low:
        yield from _for_a_living(s)
    if "'s " in low or "’s " in low or " her " in low or " his " in low:
        yield from _their_business(s)
    if "retir" in low:
        for m in _RETIRING_RE.finditer(text, s.start, s.end):
            ctx = ctx_at(s, m.start(), time="future")
            if ctx is None or ctx.negated or ctx.subject != s.speaker:
                continue
            found = make(ctx, s, "plans_to", "retire", "retiring", end=m.end(), time="future")
            last = _LAST_DAY_RE.search(text, m.end(), s.end)
            if last is not None and found.span is not None:
                # "I am retiring at the end of it, my last route is Friday June 5th": the last day dates it
                found = replace(found, span=(found.span[0], s.end))
            yield found
    if "offer" in low and _SAID_YES_RE.search(text) is not None:
        yield from _accepted_offer(s, lower_ok)
    if " job" in low or " offer" in low or " position" in low:
        for m in _TAKING_JOB_RE.finditer(text, s.start, s.end):
            ctx = ctx_at(s, m.start(), time="past")
            employer = m.group("org").strip()
            if ctx is None or ctx.negated or ctx.subject != s.speaker or employer.casefold() in _NOT_ORG:
                continue
            yield _dated_start(make(ctx, s, "works_at", employer, "taking.job", end=m.end("org"), change=True), s)
    if any(w in low for w in ("start", "join", "job", "hired", "accepted")):
        for m in _JOIN_RE.finditer(text, s.start, s.end):
            yield from _joined(s, m, lower_ok)
        for m in _ACCEPTED_RE.finditer(text, s.start, s.end):
            org = _org(text, m.end(), s.end, lower_ok)
            ctx = ctx_at(s, m.end(), time="past")
            if org is None or ctx is None or ctx.negated:
                continue
            predicate = "studies_at" if _SCHOOLISH_RE.search(org[0]) else "works_at"
            yield _dated_start(make(ctx, s, predicate, org[0], "accepted", end=org[1], change=True), s)
            role = re.compile(r"[^.;!?]{0,30}?\bas\s+(?:an?\s+)?").match(text, org[1], s.end)
            if role is not None and predicate == "works_at":
                r = _role_at(text, role.end(), s.end)
                if r is not None:
                    yield _dated_start(make(ctx, s, "works_as", r[0], "accepted.as", end=r[1], change=True), s)
    if "notice" in low or "resignation" in low:
        for m in _NOTICE_RE.finditer(text, s.start, s.end):
            ctx = ctx_at(s, m.start(), time="past")
            if ctx is None or ctx.negated:
                continue
            org = _org(text, m.end(), s.end, lower_ok) if m.group(0).rstrip().endswith(("at", "to")) else None
            if org is not None:
                yield make(ctx, s, "works_at", org[0], "notice", end=org[1], negated=True, change=True)
            yield make(ctx, s, "works_as", "*", "notice.role", end=m.end(), negated=True, change=True)
    if "new job" in low or "new role" in low or "new position" in low:
        for m in _NEW_JOB_RE.finditer(text, s.start, s.end):
            org = _org(text, m.end(), s.end, lower_ok)
            ctx = ctx_at(s, m.start())
            if org is None or ctx is None or ctx.negated:
                continue
            yield _dated_start(make(ctx, s, "works_at", org[0], "new-job", end=org[1], change=True), s)
    if any(w in low for w in ("department", "dept", "ward", " unit", " team")):
        for m in _DEPT_RE.finditer(text, s.start, s.end):
            ctx = ctx_at(s, m.start())
            window = text[max(s.start, m.start() - 80) : m.start()]
            if ctx is None or ctx.negated or not re.search(r"\b(?:work|moved|transferred|switched)", window, re.I):
                continue
            dept = m.group("dept")
            changed = bool(re.search(r"\b(?:moved|transferred|switched)\b", window, re.I))
            yield make(
                ctx,
                s,
                "works_in_department",
                dept,
                "department",
                end=m.end(),
                change=changed,
                time="past" if changed else ctx.time,
            )
    if words & _BUSINESS_GATE:
        for m in _BUSINESS_RE.finditer(text, s.start, s.end):
            yield from _business(s, m, lower_ok)
    if "focus" in low or "speciali" in low:
        for m in _FOCUS_RE.finditer(text, s.start, s.end):
            ctx = ctx_at(s, m.start())
            field = _field(text, m.end(), s.end)
            if ctx is not None and field is not None and not ctx.negated:
                yield make(ctx, s, "works_in_field", field[0], "focus", end=field[1])


def _promotions(s: Sentence) -> Iterator[Found]:
    """ "they promoted me to audit manager, from 1 December", "I am hired as junior accountant"."""
    text = s.text
    for m in _PROMOTED_RE.finditer(text, s.start, s.end):
        role = _role_at(text, m.end(), s.end)
        if role is None:
            continue
        me = re.search(r"\bme\b", m.group(0), re.IGNORECASE) is not None
        ctx = speaker_ctx(s, m.start(), "past") if me else ctx_at(s, m.start(), time="past")
        if ctx is None or ctx.negated:
            continue
        yield _dated_start(make(ctx, s, "works_as", role[0], "promoted", end=role[1], change=True), s)


def _roles(s: Sentence, lower_ok: bool) -> Iterator[Found]:  # noqa: C901 — a cascade of rules read top to bottom; not yet split
    text = s.text
    for m in _ROLE_RE.finditer(text, s.start, s.end):
        lead = m.group("lead").strip().casefold()
        role = _clean_role(m.group("role"))
        if role is None:
            continue
        role_text, role_start = role
        start_abs = m.start("role") + role_start
        end = m.end("role")
        more = _MORE_HEAD_RE.match(text, end, s.end)
        if more is not None and _clean_role(text[start_abs : more.end()].replace(" and ", " ")) is not None:
            end = more.end()  # "lead designer", "senior backend engineer"
        if m.group("tail") and end == m.end("role"):
            end = m.end("tail")
        role_text = text[start_abs:end]
        bare = lead.split()[0] if lead.split() else ""
        if bare in ("", ",", "(", "—", "–", "-", "and"):
            if not _fragment_start(text, s.start, m.start("role"), bare):
                continue
            if not _FRAGMENT_FOLLOW_RE.match(text, end, s.end) or role_text.split()[0].casefold().endswith("ing"):
                continue
        time = "past" if any(w in lead.split() for w in _PAST) or lead.startswith(("i was", "i've been")) else "present"
        if time == "past" and _still(lead, text, end, s.end):
            time = "present"  # "been a journeyman electrician at lakeshore electric 12 yrs": and still is
        ctx = ctx_at(s, start_abs, time=time)  # type: ignore[arg-type]
        if ctx is None or (bare == "as" and not _AS_A_JOB_RE.search(text, ctx.start, m.start())):
            continue
        if (ctx.person is not None and ctx.person.is_pet) or ctx.planned or ctx.time == "future":
            continue  # "I want to become a pilot" is a goal, left to the goal rules
        if _OFFERED_RE.search(text, max(s.start, start_abs - 30), end):
            continue  # "got offered ocean education coordinator at …": an offer, not the job
        head = role_text.split()[-1].casefold()
        if head in ("student",):
            continue
        change = (
            "now" in lead.split()
            or bool(re.search(r"\bnow\b", text[end : end + 12], re.I))
            or bare in ("promoted", "became", "become")
            or bool(_NEW_JOB_CUE_RE.search(text, ctx.start, m.start("role")))
            or bool(_SINCE_DATE_RE.search(text, end, min(s.end, end + 60)))
        )
        predicate = "previous_job" if time == "past" and not ctx.negated else "works_as"
        org = None
        after = re.match(
            r"(?:\s+(?-i:[a-zà-ÿ]+))?\s*(?:\([^)]{0,40}\)\s*)?(?:,\s*)?(?:for\s+(?:\d+|a\s+few|many|several|two|three|\w+)\s+"
            r"(?:years?|months?)\s+)?(?P<prep>at|in|for|with)\s+",
            text[end : s.end],
        )
        if after is not None:
            org = _org(text, end + after.end(), s.end, lower_ok)
        found_role = make(ctx, s, predicate, role_text, "role", end=end, change=change and predicate == "works_as")
        if org is not None and predicate == "previous_job":
            found_role = replace(found_role, object=f"{role_text} in {org[0]}")
        yield _dated_start(found_role, s) if change else found_role
        if (
            org is not None
            and after is not None
            and _a_town(after.group("prep"), org[0], text[end : org[1]])
            and (
                ctx.subject != s.speaker
                or _FREELANCE_RE.search(role_text) is not None
                or _EMPLOYER_ELSEWHERE_RE.search(text, org[1], s.end) is not None
            )
        ):
            # "a midwife in Wellington", "freelance translator in Almaty": where, not who employs them
            if predicate == "works_as" and not ctx.negated:
                yield make(ctx, s, "located_in", org[0], "role.town", end=org[1])
            org = None
        if org is not None and predicate == "works_as" and not ctx.negated and not _is_place_word(org[0]):
            group = re.search(r"\b(?:band|choir|orchestra|club|team|group)\b", text[end : org[1]], re.I)
            employer = make(ctx, s, "member_of" if group else "works_at", org[0], "role.at", end=org[1], change=change)
            yield _dated_start(employer, s) if change else employer
            where = _WORK_PLACE_RE.match(text, org[1], s.end)
            if where is not None and ctx.subject == s.speaker:
                place = read_name(text, where.end(), s.end, lowercase_ok=False, max_words=3)
                if place is not None:
                    # "an associate at Azevedo & Lins, labor law, in Curitiba": where the speaker works
                    yield replace(
                        make(ctx, s, "located_in", place[0], "role.in", end=place[1]), span=(where.start(), place[1])
                    )


_MANAGER_WORDS = frozenset("boss manager supervisor lead report reports reporting sup supe".split())
_NOT_A_BOSS = frozenset(
    """is was says said thinks wants will would and but so the a an at in on of for to who that this it he she they
    lol haha just also really""".split()
)
_BOSS = (
    r"(?:(?:line|team|direct|project|store|shift|section|ward|practice|department|dept)\s+)?"
    r"(?:boss|manager|supervisor|lead|sup|supe)"
)
#: "my boss Dave", "our new team lead, Lina", "my manager will be Gulnara Sadykova", "new manager Clare is lovely"
_MY_BOSS_RE = re.compile(
    r"\b(?:(?P<my>my|our|me)\s+|(?=new\s))(?P<new>(?:new|current)\s+)?"
    + _BOSS
    + r"(?:\s*,\s*|\s+(?:will\s+be|is(?:\s+now)?|now\s+is)\s+|\s+)",
    re.IGNORECASE,
)
#: "Clare is my new manager", "Priya's my boss now"
_IS_MY_BOSS_RE = re.compile(
    r"\s+(?:is|['’]s)\s+(?:now\s+)?(?:my|our)\s+(?P<new>(?:new|current)\s+)?" + _BOSS + r"\b", re.IGNORECASE
)
#: "I report to Priya", "now reporting directly to Tom"
_REPORT_TO_RE = re.compile(r"\b(?:i\s+(?:now\s+)?|now\s+)?report(?:s|ing)?\s+(?:directly\s+)?to\s+", re.IGNORECASE)


def _managers(s: Sentence, lower_ok: bool) -> Iterator[Found]:
    """Who the speaker reports to (``has_manager``, one at a time): "my boss Dave", "new manager Clare is lovely",
    "my manager will be Gulnara Sadykova", "Clare is my new manager", "I report to Priya".  "new" (and "will be",
    "now") says the manager changed, so the last one is superseded rather than set against this one."""
    text = s.text
    for m in _MY_BOSS_RE.finditer(text, s.start, s.end):
        name = read_name(text, m.end(), s.end, lowercase_ok=lower_ok, max_words=1 if lower_ok else 3)
        if name is None or not (name[0][:1].isupper() or lower_ok) or name[0].casefold() in _NOT_A_BOSS:
            continue
        if m.group("my") and m.group("my").casefold() == "me" and not lower_ok:
            continue  # "me manager kev": the possessive "me" of casual writing only
        ctx = speaker_ctx(s, m.start()) if m.group("my") else ctx_at(s, m.start())
        if ctx is None or ctx.negated or ctx.subject != s.speaker:
            continue
        change = bool(m.group("new")) or bool(re.search(r"\b(?:will\s+be|now)\b", m.group(0), re.IGNORECASE))
        yield make(ctx, s, "has_manager", name[0], "manager", end=name[1], change=change)
    for m in _IS_MY_BOSS_RE.finditer(text, s.start, s.end):
        before = text[max(s.start, m.start() - 40) : m.start()]
        who = re.search(r"(?:^|[\s,(])((?-i:[A-Z][\w'’-]+)(?:\s+(?-i:[A-Z][\w'’-]+))?)$", before)
        if who is None:
            continue
        ctx = speaker_ctx(s, m.start())
        if ctx is None or ctx.negated:
            continue
        change = bool(m.group("new")) or "now" in m.group(0).casefold()
        yield make(ctx, s, "has_manager", who.group(1), "manager.is", end=m.end(), change=change)
    for m in _REPORT_TO_RE.finditer(text, s.start, s.end):
        name = read_name(text, m.end(), s.end, lowercase_ok=lower_ok, max_words=3)
        if name is None:
            continue
        ctx = ctx_at(s, m.start())
        if ctx is None or ctx.negated or ctx.subject != s.speaker:
            continue
        yield make(ctx, s, "has_manager", name[0], "report.to", end=name[1], change="now" in m.group(0).casefold())


#: "I am Export Manager at Shavi Kvavi since 1 September": a job held since a date is a job that began then
_SINCE_DATE_RE = re.compile(
    r"\bsince\s+(?:the\s+)?(?:\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?"
    + MONTH_WORD
    + r"|"
    + MONTH_WORD
    + r"\.?(?:\s+\d{1,2})?|last\s+(?:week|month|"
    + WEEKDAY_WORD
    + r")|"
    + WEEKDAY_WORD
    + r")\b",
    re.IGNORECASE,
)


def _fragment_start(text: str, sentence_start: int, pos: int, lead: str) -> bool:
    """A verbless fragment that opens with a role ("Self-employed carpenter, based in Fana", "Co-founder and COO
    at Parcelwise") or an apposition after "I'm 64," / "and an audit senior at …"."""
    before = text[sentence_start:pos].strip().casefold()
    before = re.sub(r"^(?:(?:ok|okay|so|and|also|well|update|btw|plus|anyway)\b[\s,:!]*)+", "", before)
    if not before or before in ("an", "a", "the"):
        return True
    if lead in (",", "—", "–", "-") and re.search(r"\b(?:i['’]?m|im|i\s+am)\s+\d+\s*[,—–-]?\s*(?:an?|the)?$", before):
        return True
    return bool(
        lead == "and" and re.search(r"\b(?:i['’]?m|im|i\s+am)\s+an?\s+[^,.;]{2,80}\band\s+(?:an?|the)?$", before)
    )


def _clean_role(raw: str) -> tuple[str, int] | None:
    """Drop leading words that are not part of a job title ("so excited to be the …", "hired as …"); None when
    nothing job-like remains."""
    words = raw.split()
    offset = 0
    if "as" in (w.casefold() for w in words[:-1]):
        cut = max(i for i, w in enumerate(words[:-1]) if w.casefold() == "as")
        for w in words[: cut + 1]:
            offset = raw.index(w, offset) + len(w)
        words = words[cut + 1 :]
    while words and (words[0].casefold() in ROLE_MODIFIERS_STOP or words[0].casefold().endswith(("ly",))):
        offset = raw.index(words[0], offset) + len(words[0])
        words = words[1:]
    if not words:
        return None
    start = raw.index(words[0], offset)
    if any(w.casefold() in _NOT_IN_ROLES for w in words):
        return None
    value = " ".join(words)
    return value, start


_NOT_IN_ROLES = frozenset(
    """my your his her our their a an the i me you he she we they it is are was were am be been not no never
    have has had do does did will would can could to in at for with from on and but or so if when who which
    that this these those""".split()
)


def _role_at(text: str, pos: int, end: int) -> tuple[str, int] | None:
    m = re.compile(r"(?P<role>(?:[\w&/.'’-]+\s+){0,4}?(?:" + _HEADS + r")s?)(?![\w-])(?:\s+of\s+[\w-]+)?", re.I).match(
        text, pos, end
    )
    if m is None:
        return None
    cleaned = _clean_role(m.group("role"))
    if cleaned is None:
        return None
    return text[pos + cleaned[1] : m.end()], m.end()


#: How long something has lasted: "for 5 yrs", "12 years", "since 2019", "for a while now".
_LASTING_RE = re.compile(
    r"\b(?:for\s+(?:\d+|a\s+few|a\s+couple(?:\s+of)?|many|several|some|two|three|four|five|six|seven|eight|nine|ten|"
    r"\w+teen|twenty|thirty)\s+(?:yrs?|years?|months?|decades?)|\d+\s*(?:\+\s*)?(?:yrs?|years?|months?)(?!\s+(?:ago|old|back))"
    r"|since\s+(?:19|20)\d\d|since\s+(?:i\s+was|uni|college|school|graduat\w*))\b",
    re.IGNORECASE,
)
#: A duration that closes an employer's name read from lower-case text ("lakeshore electric 12 yrs").
_TRAILING_LASTING_RE = re.compile(r"\s+(?:for\s+)?\d+\s*(?:yrs?|years?|months?)$", re.IGNORECASE)


def _still(lead: str, text: str, role_end: int, end: int) -> bool:
    """Present perfect with a duration: "I've been a nurse for 6 years", "been a ranger with DOC here 5 yrs" — the
    job goes on.  "I was a nurse for 6 years" and "I've been a nurse" without a duration stay in the past."""
    perfect = "been" in lead.split() and not {"was", "were"} & set(lead.split())
    return perfect and _LASTING_RE.search(text, role_end, min(end, role_end + 90)) is not None


def _org(text: str, pos: int, end: int, lower_ok: bool) -> tuple[str, int] | None:
    """An employer's name at ``pos``: "Zalando", "the Métropole de Lyon", "st james's", "a small product studio
    here in Lisbon called Tidewater" → "Tidewater", "a pharmacy in the Croix-Rousse" → "pharmacy in the
    Croix-Rousse"."""
    m = re.compile(r"\s*(?:the\s+)(?=[A-Z])").match(text, pos, end)
    if m:
        pos = m.end()
    np = re.compile(r"\s*(?:an?|the|my|our)\s+(?P<np>(?:[\w-]+\s+){0,4}?[\w-]+)").match(text, pos, end)
    if np is not None:
        named = re.compile(r"[^.;!?—]{0,60}?\b(?:called|named)\s+").match(text, np.end(), end)
        if named is not None:
            return read_name(text, named.end(), end, lowercase_ok=lower_ok, max_words=4)
        there = re.compile(r"\s+(?:in|at)\s+(?:the\s+)?(?=[A-Z])").match(text, np.end(), end)
        if there is not None:
            place = read_name(text, there.end(), end, lowercase_ok=False, max_words=3)
            if place is not None:
                return text[np.start("np") : place[1]], place[1]
        return None
    found = read_name(text, pos, end, lowercase_ok=lower_ok, max_words=5)
    if found is not None and _TRAILING_LASTING_RE.search(found[0]):
        name = _TRAILING_LASTING_RE.sub("", found[0])
        found = (name, pos + text[pos:end].find(name) + len(name)) if name else None
    if found is None or found[0].casefold() in _NOT_ORG or _is_activity(found[0]):
        return None
    kind = _ORG_NOUN_RE.match(text, found[1], end)
    if kind is not None:  # "St Mary's hospital", "Leeds general infirmary"
        return text[pos : kind.end()].strip(), kind.end()
    return found


def _is_activity(value: str) -> bool:
    first = value.split()[0].casefold()
    return first.endswith("ing") or first in ("smoking", "drinking", "coffee", "alcohol", "sugar", "meat")


_ORG_WORD_RE = re.compile(
    r"\b(?:inc|ltd|llc|gmbh|plc|corp|co|company|group|bank|hospital|clinic|school|university|college|studio|agency|"
    r"council|ministry|department|firm|partners|labs?|technologies|tech|systems|solutions|consulting|foundation)\b",
    re.IGNORECASE,
)


_FREELANCE_RE = re.compile(r"\b(?:freelanc\w*|self[- ]employed|independent|retired|contract)\b", re.IGNORECASE)
#: "…, I work at Studio Baroni Ruffino": the employer is named apart, so "architect in Turin" names a town.
_EMPLOYER_ELSEWHERE_RE = re.compile(r"\b(?:i\s+work|working|employed)\s+(?:at|for|with)\s+(?-i:[A-Z])", re.IGNORECASE)


def _a_town(prep: str, name: str, between: str) -> bool:
    """Whether "<role> in <Name>" may name a place rather than an employer: "in" and a capitalised name with no
    word of an organisation ("in Almaty", not "in St James's hospital").  Alone it cannot tell ("structural engineer
    in Budimex" is an employer): the caller asks for a second sign — a freelancer, someone else's job (what the
    user knows of it is where), or the employer named apart in the sentence."""
    return (
        prep.casefold() == "in"
        and "the " not in between.casefold()
        and name[:1].isupper()
        and _ORG_WORD_RE.search(name) is None
        and _ORG_NOUN_RE.search(" " + name) is None
    )


def _is_place_word(value: str) -> bool:
    return value.casefold() in ("here", "there", "home", "town", "the city")


def _works(s: Sentence, m: re.Match[str], lower_ok: bool) -> Iterator[Found]:
    text = s.text
    verb = m.group("verb").casefold()
    time = "past" if verb == "worked" else "present"
    ctx = ctx_at(s, m.start(), time=time)  # type: ignore[arg-type]
    if ctx is None or (ctx.person is not None and ctx.person.is_pet):
        return
    prep = m.group("prep").casefold()
    if prep == "in" and re.match(
        r"\s*(?:sales|marketing|finance|tech|it|hr|retail|education|healthcare|law|construction|logistics|insurance|banking|hospitality|research|design|media|software|accounting)\b",
        text[m.end() :],
        re.I,
    ):
        field = re.match(r"\s*([\w-]+)", text[m.end() :])
        assert field is not None
        yield make(ctx, s, "works_in_field", field.group(1), "work.in", end=m.end() + field.end())
        at = re.compile(r"\s+(?:at|for)\s+").match(text, m.end() + field.end(), s.end)
        if at is None:
            return
        org = _org(text, at.end(), s.end, lower_ok)
        if org is not None:
            yield make(ctx, s, "worked_at" if time == "past" else "works_at", org[0], "work.at", end=org[1])
            tail = re.compile(r"\s*,\s*").match(text, org[1], s.end)
            if tail is not None:
                role = _role_at(text, tail.end(), s.end)
                if role is not None:
                    yield make(ctx, s, "works_as", role[0], "work.as", end=role[1])
        return
    org = _org(text, m.end(), s.end, lower_ok)
    if org is None:
        return
    change = bool(re.search(r"\b(?:now|since)\b", text[s.start : org[1]], re.I))
    predicate = "worked_at" if time == "past" and not ctx.negated else "works_at"
    yield make(ctx, s, predicate, org[0], "work", end=org[1], change=change)
    if m.group("role"):
        role = _clean_role(m.group("role"))
        if role is not None:
            yield make(ctx, s, "previous_job" if time == "past" else "works_as", role[0], "work.as", end=m.end("role"))


def _joined(s: Sentence, m: re.Match[str], lower_ok: bool) -> Iterator[Found]:
    text = s.text
    verb = m.group("verb").casefold()
    gap = (m.group("gap") or "").strip()
    if gap and not re.fullmatch(r"(?:\w+\s*){0,3}", gap):
        return
    org = _org(text, m.end(), s.end, lower_ok)
    if org is None:
        return
    time = (
        "past"
        if verb.endswith("ed")
        or verb.startswith(("got", "accepted", "taken", "took", "landed", "found"))
        or verb == "hired"
        else "present"
    )
    ctx = ctx_at(s, m.start(), time=time)  # type: ignore[arg-type]
    if ctx is None or ctx.negated or (ctx.person is not None and ctx.person.is_pet):
        return
    if verb.startswith(("start", "join")) and gap and not _looks_like_time(gap):
        return  # "started a project at …"
    role = re.compile(r"\s+as\s+(?:an?\s+)?").match(text, org[1], s.end)
    if role is None and _SCHOOLISH_RE.search(org[0]):
        # "My daughter Ella just started at Leeds University": a student, unless a role says otherwise
        yield _dated_start(make(ctx, s, "studies_at", org[0], "join.school", end=org[1], change=True), s)
        return
    found = make(ctx, s, "works_at", org[0], "join", end=org[1], change=True)
    own = _OWN_CLAUSE_RE.search(text, ctx.start, m.start())
    if own is not None and found.span is not None:
        # "my last day at Fintrack is Tuesday and I start at Souqly on 5 October": the start's own clause dates it
        found = replace(found, span=(own.end(), found.span[1]))
    yield _dated_start(found, s)
    if role is not None:
        r = _role_at(text, role.end(), s.end)
        if r is not None:
            yield _dated_start(make(ctx, s, "works_as", r[0], "join.as", end=r[1], change=True), s)


#: "… and I start at …": a clause of its own begins at the subject, though "and I" usually joins subjects
_OWN_CLAUSE_RE = re.compile(r"\s(?:and|&|n)\s+(?=(?:i|we)\s+(?:(?:will|just|then|now|officially)\s+)?$)", re.I)


def _looks_like_time(gap: str) -> bool:
    return bool(
        re.fullmatch(
            r"(?:(?:on|in|this|next|last|today|monday|tuesday|wednesday|thursday|friday|saturday|"
            r"sunday|jan\w*|feb\w*|mar\w*|apr\w*|may|jun\w*|jul\w*|aug\w*|sep\w*|oct\w*|nov\w*|"
            r"dec\w*|\d{1,2}(?:st|nd|rd|th)?|week|month)\s*)+",
            gap.casefold(),
        )
    )


#: The worker a kind of work makes: "I've been driving school bus for 22 years" → "school bus driver".
_AGENT_OF = {
    "driving": "driver",
    "teaching": "teacher",
    "coaching": "coach",
    "tutoring": "tutor",
    "nursing": "nurse",
    "designing": "designer",
    "translating": "translator",
    "cleaning": "cleaner",
    "bartending": "bartender",
    "waitressing": "waitress",
    "farming": "farmer",
    "plumbing": "plumber",
    "programming": "programmer",
    "lecturing": "lecturer",
}
_DOING_FOR_YEARS_RE = re.compile(
    r"\b(?:i['’]?ve|i\s+have|ive)\s+been\s+(?P<verb>" + "|".join(_AGENT_OF) + r")"
    r"(?P<obj>(?:\s+(?!in\b|for\b|at\b|since\b|with\b|here\b|now\b|the\b|a\b|an\b|and\b)[a-z-]+){0,2})",
    re.IGNORECASE,
)


_RETIRING_RE = re.compile(
    r"\b(?:i['’]?m|im|i\s+am|we['’]re|we\s+are)\s+(?:finally\s+|officially\s+)?(?:retiring|going\s+to\s+retire|"
    r"gonna\s+retire)\b",
    re.IGNORECASE,
)
_LAST_DAY_RE = re.compile(r"\b(?:my|our)\s+last\s+(?:day|shift|route|class|week|run)\s+(?:is|will\s+be)\b", re.I)


#: "I tune pianos for a living" (the speaker's own: "she fixes bikes for a living" has no one to attach to here)
_FOR_A_LIVING_RE = re.compile(
    r"\b(?:i|we)\s+(?P<verb>[a-z]{3,}?)(?:es|s)?\s+(?P<obj>(?:[a-z-]+\s+){0,2}?[a-z-]+?)s?\s+for\s+a\s+living\b",
    re.IGNORECASE,
)
#: "Gülay's bakery", "her salon in Horsforth", "Levan has his dental clinic in Vake": a business someone runs
_THEIR_BUSINESS_RE = re.compile(
    r"(?:(?P<owner>(?-i:[A-Z])[\w'’-]+)['’]s|\b(?P<pron>her|his)\s+(?:own\s+)?)\s*(?P<kind>(?:[a-z]+\s+)?"
    r"(?:bakery|salon|clinic|restaurant|shop|cafe|café|workshop|garage|practice|studio|bar|bistro|boutique|"
    r"pharmacy|food\s+truck|stall))\b",
    re.IGNORECASE,
)


def _for_a_living(s: Sentence) -> Iterator[Found]:
    """ "I tune pianos for a living" → works as a piano tuner: what one does for a living names the job."""
    for m in _FOR_A_LIVING_RE.finditer(s.text, s.start, s.end):
        verb = m.group("verb").casefold()
        if verb in ("do", "does", "did", "it", "work", "works"):
            continue  # "what I do for a living": the question, not the answer
        ctx = ctx_at(s, m.start())
        if ctx is None or ctx.negated:
            continue
        agent = _AGENT_OF.get(verb + "ing") or (verb + "r" if verb.endswith("e") else verb + "er")
        yield make(ctx, s, "works_as", f"{m.group('obj').casefold()} {agent}", "for-a-living", end=m.end())


def _their_business(s: Sentence) -> Iterator[Found]:
    """A business named as someone's ("Gülay's bakery", "gemma's doing 4 days a week at her salon")."""
    for m in _THEIR_BUSINESS_RE.finditer(s.text, s.start, s.end):
        owner = m.group("owner")
        if owner is None:
            person = resolve_pronoun(s.text, m.start(), "f" if m.group("pron").casefold() == "her" else "m")
            owner = person.subject if person is not None else None
        if owner is None or owner.casefold() in ("i", "my", "your", "our"):
            continue
        ctx = speaker_ctx(s, m.start())
        if ctx is None or ctx.negated:
            continue
        yield make(ctx, s, "runs_business", m.group("kind").casefold(), "their-business", end=m.end(), subject=owner)


def _doing_for_years(s: Sentence, lower_ok: bool) -> Iterator[Found]:
    """Work said as what one has long been doing: "I have been driving school bus in Duluth for going on 22 years
    now, for Northland Student Transit" → works as a school bus driver, at Northland Student Transit."""
    text = s.text
    for m in _DOING_FOR_YEARS_RE.finditer(text, s.start, s.end):
        if _LASTING_RE.search(text, m.end(), min(s.end, m.end() + 80)) is None:
            continue  # "I've been driving all day": not a job
        ctx = ctx_at(s, m.start())
        if ctx is None or ctx.negated or ctx.subject != s.speaker:
            continue
        role = f"{m.group('obj').strip()} {_AGENT_OF[m.group('verb').casefold()]}".strip()
        yield make(ctx, s, "works_as", role, "doing-for-years", end=m.end())
        employer = re.compile(r"[^.;!?]{0,60}?,?\s+for\s+(?=(?-i:[A-Z]))").match(text, m.end(), s.end)
        if employer is not None:
            org = _org(text, employer.end(), s.end, lower_ok)
            if org is not None:
                yield make(ctx, s, "works_at", org[0], "doing-for-years.at", end=org[1])


def _accepted_offer(s: Sentence, lower_ok: bool) -> Iterator[Found]:
    """An offer the speaker says yes to in the same message ("I got offer to be in-house translator at Qazaq
    Minerals, the contract starts 1 December. … I already said yes"): the new employer, from the start date."""
    text = s.text
    for m in _OFFER_RE.finditer(text, s.start, s.end):
        org = _org(text, m.end(), s.end, lower_ok)
        ctx = ctx_at(s, m.start(), time="past")
        if org is None or ctx is None or ctx.negated or ctx.subject != s.speaker:
            continue
        yield _dated_start(make(ctx, s, "works_at", org[0], "offer.accepted", end=org[1], change=True), s)
        role = _role_at(text, m.start("role"), m.end("role")) if m.group("role") else None
        if role is not None:
            yield _dated_start(make(ctx, s, "works_as", role[0], "offer.accepted.as", end=org[1], change=True), s)


def _dated_start(found: Found, s: Sentence) -> Found:
    """A job start whose own clause has no date borrows the sentence's "start date is 1 June" / "start 1
    December"."""
    if found.span is None:
        return found
    limit = min(len(s.text), s.end + 60)
    m = _START_DATE_RE.search(s.text, found.span[1], limit)
    if m is None:
        later = LATER_START_RE.search(s.text, s.end, min(len(s.text), s.end + 250))
        # "I got the Qatar job!!! … I join on the 3rd of November": the start said a sentence or two later dates it
        return found if later is None else replace(found, span=(later.start(), later.end()), time="future")
    stop = re.compile(r"[^.;!?\n]{0,40}").match(s.text, m.end(), limit)
    end = stop.end() if stop else m.end()
    return replace(found, span=(found.span[0], end), time=found.time or "present")


def _business(s: Sentence, m: re.Match[str], lower_ok: bool) -> Iterator[Found]:
    text = s.text
    verb = m.group("verb").casefold()
    kind = m.group("kind")
    time = "past" if verb in ("opened", "started", "founded") else "present"
    ctx = ctx_at(s, m.start(), time=time)  # type: ignore[arg-type]
    if ctx is None or ctx.negated:
        return
    if (
        verb in ("have", "has")
        and not re.search(r"\b(?:my|our|own|small|little)\b", text[m.start() : m.end()], re.I)
        and ctx.subject != s.speaker
    ):
        return
    name = None
    explicit = re.compile(r"[^.;!?]{0,80}?\b(?:called|named|name\s+is)\s+", re.IGNORECASE).match(text, m.end(), s.end)
    named = explicit or _NAMED_RE.match(text, m.end(), s.end)
    if named is not None:
        name = read_name(text, named.end(), s.end, lowercase_ok=lower_ok, max_words=5)
    planned = ctx.time == "future" or ctx.planned or (verb in ("open", "opening") and not ctx.negated)
    end = name[1] if name else m.end()
    obj = f"{kind} {name[0]}" if name else text[m.start("kind") : _extend(text, m.end(), s.end)]
    if planned and verb in ("open", "opening", "starting"):
        yield make(
            ctx,
            s,
            "plans_to",
            f"open {text[m.start() + len(m.group('verb')) : _extend(text, end, s.end)].strip()}",
            "business.plan",
            end=end,
            time="future",
        )
        return
    if name is None and verb in ("have", "has", "run", "runs"):
        return
    yield make(ctx, s, "runs_business", obj, "business", end=end, change=verb in ("opened", "started", "founded"))
    where = re.compile(r"\s+in\s+(?P<place>(?-i:[A-Z])[\w-]+)(?:['’]s\b)?").match(text, m.end(), s.end)
    if where is not None and ctx.subject == s.speaker:
        yield replace(
            make(ctx, s, "located_in", where.group("place"), "business.in", end=where.end()),
            span=(m.end(), where.end()),
        )
    if name is not None and verb in ("opened", "started", "founded") and ctx.subject == s.speaker:
        yield make(ctx, s, "works_at", name[0], "business.work", end=end, change=True)


def _extend(text: str, pos: int, end: int) -> int:
    """Extend a business phrase over "with my cousin Tarek in Ras Al Khor" up to the clause's end."""
    m = re.compile(r"[^.;!?,:—]{0,60}").match(text, pos, end)
    return m.end() if m else pos


def _field(text: str, pos: int, end: int) -> tuple[str, int] | None:
    m = re.compile(r"([\w-]+(?:\s+[\w-]+)?)").match(text, pos, end)
    if m is None:
        return None
    words = m.group(1).split()
    if words[0].casefold() in ("the", "a", "an", "my", "our", "it", "that", "this"):
        return None
    value = m.group(1)
    if len(words) == 2 and words[1].casefold() in ("for", "and", "with", "in", "at"):
        value = words[0]
    return value, pos + len(value)
