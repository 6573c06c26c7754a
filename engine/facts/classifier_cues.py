"""The cue lists of the L0.5 classifier: greetings, reactions, questions, requests and code.

Kept apart from :mod:`engine.facts.classifier` so the segmentation and labelling logic stays
readable and the word lists can grow.  Every pattern here is matched against *normalised* text
(lower case, straight apostrophes, punctuation and emoji removed, single spaces; see
``classifier._norm``), except the code patterns, which see a stripped source line.  The English
greeting and reaction lists were tuned on the LoCoMo development conversations (real chat turns);
the Vietnamese lists and the code patterns follow common usage and are covered by table tests.
"""

from __future__ import annotations

import re

from engine.commands import alternation


def words(text: str) -> frozenset[str]:
    """A set from a whitespace-separated word list (easier to read and extend than a literal)."""
    return frozenset(text.split())


# -- emoji and emoticons ---------------------------------------------------------------------------
EMOJI = (
    "[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\u2300-\u23ff\ufe0f\u200d\u2764\u2665"
    "\u263a\u2639\U000e0020-\U000e007f]"
)
EMOJI_RE = re.compile(EMOJI)
EMOTICON_RE = re.compile(r"(?<!\w)(?:[:;=8xX][-^'o]?[)(DPp3\]\[/\\|*oO]+|<3+|\^_*\^|T_T|-_-)(?!\w)")

# -- sentence boundaries ---------------------------------------------------------------------------
NO_SPLIT = words(
    """mr mrs ms mx dr prof sr jr st mt vs v e.g i.e eg ie cf approx ca capt gen sen rep gov lt col
    sgt fr rev hon pres dept est ave blvd ft ths tp q"""
)
NUMBERED = words("no nos vol ch pp fig p tr")  # "No. 5", "tr. 12": no break before a digit
MAYBE_FINAL = words(  # may end a sentence: break only before a capital letter
    """etc inc ltd co corp a.m p.m am pm u.s u.k u.n e.u d.c l.a n.y jan feb mar apr jun jul aug sep
    sept oct nov dec"""
)

# -- code lines ------------------------------------------------------------------------------------
CODE_START = re.compile(
    r"(?:def\s+\w+\s*\(|class\s+\w+\s*[(:{]"
    r"|(?:import|using|package)\s+[\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+)*;?$"
    r"|from\s+[\w.]+\s+import\s|#include\s*[<\"]|#!/|else\s*:$|try\s*:$|except\b.*:$|finally\s*:$"
    r"|elif\b.*:$|(?:async\s+)?function\s*\w*\s*\(|(?:const|let|var)\s+\w+\s*="
    r"|(?:public|private|protected|static)\s+\w+"
    r"|(?:SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP)\s.*"
    r"\b(?:FROM|INTO|SET|TABLE|WHERE|VALUES)\b"
    r"|\$\s+\w+|>>>\s|print\(|console\.\w+\(|echo\s+[\"$]|sudo\s+\w+|pip\s+install\s"
    r"|npm\s+(?:install|run|i)\s|git\s+(?:clone|commit|push|pull|checkout|add|status|log|diff)\b"
    r"|@\w+(?:\(.*\))?$|}\s*(?:else|catch)\b|return\s+[\w.\[\](){}\"'+*/ -]*;?$"
    r"|</?[a-zA-Z][\w-]*(?:\s+[\w-]+=[\"'][^\"']*[\"'])*\s*/?>)"
)
CODE_END = re.compile(r"[;{}]$|\):$")
ASSIGNMENT = re.compile(r"[A-Za-z_][\w.]*(?:\[[^\]]*\])?\s*(?:[+\-*/%|&]?=|:=)\s*[^=\s]")
CODE_OPERATOR = re.compile(r"==|!=|=>|->|&&|\|\||::|\+\+|</\w|/>|\w\.\w+\(|\w\(\)|\w\([\w\"',. ]*\)$")
# Opening words of code lines that may carry no symbol at all ("import os", "git status").
CODE_KEYWORDS = tuple(
    words(
        """import using package from else try except finally elif SELECT INSERT UPDATE DELETE CREATE
        ALTER DROP sudo pip npm git echo return const let var public private protected static async
        function"""
    )
)

