"""Whether a text opens as a request to the assistant ("please summarise…", "can you…", "hãy viết…").

Two rooms ask this: the privacy firewall (a pasted document after "summarise this" is the user's material, not
their words) and the fact classifier (a request states nothing about anyone).  It sits below both so that
neither climbs into the other's floor; the patterns see normalised text (lower case, straight apostrophes,
single spaces), as :mod:`engine.facts.classifier_cues` describes.
"""

from __future__ import annotations

import re

__all__ = ["EN_COMMAND", "VI_COMMAND", "alternation"]


def alternation(text: str) -> str:
    """A non-capturing alternation from a whitespace-separated list; ``_`` stands for ``\\s+``."""
    return "(?:" + "|".join(w.replace("_", r"\s+") for w in text.split()) + ")"


# -- requests and imperatives ----------------------------------------------------------------------
# Verbs that start a request; base forms that are rarely a subject-less past-tense statement.
_REQUEST_VERBS = alternation(
    """write summari[sz]e translate explain describe generate create compose rewrite rephrase
    paraphrase proofread calculate compute compare define outline analy[sz]e suggest recommend find
    tell show give make remind add remove delete send fix convert simplify shorten refactor
    optimi[sz]e implement debug draft elaborate clarify search google look_up check_out keep try
    pick choose help imagine bring teach answer correct"""
)
# Verbs that are also nouns ("Book club is fun"): a request only with an object ("book a table").
_AMBIGUOUS_VERBS = alternation(
    """check list review schedule update plan book note record save play open start stop count name
    sort format continue repeat ignore use draw take get order share print email text call buy watch
    visit join come"""
)
_OBJECT = alternation(
    "me my the a an all this that these those our your it them up out some every us him her over here"
)
EN_COMMAND = re.compile(
    r"(?:(?:ok(?:ay)?|so|now|and|hey|also|then)\s+)?(?:(?:please|pls|plz|kindly)\b"
    r"|(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+)?(?!believe|imagine|see|hear|feel|relate"
    r"|like|be|have|ever|still|really|also|guess|think|remember|say|do\s+that|want|try\s+it)\w+"
    r"|i(?:\s+would|'d|\s+want|\s+need)(?:\s+like)?\s+you\s+to"
    r"|(?:help|remind|tell|show|give|send|teach|let)\s+me\b|let's|lets\s+(?:go|do|get|try|make|see)"
    r"|(?:don't|do\s+not|never)\s+(?:forget|tell|send|use|do|make|write|delete|remove|show"
    r"|give|worry|hesitate)\b"
    rf"|{_REQUEST_VERBS}\s+\S|{_AMBIGUOUS_VERBS}\s+{_OBJECT}\b)"
)
VI_COMMAND = re.compile(
    r"(?:(?:bạn|anh|chị|em|cậu|ông|bà)\s+)?(?:hãy|xin\s+hãy|làm\s+ơn|vui\s+lòng"
    r"|giúp\s+(?:tôi|mình|em|anh|chị|tớ)|(?:có\s+thể\s+)?giúp"
    r"|cho\s+(?:tôi|mình|em|tớ)\s+(?:xem|biết|hỏi|xin)"
    r"|viết|dịch|tóm\s+tắt|liệt\s+kê|giải\s+thích|tìm|nhắc|đừng|soạn|tạo|kiểm\s+tra|gửi|lập"
    r"|phân\s+tích|so\s+sánh|đề\s+xuất|gợi\s+ý)\b"
    r"(?!\s+(?:được|ra|thấy|xong|rồi|hết)\b)"  # "tìm được việc": found a job, a statement
)
