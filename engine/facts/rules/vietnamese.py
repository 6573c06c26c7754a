"""Basic Vietnamese statements: "Tôi là…", "Tên tôi là…", "Tôi làm việc tại…", "Tôi sống ở…", "Tôi
thích…".

First person is "tôi", "mình" or "tớ"; a capitalised name that is not a common sentence opener is a
third person.  Patterns expect precomposed (NFC) text, which is what keyboards and chat apps
produce.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from engine.facts.rules import classify as c
from engine.facts.rules.lexicon import word_set
from engine.facts.rules.model import Choice, Found

_FIRST = r"(?:[Tt]ôi|[Mm]ình|[Tt]ớ)"
_NAME = r"[A-ZĐ][a-zà-ỹđ]+(?:\s[A-ZĐ][a-zà-ỹđ]+){0,2}"
_NOT_NAMES = word_set(
    "Hôm Năm Bây Hiện Tuần Tháng Ngày Sáng Chiều Tối Vợ Chồng Con Anh Chị Em Bạn Mẹ Bố Ba Má Cô "
    "Chú Ông Bà Nhưng Và Vì Nên Khi Nếu Tên Quê Sinh Hạn Cảm Xin Chào Dạo Giờ Từ Mình Tôi Tớ Có "
    "Không Đã Đang Sẽ Rất Cũng Sở Ở Tại Thật Ừ Vâng Dạ Ồ Ôi Trời Hay Lúc Sau Trước Cuối Đầu Mới "
    "Vừa Chắc Có Lẽ"
)
_SUBJ = r"(?P<subj>" + _FIRST + r"|" + _NAME + r")"
_ADV = (
    r"(?:(?:rất|cũng|vẫn|đang|đã|sẽ|hiện|hiện\s+đang|hiện\s+tại|thực\s+sự|thật\s+sự|luôn|vừa|mới|"
    r"bây\s+giờ|giờ|"
    r"từng|thường|hay|vốn)\s+)*"
)
_NEG = r"(?P<neg>không\s+còn|không|chưa\s+từng|chưa)?\s*"
_OBJ = r"(?P<obj>[^,.;:!?\n]{1,80})"
_STOP_RE = re.compile(
    r"\s(?:và|nhưng|vì|nên|để|khi|từ\s+năm|từ\s+khi|nữa|rồi|lắm|quá|nhé|nha|ạ|à|luôn|cả|"
    r"với\s+(?:tôi|mình)|"
    r"được\s+\w+\s+năm|hơn)\b.*$",
    re.IGNORECASE,
)
_LEAD_RE = re.compile(r"^(?:một|những|các|cái)\s+", re.IGNORECASE)
_OCCUPATIONS = (
    "giáo viên",
    "bác sĩ",
    "kỹ sư",
    "kĩ sư",
    "lập trình viên",
    "sinh viên",
    "học sinh",
    "y tá",
    "nhà văn",
    "ca sĩ",
    "luật sư",
    "kế toán",
    "nhân viên",
    "quản lý",
    "đầu bếp",
    "nông dân",
    "công nhân",
    "họa sĩ",
    "hoạ sĩ",
    "nhiếp ảnh gia",
    "nhà thiết kế",
    "thiết kế",
    "giám đốc",
    "kiến trúc sư",
    "dược sĩ",
    "nha sĩ",
    "phóng viên",
    "nhà báo",
    "diễn viên",
    "tài xế",
    "thợ",
    "giảng viên",
    "nghiên cứu sinh",
    "doanh nhân",
    "bán hàng",
    "lập trình",
)
_RELATIONS = {
    "vợ": "has_spouse",
    "chồng": "has_spouse",
    "con trai": "has_child",
    "con gái": "has_child",
    "anh trai": "has_sibling",
    "chị gái": "has_sibling",
    "em trai": "has_sibling",
    "em gái": "has_sibling",
    "bạn thân": "has_friend",
    "bạn gái": "has_partner",
    "bạn trai": "has_partner",
    "mẹ": "has_parent",
    "bố": "has_parent",
    "ba": "has_parent",
}


def _occupation(obj: str) -> Choice:
    lowered = obj.casefold()
    return "works_as" if lowered.startswith(_OCCUPATIONS) else None


def _identity(obj: str) -> Choice:
    """ "Tôi là giáo viên" → works_as; "Tôi là Lan" → is_named."""
    if _occupation(obj):
        return "works_as"
    if re.fullmatch(_NAME, obj) and obj.split()[0] not in _NOT_NAMES:
        return "is_named"
    return None


def _liking(verb: str, negated: bool, obj: str) -> tuple[str, bool]:
    if obj.endswith(" hơn"):
        return "prefers", negated
    if verb in ("ghét",) or (verb in ("thích", "ưa") and negated):
        return "dislikes", False
    return ("loves" if verb in ("yêu", "mê") else "likes"), negated


_Pattern = tuple[str, re.Pattern[str], str | Callable[[str], Choice], bool]


def _p(name: str, pattern: str, predicate: str | Callable[[str], Choice], first_only: bool = False) -> _Pattern:
    return name, re.compile(pattern), predicate, first_only


PATTERNS: tuple[_Pattern, ...] = (
    _p("vi.name", r"[Tt]ên\s+(?:của\s+)?(?P<subj>tôi|mình|tớ)\s+là\s+" + _OBJ, "is_named"),
    _p(
        "vi.name2",
        r"(?:^|(?<=[,.;:!?]\s))(?P<subj>" + _FIRST + r")\s+tên\s+là\s+" + _OBJ,
        "is_named",
    ),
    _p(
        "vi.nationality",
        _SUBJ + r"\s+" + _ADV + r"là\s+người\s+(?P<obj>[A-ZĐ][\wà-ỹđ]*(?:\s[A-ZĐ][\wà-ỹđ]*){0,2})",
        "has_nationality",
    ),
    _p(
        "vi.work-at",
        _SUBJ + r"\s+" + _ADV + _NEG + r"làm\s+(?:việc\s+)?(?:tại|ở|cho)\s+" + _OBJ,
        "works_at",
    ),
    _p("vi.job", _SUBJ + r"\s+" + _ADV + r"làm\s+nghề\s+" + _OBJ, "works_as"),
    _p("vi.job2", _SUBJ + r"\s+" + _ADV + r"làm\s+" + _OBJ, _occupation),
    _p("vi.is", _SUBJ + r"\s+" + _ADV + r"là\s+(?:một\s+)?" + _OBJ, _identity),
    _p("vi.lives", _SUBJ + r"\s+" + _ADV + _NEG + r"sống\s+(?:ở|tại)\s+" + _OBJ, "lives_in"),
    _p(
        "vi.moved",
        _SUBJ + r"\s+" + _ADV + r"(?:đã\s+)?chuyển\s+(?:nhà\s+)?(?:đến|tới|về|sang|vào)\s+"
        r"(?:sống\s+(?:ở|tại)\s+)?" + _OBJ,
        "moved_to",
    ),
    _p("vi.from", _SUBJ + r"\s+" + _ADV + r"(?:đến|tới)\s+từ\s+" + _OBJ, "is_from"),
    _p("vi.hometown", r"[Qq]uê\s+(?:của\s+)?(?P<subj>tôi|mình|tớ)\s+(?:ở|là)\s+" + _OBJ, "is_from"),
    _p(
        "vi.allergy",
        _SUBJ + r"\s+" + _ADV + r"(?:bị\s+)?dị\s+ứng\s+(?:với\s+)?" + _OBJ,
        "has_allergy",
    ),
    _p(
        "vi.condition",
        _SUBJ + r"\s+" + _ADV + r"bị\s+(?:bệnh\s+)?(?P<obj>tiểu\s+đường|hen\s+suyễn|cao\s+huyết\s+áp|"
        r"huyết\s+áp\s+cao|trầm\s+cảm|ung\s+thư|mất\s+ngủ|rối\s+loạn\s+lo\s+âu|đau\s+nửa\s+đầu)",
        "has_condition",
    ),
    _p(
        "vi.like",
        _SUBJ + r"\s+" + _ADV + _NEG + r"(?P<verb>thích|yêu|mê|ghét|ưa)\s+" + _OBJ,
        "likes",
    ),
    _p("vi.age", _SUBJ + r"\s+(?:năm\s+nay\s+)?(?:đã\s+)?(?P<obj>\d{1,3}\s+tuổi)", "has_age"),
    _p("vi.study-at", _SUBJ + r"\s+" + _ADV + r"học\s+(?:tại|ở)\s+" + _OBJ, "studies_at"),
    _p("vi.learn", _SUBJ + r"\s+" + _ADV + r"(?:đang\s+)?học\s+(?!tại|ở)" + _OBJ, "learning"),
    _p(
        "vi.speak",
        _SUBJ + r"\s+" + _ADV + r"(?:có\s+thể\s+)?nói\s+(?:được\s+)?(?P<obj>tiếng\s+[\wà-ỹđ]+"
        r"(?:\s+[A-ZĐ][\wà-ỹđ]*)?)",
        "speaks_language",
    ),
    _p(
        "vi.pet",
        _SUBJ + r"\s+" + _ADV + r"(?:có|nuôi)\s+(?P<obj>(?:một|hai|ba|bốn|\d+)\s+(?:con\s+|chú\s+)?(?:chó|mèo|"
        r"cún|thỏ|cá|chim|vẹt|rùa)(?:\s+tên\s+là\s+[A-ZĐ][\wà-ỹđ]*)?)",
        "has_pet",
    ),
    _p(
        "vi.children",
        _SUBJ + r"\s+" + _ADV + r"có\s+(?P<obj>(?:một|hai|ba|bốn|\d+)\s+(?:đứa\s+)?con"
        r"(?:\s+(?:trai|gái))?)(?!\s+(?:chó|mèo|cún|thỏ|cá|chim|vẹt|rùa|gà|heo|bò))\b",
        "has_child",
    ),
    _p(
        "vi.relative",
        r"(?P<rel>[Vv]ợ|[Cc]hồng|[Cc]on\s+trai|[Cc]on\s+gái|[Aa]nh\s+trai|[Cc]hị\s+gái|"
        r"[Ee]m\s+trai|"
        r"[Ee]m\s+gái|[Bb]ạn\s+thân|[Bb]ạn\s+gái|[Bb]ạn\s+trai|[Mm]ẹ|[Bb]ố|[Bb]a)\s+(?:của\s+)"
        r"?(?P<subj>tôi|mình|tớ)"
        r"\s+(?:tên\s+là|tên|là)\s+(?P<obj>" + _NAME + r")",
        "relative",
    ),
    _p("vi.uses", _SUBJ + r"\s+" + _ADV + r"(?:dùng|sử\s+dụng|xài)\s+" + _OBJ, c.technology),
    _p(
        "vi.plan",
        _SUBJ + r"\s+" + _ADV + r"(?:sẽ|định|dự\s+định|có\s+kế\s+hoạch|lên\s+kế\s+hoạch)\s+" + _OBJ,
        "plans_to",
    ),
    _p("vi.want", _SUBJ + r"\s+" + _ADV + r"muốn\s+" + _OBJ, "wants"),
    _p(
        "vi.birthday",
        r"[Ss]inh\s+nhật\s+(?:của\s+)?(?P<subj>tôi|mình|tớ)\s+(?:là\s+)?(?:vào\s+)?"
        r"(?P<obj>(?:ngày\s+)?\d{1,2}(?:[/\s]+(?:tháng\s+)?\d{1,2})?(?:[/\s]+(?:năm\s+)?\d{4})?)",
        "has_birthday",
    ),
    _p("vi.born", _SUBJ + r"\s+sinh\s+(?:ra\s+)?(?:ở|tại)\s+" + _OBJ, "is_from"),
    _p("vi.vegetarian", _SUBJ + r"\s+" + _ADV + r"(?P<obj>ăn\s+chay(?:\s+trường)?)", "diet"),
    _p(
        "vi.status",
        _SUBJ + r"\s+" + _ADV + r"(?P<obj>kết\s+hôn|lập\s+gia\s+đình|độc\s+thân|ly\s+hôn|đính\s+hôn)\b",
        "relationship_status",
    ),
    _p(
        "vi.deadline",
        r"[Hh]ạn\s+(?:chót|nộp)\s+(?:của\s+)?(?P<subj>)(?:[^,.;!?]{0,40}?)\s*(?:là|vào)\s+" + _OBJ,
        "has_deadline",
    ),
    _p("vi.hobby", r"[Ss]ở\s+thích\s+(?:của\s+)?(?P<subj>tôi|mình|tớ)\s+là\s+" + _OBJ, "has_hobby"),
)


def _clean(obj: str) -> str | None:
    obj = _STOP_RE.sub("", obj).strip()
    obj = _LEAD_RE.sub("", obj).strip(" \t-–—\"'")
    if not obj or len(obj.split()) > 8:
        return None
    return obj


def extract_vietnamese(text: str, start: int, end: int, speaker: str) -> Iterator[Found]:
    """Facts from one Vietnamese sentence ``text[start:end]``."""
    sentence = text[start:end]
    if not _looks_vietnamese(sentence):
        return
    for name, pattern, predicate, _first_only in PATTERNS:
        for m in pattern.finditer(sentence):
            found = _found(m, name, predicate, speaker)
            if found is not None:
                yield found


def _found(m: re.Match[str], name: str, predicate: str | Callable[[str], Choice], speaker: str) -> Found | None:
    subj = m.group("subj") or ""
    if subj and subj.casefold() not in ("tôi", "mình", "tớ") and subj.split()[0] in _NOT_NAMES:
        return None
    subject = speaker if not subj or subj.casefold() in ("tôi", "mình", "tớ") else subj
    obj = _clean(m.group("obj"))
    if obj is None:
        return None
    groups = m.groupdict()
    negated = bool(groups.get("neg"))
    change = (groups.get("neg") or "").startswith("không còn")
    if name == "vi.like":
        pred, negated = _liking(m.group("verb"), negated, obj)
        return Found(subject, pred, obj.removesuffix(" hơn"), name, negated=negated)
    if name == "vi.relative":
        rel = re.sub(r"\s+", " ", m.group("rel").casefold())
        return Found(subject, _RELATIONS[rel], obj, name)
    if name == "vi.moved":
        return Found(subject, "moved_to", obj, name, change=True)
    if callable(predicate):
        choice = predicate(obj)
        if choice is None:
            return None
        pred, obj = choice if isinstance(choice, tuple) else (choice, obj)
        return Found(subject, pred, obj, name, negated=negated)
    return Found(subject, predicate, obj, name, negated=negated, change=change)


_VI_MARK_RE = re.compile(r"[ăâđêôơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ]|\b(?:tôi|mình|tớ)\b", re.I)


def _looks_vietnamese(sentence: str) -> bool:
    # The patterns are cheap, but most chat turns are English: a diacritic or pronoun check skips
    # them.
    return not sentence.isascii() and _VI_MARK_RE.search(sentence) is not None