# -- reactions (filler) ----------------------------------------------------------------------------
_ADJ = alternation(
    """awesome great amazing cool nice wonderful fantastic lovely beautiful incredible sweet fun
    exciting interesting impressive inspiring cute adorable awful terrible sad tough hard rough
    scary crazy wild insane hilarious funny brilliant perfect neat rad epic gorgeous stunning
    powerful touching heartwarming special unbelievable good bad fab fabulous excellent superb
    remarkable magical meaningful thoughtful wholesome kind generous relaxing peaceful delicious
    yummy tasty intense unreal true spot_on smart clever outstanding marvelous marvellous
    breathtaking precious dope sick legit exciting_stuff a_big_deal a_relief a_shame a_pity a_bummer
    a_blast a_lot so_much_fun such_fun well_deserved pumped excited happy glad thrilled stoked hyped
    proud grateful thankful sorry jealous bummed relieved huge legendary massive lit solid surreal
    sureal bonkers spectacular phenomenal admirable commendable"""
)
_INTENSIFIER = alternation(
    "so really very super pretty totally absolutely just such truly quite incredibly too soo+ a an"
)
_NOUNISH = alternation(
    """idea news one stuff thing things work job pic photo picture shot view plan story time
    experience achievement accomplishment choice pick move way place spot question point quote
    painting gift day event party trip song book movie dish recipe design outfit name tip tips
    advice suggestion find deal goal effort attitude mindset team group project initiative cause
    result results memory memories moment moments"""
)
_VI_ADJ = alternation("hay tuyệt tuyệt_vời đẹp dễ_thương vui xinh ngon giỏi đỉnh ghê đáng_yêu tốt hài")
_VI_PARTICLE = alternation("quá thế vậy ghê lắm thật nhỉ nhé ha ta vời đó đấy")
EVALUATIVE_RE = re.compile(
    # "that's awesome", "your group sounds amazing", "it must have been fun", "sounds like a plan"
    r"(?:(?:that|this|it|which|those|these|they|(?:your|that|this|those|these)\s+\w+(?:\s+\w+)?)"
    r"(?:'s|'re|'d\s+be|'ll\s+be|'s\s+been|\s+(?:is|are|was|were|sounds?|looks?|seems?|feels?"
    r"|must\s+be|must\s+have\s+been|must've\s+been|will\s+be|would\s+be|has\s+been|have\s+been"
    r"|could\s+be))?"
    r"|that'd\s+be|it'd\s+be|what|how|so|sounds?|looks?|seems?|must\s+be|must\s+have\s+been"
    r"|must've\s+been)"
    rf"(?:\s+like)?(?:\s+{_INTENSIFIER})*\s+{_ADJ}(?:\s+{_NOUNISH})?"
    r"(?:\s+(?:too|indeed|though|man|dude|for\s+you|to\s+hear|of\s+you|there|right|really|honestly"
    r"|haha|lol))*"
    # "so cool", "great idea", "what a photo"
    rf"|(?:{_INTENSIFIER}\s+)*{_ADJ}(?:\s+{_NOUNISH})?|what\s+an?\s+(?:{_ADJ}\s+)?{_NOUNISH}"
    # "hay quá", "tuyệt vời", "đẹp thế"
    rf"|(?:(?:ôi|ồ|wow|trời\s+ơi|chà|thật|rất|quá)\s+)*{_VI_ADJ}(?:\s+{_VI_PARTICLE})*"
)
FILLER_WORDS = words(
    """ok okay okey k kk lol lmao lmfao rofl haha hahaha hahahaha hehe hehehe hihi hoho yeah yea yep
    yup ya yah yes yess no nope nah wow whoa woah oh ohh ooh ah ahh aw aww awww omg oops hmm hm hmmm
    mhm uh um umm er cool nice great awesome amazing sweet neat lovely perfect sure right true
    totally exactly indeed absolutely definitely agreed gotcha fine alright yay woohoo woo yikes
    damn dang geez gosh jeez wild crazy brilliant fantastic wonderful incredible excellent beautiful
    cute adorable fun so well noted yo really seriously congrats congratulations bravo phew ugh meh
    whatever same ikr tbh fr bet ừ ừm ờ ừa vâng dạ oke okie được rồi hay tuyệt quá vời thật à ồ ôi
    trời ơi ha hì hí chà nhỉ đúng vậy thế hả ạ ờm uhm"""
)
REPEATED_INTERJECTION = re.compile(r"(?:ha|he|hi|hu|k)+h?|l+o+l+|w+o+w+|o+h+|a+w+|y+a+y+|a+h+|u+g+h+")
FILLER_PHRASES_RE = re.compile(
    r"(?:me\s+too|same\s+here|same\s+to\s+you|you\s+too|good\s+for\s+you|no\s+worries|no\s+problem"
    r"|no\s+prob|np|of\s+course|for\s+sure|you\s+bet|not\s+bad|fair\s+enough|makes\s+sense|i\s+see"
    r"|i\s+(?:totally\s+)?agree|totally\s+agree|i\s+know\s+right|i\s+know"
    r"|you(?:'re|\s+are)\s+(?:so\s+|totally\s+|absolutely\s+)?right"
    r"|so\s+true|true\s+that|sure\s+thing"
    r"|good\s+luck|best\s+of\s+luck|well\s+done|good\s+job|great\s+job|nice\s+work|great\s+work"
    r"|nice\s+one|keep\s+it\s+up|keep\s+going|keep\s+up\s+the\s+\w+\s+work|don't\s+give\s+up"
    r"|never\s+give\s+up|hang\s+in\s+there|hang\s+tight|go\s+for\s+it|you(?:'ve)?\s+got\s+this"
    r"|we(?:'ve)?\s+got\s+this|(?:we|you)\s+can\s+do\s+this"
    r"|(?:i\s+)?love\s+(?:it|that|this|them|those)"
    r"|(?:i'm\s+|i\s+am\s+)?(?:so\s+)?(?:happy|proud)\s+(?:for|of)\s+you|sounds\s+like\s+a\s+plan"
    r"|will\s+do|i'd\s+love\s+to|count\s+me\s+in|no\s+way|oh\s+my\s+(?:god|gosh)|my\s+pleasure"
    r"|you(?:'re|\s+are)\s+welcome|anytime|any\s+time|(?:glad|happy)\s+to\s+help"
    r"|(?:glad|good|great|nice|happy)\s+to\s+(?:hear|know)(?:\s+(?:it|that|this))?"
    r"|thanks\s+to\s+you"
    r"|i\s+hope\s+so|hope\s+so|let's\s+do\s+it|why\s+not|tell\s+me\s+about\s+it|that's\s+life"
    r"|it\s+is\s+what\s+it\s+is|(?:i\s+)?feel\s+the\s+same(?:\s+way)?"
    # "That means a lot" is a reaction; "Your support means a lot" names what the speaker values and is kept
    r"|(?:it|that|this|your\s+(?:words|kind\s+words|message|reply|comment))\s+(?:really\s+|truly\s+)?means?\s+(?:a\s+lot"
    r"|so\s+much|the\s+world|everything|a\s+ton)(?:\s+to\s+me)?"
    r"|glad\s+(?:it|that|i\s+could)\s+help(?:ed|s)?(?:\s+you|\s+ya)?"
    r"|i\s+(?:did|do|have|am|was|can|will|would|could|know|guess|bet|agree|think\s+so"
    r"|(?:sure|totally|definitely)\s+will)"
    r"|(?:i've\s+|i\s+)?got\s+your\s+back|you\s+rock|lucky\s+you|way\s+to\s+go|you\s+deserve\s+it"
    r"|you\s+earned\s+it|well\s+deserved|right\s+back\s+at\s+(?:you|ya)|likewise"
    r"|glad\s+(?:you|you're|it's|that)(?:\s+\w+){1,3}"
    r"|congrat(?:s|ulations)\s+on\s+(?:your|the)(?:\s+\w+){1,3}"
    r"|(?:i'm\s+|so\s+|really\s+)*sorry\s+(?:to\s+hear|for\s+your\s+loss|about\s+that)"
    r"(?:\s+(?:about\s+)?(?:that|this|it))?"
    r"|can't\s+wait(?:\s+to\s+(?:see|hear|read|try)(?:\s+(?:it|them|more|that))?)?"
    r"|you(?:'re|\s+are)\s+(?:doing\s+)?(?:so\s+|really\s+)?(?:great|amazing|awesome|the\s+best)"
    r"|không\s+sao|không\s+có\s+gì|đúng\s+rồi|đúng\s+vậy|vậy\s+à|thế\s+à|ừ\s+nhỉ|được\s+rồi"
    r"|chúc\s+mừng(?:\s+\w+)?|cố\s+lên|cố\s+gắng\s+lên|tất\s+nhiên(?:\s+rồi)?|chắc\s+chắn\s+rồi"
    r"|hay\s+đấy|thích\s+quá|tuyệt\s+vời\s+quá)"
)

# -- greetings, thanks, goodbyes -------------------------------------------------------------------
_GREETING_TAIL = alternation(
    """you u ya so much a lot very again too there all everyone everybody guys folks y'all buddy
    friend man dude bro mate pal both for sharing asking that this it the your support help advice
    tip tips info offer kind words update chat reply everything then now soon later tonight today
    tomorrow lots ton bunch nhé nha ạ bạn anh chị em các mọi người nhiều lắm rất cô chú bác ông bà
    cậu mình tớ nhá hen và buổi sáng trưa chiều tối tốt lành vui vẻ đã giúp đỡ"""
)
GREETING_RE = re.compile(
    r"(?:(?:oh|well|hey|hi|hello|and|ok|okay|so|yo|ah|aw+)\s+)*"
    r"(?:hi|hello|hey|hiya|heya|howdy|yo|greetings|sup|hai|helo|hallo|(?:hey|hi|hello)\s+there"
    r"|good\s+(?:morning|afternoon|evening|night|day)|morning|evening|gm|gn"
    r"|thanks?|thank\s+you|thankyou|thx|ty|tysm|many\s+thanks|cheers|much\s+appreciated"
    # "(I) appreciate it / you": thanks; "Appreciate the offer" without an "I" too; "I appreciate your
    # encouragement" says what the speaker values and is kept
    r"|(?:i\s+)?(?:really\s+|truly\s+|so\s+)?appreciate\s+(?:it|that|this|you|all\s+the\s+\w+)"
    r"|(?:really\s+|truly\s+|so\s+)?appreciate\s+(?:your|the)(?:\s+\w+){1,2}"
    r"|bye|bye\s+bye|byebye|goodbye|good\s+bye|(?:i'll\s+)?see\s+(?:you|ya|u)(?:\s+(?:later|soon"
    r"|tomorrow|then|around|next\s+time))?"
    r"|catch\s+(?:you|ya|u)\s+(?:later|soon)|talk\s+(?:to\s+you\s+)?(?:soon|later)|ttyl|later"
    r"|take\s+care(?:\s+of\s+yourself)?"
    r"|(?:have|enjoy)\s+(?:a\s+|the\s+rest\s+of\s+(?:the|your)\s+)?"
    r"(?:(?:good|great|nice|wonderful|lovely|fun|safe)\s+)?"
    r"(?:day|night|evening|weekend|one|time|trip|flight)"
    r"|(?:it's\s+|it\s+is\s+|it\s+was\s+|so\s+|really\s+|always\s+)?"
    r"(?:good|great|nice|glad|lovely|happy|awesome)\s+to\s+"
    r"(?:see|hear\s+from|meet|talk\s+to|chat\s+with|catch\s+up\s+with|be\s+back|have\s+you\s+back)"
    r"(?:\s+you)?"
    r"|(?:it\s+was\s+)?(?:great|good|nice|fun|lovely)\s+(?:catching\s+up|chatting|talking)"
    r"(?:\s+with\s+you)?"
    r"|(?:nice|pleased)\s+to\s+meet\s+you|long\s+time\s+no\s+see|welcome(?:\s+back)?|stay\s+safe"
    r"|have\s+fun(?:\s+with\s+(?:your|the|it|that)(?:\s+\w+){0,2})?"
    r"|enjoy(?:\s+yourself|\s+it|\s+(?:your|the)(?:\s+\w+){1,2})"
    r"|sleep\s+well|sweet\s+dreams|good\s+night|night\s+night"
    r"|(?:i\s+)?hope\s+(?:you(?:'re|\s+are)\s+(?:doing\s+)?(?:well|good|great|ok|okay|fine)"
    r"|you(?:'re|\s+are)\s+having\s+a\s+(?:good|great|nice)\s+\w+"
    r"|you\s+(?:have|had)\s+a\s+(?:good|great|nice)\s+\w+"
    r"|(?:you\s+)?(?:all\s+is|all's|everything(?:'s|\s+is))\s+(?:well|good|great|ok))"
    r"|(?:xin\s+)?chào|alo|a\s+lô|cảm\s+ơn|cám\s+ơn|tạm\s+biệt|hẹn\s+gặp\s+lại|chúc\s+ngủ\s+ngon"
    r"|bai|bái\s+bai|chúc\s+(?:một\s+)?(?:ngày|buổi\s+\w+|cuối\s+tuần)\s+(?:tốt\s+lành|vui\s+vẻ)"
    r"|chào\s+buổi\s+\w+)"
    rf"(?:\s+{_GREETING_TAIL})*"
)
THANKS_FOR = re.compile(
    r"(?:thanks?|thank\s+you|cảm\s+ơn|cám\s+ơn)(?:\s+(?:so|very)\s+much|\s+a\s+lot)?\s+(?:for|vì)\s"
)
FIRST_PERSON = words("i i'm i've i'll i'd we we're we've our my mine tôi mình tớ chúng")
LEADING_CONJUNCTIONS = words("and but also plus oh well anyway anyways và nhưng")

# -- questions -------------------------------------------------------------------------------------
EN_QUESTION_START = re.compile(
    r"(?:(?:so|and|but|oh|hey|well|also|btw|by\s+the\s+way)\s+)?(?:"
    r"(?:what|who|whom|whose|where|when|why|how|which)(?:'s|'re|'d|'ll|\s+(?:is|are|was|were"
    r"|do|does|did|can|could|would|will|should|shall|have|has|had|about|come|many|much|long"
    r"|often|far|old|kind|sort|type|else|exactly|happened|made|makes|inspired|got))\b"
    r"|(?:do|does|did|is|are|was|were|am|can|could|would|will|should|shall|have|has|had|may|might"
    r"|isn't|aren't|wasn't|weren't|don't|doesn't|didn't|can't|couldn't|won't|wouldn't|shouldn't"
    r"|haven't|hasn't)\s+(?:you|u|i|we|they|he|she|it|this|that|there|your|anyone|anybody|someone"
    r"|somebody|y'all|ya|ur)\b"
    r"|any\s+(?:idea|ideas|tips|thoughts|plans|news|luck|chance|recommendations|suggestions|advice"
    r"|pointers|updates|word|recs|favorites|favourites)\b"
    r"|right|you\s+know|isn't\s+it|aren't\s+they|don't\s+you\s+think|ain't\s+it|eh|huh|or\s+not)"
)
#: A question with its auxiliary and "you" dropped ("(Do you) want to see a pic?"): only after a "?", since
#: without one "Want to try pottery someday" is a wish with a dropped "I".
ELLIPTICAL_QUESTION = re.compile(
    r"(?:want|wanna|care|like)\s+(?:to\s+)?(?:see|hear|read|try|join|come|check|know|grab|meet|watch|go)\b"
)
TAG_ONLY = re.compile(r"(?:right|eh|huh|you\s+know)\b")  # a tag alone is not a question without "?"
BARE_TAG = re.compile(  # "It's all about practice isn't it?"
    r"\s+(?P<tag>isn't|aren't|wasn't|weren't|don't|doesn't|didn't|won't|can't|haven't|hasn't)\s+"
    r"(?:it|they|you|he|she|we|there|i)\s*\?+\W*$"
)
VI_QUESTION_END = re.compile(r"(?:^|\s)(?:không|ko|hông|chưa|à|hả|hở|nhỉ|chứ|sao|hử|hem)$")
VI_QUESTION_WORD_END = re.compile(
    r"(?:^|\s)(?:gì|đâu|ai|nào|bao\s+giờ|khi\s+nào|bao\s+nhiêu|mấy|thế\s+nào"
    r"|như\s+thế\s+nào|ra\s+sao|làm\s+sao)(?:\s+(?:vậy|thế|nhỉ|hả|ạ|hở|đó|đấy|nhé|nhở))?$"
    r"|(?:^|\s)bao\s+nhiêu(?:\s+\S+){1,2}$"  # "bao nhiêu tiền": how much money
)
VI_QUESTION_START = re.compile(
    r"(?:tại\s+sao|vì\s+sao|sao|bao\s+giờ|khi\s+nào|ở\s+đâu|làm\s+sao|làm\s+thế\s+nào|có\s+phải"
    r"|bao\s+nhiêu|ai\s+(?:là|đã|sẽ|đang))\b"
)
VI_NEGATION = re.compile(r"(?:^|\s)(?:không|chẳng|chả|chưa\s+hề)\s")  # "không biết gì": not a question

# -- requests and imperatives: EN_COMMAND and VI_COMMAND live in engine.commands (the firewall's too)
