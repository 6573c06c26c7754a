"""Word lists the rule extractor classifies objects with (occupations, relatives, places, emotions,
…).

The lists are general English (plus a few Vietnamese words): they decide which predicate an already
matched statement gets ("I'm a nurse" → ``works_as``, "I'm a vegan" → ``diet``), never whether a
statement is matched. Keeping them apart from the patterns keeps both readable and lets tests check
them separately.
"""

from __future__ import annotations

import re


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text`` as a set (word lists read better as text)."""
    return frozenset(text.split())


OCCUPATIONS = word_set(
    """
    accountant actor actress administrator analyst animator archaeologist architect artist assistant
    astronaut athlete attorney author baker banker barber barista bartender biologist blogger
    bookkeeper builder butcher carpenter cashier ceo cfo chef chemist choreographer cleaner clerk
    coach columnist comedian composer consultant contractor cook counselor counsellor courier
    curator cto dancer dentist designer detective developer dietitian diplomat director doctor
    driver economist editor educator electrician engineer entrepreneur farmer firefighter fisherman
    florist freelancer gardener geologist guard guide hairdresser historian illustrator influencer
    instructor intern investor janitor jeweler journalist judge lawyer lecturer librarian lifeguard
    linguist locksmith machinist manager marketer mathematician mechanic medic midwife miner
    minister model musician nanny navigator negotiator nurse nutritionist officer optician painter
    paralegal paramedic pastor pharmacist philosopher photographer physician physicist
    physiotherapist pianist pilot plumber poet politician priest principal producer professor
    programmer psychiatrist psychologist publisher rabbi realtor receptionist recruiter reporter
    researcher retiree sailor salesman saleswoman salesperson scientist screenwriter sculptor
    secretary senator singer soldier songwriter statistician streamer student supervisor surgeon
    surveyor tailor teacher technician therapist trainer translator tutor veterinarian vet waiter
    waitress welder writer youtuber zoologist lead founder cofounder co-founder owner paramedic
    firefighter volunteer coder gamer dj arborist logistician superintendent attendant videographer
    filmmaker jeweller seamstress esthetician beautician masseuse masseur doula radiographer sonographer
    phlebotomist hygienist optometrist caregiver carer steward stewardess sommelier glazier plasterer
    bricklayer roofer joiner tiler upholsterer dispatcher foreman inspector auditor solicitor notary
    barrister ranger warden lineman lineworker wireman estimator draughtsman draftsman cartographer
    """
)

#: Head nouns that name a relative, mapped to the catalog predicate of the relationship.
RELATIONS: dict[str, str] = {
    **dict.fromkeys(word_set("wife husband spouse"), "has_spouse"),
    **dict.fromkeys(word_set("partner girlfriend boyfriend fiance fiancé fiancee fiancée gf bf"), "has_partner"),
    **dict.fromkeys(
        word_set(
            "son daughter kid kids child children baby babies boy boys girl girls twins sons "
            "daughters stepson stepdaughter toddler"
        ),
        "has_child",
    ),
    **dict.fromkeys(word_set("mom mum mother dad father parents mama papa stepmom stepdad"), "has_parent"),
    **dict.fromkeys(
        word_set("sister brother sis bro siblings sibling brothers sisters twin stepsister stepbrother"),
        "has_sibling",
    ),
    **dict.fromkeys(word_set("friend friends bestie buddy pal bff roommate"), "has_friend"),
    **dict.fromkeys(
        word_set(
            "cousin aunt uncle grandma grandpa grandmother grandfather granny grandson "
            "granddaughter grandchildren grandkids niece nephew mother-in-law father-in-law "
            "sister-in-law "
            "brother-in-law"
        ),
        "has_relative",
    ),
    **dict.fromkeys(word_set("colleague coworker co-worker workmate mentor"), "has_colleague"),
    **dict.fromkeys(word_set("boss manager supervisor"), "has_manager"),
}

#: Relations a bare mention already tells something about ("my kids" → the speaker has children);
#: parents and friends are left out because everyone has them and the mention adds nothing.
MENTION_RELATIONS = word_set(
    "wife husband spouse partner girlfriend boyfriend fiance fiancé fiancee fiancée son daughter "
    "kids children sons daughters twins stepson stepdaughter sister brother siblings"
)

PETS = word_set(
    """
    pet pets dog dogs puppy puppies pup cat cats kitten kittens kitty hamster hamsters rabbit
    rabbits bunny
    parrot parrots bird birds budgie fish goldfish turtle turtles tortoise snake snakes lizard gecko
    guinea ferret horse horses pony chickens goat iguana hedgehog chinchilla retriever labrador
    poodle terrier beagle bulldog husky corgi shepherd dachshund chihuahua pug spaniel collie
    rottweiler parakeet parakeets cockatiel canary lovebird axolotl
    """
)

#: Pet words that are the first half of a compound: the value is the whole compound ("guinea pig", not "guinea").
PET_COMPOUNDS: dict[str, re.Pattern[str]] = {"guinea": re.compile(r"\s+pigs?\b", re.IGNORECASE)}


def pet_compound(text: str, noun: str, end: int) -> str:
    """``noun`` with the rest of its compound when ``text`` continues it at ``end`` ("guinea" + " pig")."""
    rest = PET_COMPOUNDS.get(noun.casefold())
    m = rest.match(text, end) if rest is not None else None
    return noun + text[end : m.end()] if m else noun


#: Adjectives (and participles) of feeling; "I'm <one of these> …" is a ``feels`` statement.
EMOTIONS = word_set(
    """
    happy glad sad upset angry mad furious excited thrilled stoked pumped nervous anxious worried
    scared afraid terrified stressed overwhelmed swamped exhausted tired drained burned burnt lonely
    bored proud grateful thankful blessed relieved hopeful confident motivated inspired determined
    frustrated annoyed disappointed heartbroken devastated depressed homesick content calm peaceful
    optimistic amazed curious eager ecstatic overjoyed delighted jealous guilty embarrassed ashamed
    confused lost stuck busy sick hyped psyched humbled touched moved honored honoured fulfilled
    energized energised refreshed nostalgic impressed awestruck starstruck surprised shocked speechless
    """
)

#: Feelings worth remembering even without a complement ("I'm overwhelmed."); the rest need one
#: ("proud of X").
NOTABLE_STATES = word_set(
    """
    overwhelmed swamped stressed exhausted drained burned burnt lonely depressed heartbroken
    devastated homesick anxious sick stuck lost busy frustrated
    """
)

DEMONYMS = word_set(
    """
    american british english scottish welsh irish canadian mexican brazilian argentinian argentine
    chilean colombian peruvian cuban french german italian spanish portuguese dutch belgian swiss
    austrian swedish norwegian danish finnish icelandic polish czech slovak hungarian romanian
    bulgarian greek turkish russian ukrainian chinese japanese korean vietnamese thai filipino
    filipina indonesian malaysian singaporean indian pakistani bangladeshi nepalese iranian iraqi
    israeli egyptian moroccan nigerian kenyan ethiopian ghanaian australian kiwi lebanese syrian
    saudi jamaican haitian taiwanese mongolian
    """
)

LANGUAGES = word_set(
    """
    english spanish french german italian portuguese dutch swedish norwegian danish finnish polish
    czech russian ukrainian greek turkish arabic hebrew persian farsi hindi urdu bengali punjabi
    tamil chinese mandarin cantonese japanese korean vietnamese thai indonesian malay tagalog
    swahili latin esperanto asl
    """
)

PROGRAMMING_LANGUAGES = word_set(
    """
    python java javascript typescript go golang rust ruby php kotlin swift scala haskell elixir
    erlang clojure c c++ c# csharp f# r julia matlab perl lua dart zig ocaml sql bash fortran cobol
    """
)

FRAMEWORKS = word_set(
    """
    react vue angular svelte sveltekit next.js nextjs nuxt remix solid ember django flask fastapi
    rails laravel symfony spring express nestjs phoenix gin fiber flutter qt pyside6 pyqt tkinter
    electron tauri tailwind bootstrap jquery pytorch tensorflow keras pandas numpy
    """
)

TECHNOLOGIES = (
    FRAMEWORKS
    | PROGRAMMING_LANGUAGES
    | word_set(
        """
        postgres postgresql mysql sqlite mongodb redis kafka docker kubernetes k8s terraform ansible
        aws gcp azure linux ubuntu debian arch windows macos git github gitlab jenkins graphql grpc
        nginx vim neovim emacs vscode ollama llama openai chatgpt excel figma notion jira slack
        obsidian elasticsearch
        """
    )
)

INSTRUMENTS = word_set(
    """
    guitar piano violin viola cello bass drums drum ukulele flute clarinet saxophone sax trumpet
    trombone harp keyboard banjo mandolin harmonica accordion oboe tuba synth
    """
)

SPORTS = word_set(
    """
    basketball football soccer baseball softball volleyball tennis badminton golf hockey rugby
    cricket squash handball pickleball lacrosse frisbee polo ping-pong
    """
)

GAMES = word_set(
    "chess poker checkers bridge mahjong go scrabble minecraft fortnite game games videogames rpg rpgs mmo boardgames"
)

#: Activities that make a hobby when someone keeps doing them.
HOBBY_ACTIVITIES = word_set(
    """
    painting drawing sketching reading writing dancing cooking baking gardening knitting crocheting
    sewing quilting hiking running jogging swimming surfing camping fishing photography singing
    pottery yoga gaming skating skateboarding climbing bouldering cycling biking kayaking sailing
    skiing snowboarding woodworking journaling blogging vlogging traveling travelling birdwatching
    meditating meditation sculpting scrapbooking calligraphy origami embroidery horseback riding
    diving snorkeling rowing boxing fencing archery collecting volunteering composing drumming
    """
)

#: Activities that are exercise.
EXERCISE_VERBS = word_set(
    """
    run runs ran running jog jogs jogging swim swims swimming cycle cycles cycling bike bikes biking
    lift lifts lifting workout exercise exercises exercising train trains training hike hikes hiking
    row rows rowing climb climbs climbing stretch yoga pilates crossfit spin box boxing
    """
)

#: Nouns that make "went to X" an event attended rather than a place visited.
EVENT_NOUNS = word_set(
    """
    concert party festival fest conference workshop class classes seminar meeting meetup group
    session lecture talk game match show play musical opera ballet exhibition exhibit fair
    convention wedding funeral ceremony graduation reunion rally march protest parade premiere
    screening tournament competition race marathon retreat camp course gala fundraiser auction
    service mass recital performance gig event celebration dinner lunch brunch barbecue bbq picnic
    sleepover open-mic tour
    """
)

#: Nouns of places one visits (beyond capitalised names, which count as places).
PLACE_NOUNS = word_set(
    """
    beach park museum zoo aquarium lake mountains mountain countryside coast island forest woods
    desert village town city capital countryside gallery library temple church cathedral shrine
    castle palace market farm vineyard winery resort spa cabin cottage campsite trail waterfall
    canyon valley river garden botanical observatory stadium arena theater theatre cinema mall
    """
)

#: Destinations of routine ("went to bed") that are not memorable visits.
ROUTINE_PLACES = word_set("bed sleep work school office store shop supermarket bathroom toilet home class church")

CONDITIONS = word_set(
    """
    asthma diabetes adhd add autism anxiety depression ptsd ocd bipolar epilepsy migraine migraines
    arthritis cancer insomnia hypertension eczema psoriasis celiac coeliac crohn's ibs lupus
    fibromyalgia dyslexia scoliosis tinnitus covid flu cold fever
    """
)

DIETS = word_set("vegetarian vegan pescatarian keto paleo gluten-free dairy-free halal kosher teetotal sober")

IDENTITIES = word_set(
    """
    trans transgender nonbinary non-binary genderqueer genderfluid queer gay lesbian bisexual bi
    pansexual asexual straight intersex christian muslim jewish buddhist hindu sikh catholic
    protestant atheist agnostic lgbtq lgbt
    """
)

TRAITS = word_set(
    """
    introvert introverted extrovert extroverted ambivert shy outgoing perfectionist workaholic
    homebody bookworm foodie nerd geek optimist pessimist realist dreamer procrastinator
    """
)
TRAIT_PHRASES = (
    "night owl",
    "early bird",
    "morning person",
    "night person",
    "people person",
    "neat freak",
)

#: Nouns that make "I made X" a creation worth remembering (not "made a mistake", "made my day").
CREATIONS = word_set(
    """
    painting paintings drawing sketch portrait mural sculpture bowl bowls vase pot pots mug cake
    cakes cookies bread pie dinner meal dish soup quilt scarf sweater blanket necklace bracelet
    jewelry video videos film movie song songs album poem poems story stories book novel screenplay
    script app website game blog podcast chair table shelf birdhouse treehouse garden card cards
    collage
    """
)

#: Gerunds too generic to be an activity on their own ("I'm going …", "I'm thinking …").
VAGUE_GERUNDS = word_set(
    """
    going doing thinking wondering hoping feeling getting trying saying talking telling asking
    kidding joking having being looking coming sending letting waiting keeping wishing guessing
    rooting loving missing hearing seeing sorting dealing holding hanging making giving checking
    finding handling managing staying living working using planning considering starting finishing
    learning reading watching playing listening studying running moving heading
    """
)

#: Verbs of doing that, in the plain present with the speaker as subject, state a habit or a way of working even
#: without a frequency ("I color-code my goals", "I bake for my neighbours", "I tend to stick with the chill
#: crowd"); verbs of thinking, saying and feeling are not among them, nor "play", whose own rules know instruments,
#: sports and games ("I play it by ear", "I play with my kids" are not habits of a kind).
HABIT_VERBS = word_set(
    """
    bake cook paint draw sketch write run jog swim walk hike bike cycle ride train practice practise
    teach coach volunteer visit collect grow garden knit sew crochet build code color-code colour-code track
    organize organise study attend meditate journal tend brew mentor host lead lift stretch skate surf
    climb fish sing dance compose record edit film photograph shoot blog vlog stream design craft restore
    repair fix grind roast decorate donate rescue foster raise breed tutor umpire referee visualize visualise
    exercise pray travel scrapbook declutter
    """
)

#: Verbs after "going to"/"gonna"/"will" that are conversation, not plans.
CHAT_VERBS = word_set(
    """
    be say tell let check see try have need miss love like think guess ask give talk send share hear
    know make show look wait help get
    """
)

#: Words that cannot start a name even when capitalised at the start of a sentence.
NOT_NAMES = word_set(
    """
    I I'm I've I'd I'll The A An This That These Those It It's Its My Our Your His Her Their We You
    He She They There Here What When Where Why How Who Which Whose Yes Yeah Yep Yup No Nope Oh Ok
    Okay Wow Thanks Thank Hey Hi Hello Well So And But Or Also Just Really Actually Maybe Sure Great
    Awesome Cool Nice Good Last Next Yesterday Today Tomorrow Tonight Monday Tuesday Wednesday
    Thursday Friday Saturday Sunday January February March April May June July August September
    October November December Gotta Got Been Started Finished Gonna Wanna Can Can't Will Would Could
    Should Did Does Do Is Are Was Were Let Let's Lol Haha Definitely Absolutely Totally Honestly
    Anyway Guess Glad Sounds Looks Seems Hope Love Like Congrats Congratulations Sorry Please Life
    Family Everyone Everybody Someone Somebody Nobody People Mom Dad Mum Grandma Grandpa God Art
    Music Dance Work School Sometimes Often Usually Always Never Once Then Now Still Even Plus
    Because Since After Before During While Both Each Every All Some Any Most Many Much Being Having
    Getting Doing Making Taking Going Seeing Watching Reading Writing Painting Playing Learning
    Lately Recently Finally Luckily Sadly Unfortunately Fortunately Besides Btw Agreed True Right
    Exactly Speaking Talking Thinking Remember Reminds Reminder Keep Take Make Go Check Try Enjoy
    Hang Stay Tell Dear Hmm Um Uh Ah Aw Aww Ugh Omg Yay Cheers Hooray Bye Goodbye Morning Evening
    Afternoon Night
    """
)

#: Leading words of an object that refer back or away instead of naming something ("I love it").
REFERRING_STARTS = word_set(
    """
    it it's its that that's this these those them they he him she her his you your yours ya u me
    myself as us we one ones so what how when where why who whom which whether if because there here
    such same something anything everything nothing someone anyone everyone somebody anybody
    everybody stuff things thing lot lots all both either neither another other others for with at
    in on to from about by of couple bunch but and or yet plus
    """
)

FREQUENCY_RE = re.compile(
    r"\b(?:every\s+(?:single\s+)?(?:day|morning|evening|night|week|weekend|month|year|monday|"
    r"tuesday|"
    r"wednesday|thursday|friday|saturday|sunday|other\s+day)|daily|weekly|nightly|monthly|"
    r"each\s+(?:day|morning|evening|week)|(?:once|twice|\w+\s+times)\s+a\s+(?:day|week|month|year)|"
    r"on\s+(?:weekends|the\s+weekends|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|"
    r"sundays)|"
    r"regularly|most\s+(?:days|mornings|evenings|nights|weekends))\b",
    re.IGNORECASE,
)

#: "I make this chicken a lot", "I travel all the time": how often, said of the speaker's own plain present.
OFTEN_RE = re.compile(r"\b(?:a\s+lot(?!\s+of)|all\s+the\s+time)\b", re.IGNORECASE)

FUTURE_RE = re.compile(
    r"\b(?:tomorrow|tonight|later\s+(?:today|this\s+\w+)|soon|coming\s+up|upcoming|next\s+(?:week|"
    r"weekend|month|year|time|summer|"
    r"winter|spring|fall|autumn|semester|season|monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday|"
    r"morning|evening)|this\s+(?:coming\s+)?"
    r"(?:weekend|week|month|year|summer|winter|spring|fall|autumn|evening|afternoon|friday|"
    r"saturday|sunday|"
    r"monday|tuesday|wednesday|thursday)|in\s+(?:a|an|two|three|few|\d+)\s+(?:\w+\s+)?(?:days?|"
    r"weeks?|months?|"
    r"years?)|on\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b",
    re.IGNORECASE,
)

#: Words that make a clause a plan, whatever its grammatical tense ("we are planning a trip in October", "I can't
#: wait for our trip to Rome"): what it names lies ahead.
PLAN_RE = re.compile(
    r"\b(?:plan(?:s|ned|ning)?\s+(?:to|on|for|a|an|our|my)\b|planning|going\s+to|gonna|will|won't|'ll|"
    r"intend(?:s|ing)?\s+to|hop(?:e|es|ing)\s+to|look(?:s|ing)?\s+forward|can(?:'|no)?t\s+wait|"
    r"about\s+to|thinking\s+(?:about|of)|would\s+(?:like|love)\s+to|want(?:s)?\s+to|upcoming|coming\s+up)",
    re.IGNORECASE,
)

#: Common nouns from the lists above: capitalised at the start of a sentence they are still no
#: names.
COMMON_NOUNS = (
    OCCUPATIONS
    | PETS
    | EVENT_NOUNS
    | PLACE_NOUNS
    | HOBBY_ACTIVITIES
    | SPORTS
    | INSTRUMENTS
    | LANGUAGES
    | DEMONYMS
    | CONDITIONS
    | CREATIONS
    | frozenset(RELATIONS)
    | EMOTIONS
    | DIETS
    | IDENTITIES
    | TRAITS
)

#: Irregular past forms of doing something ("I built …", "we rode …"); regular "-ed" forms qualify
#: by their ending.
IRREGULAR_ACTIONS = word_set(
    """
    built drew ran swam sang rode drove flew caught won bought brought taught fought threw wore
    spent met took gave sold sent dug fed hung shot led held sat slept ate drank grew broke began
    wrote made paid hit set chose
    """
)

#: Past forms that report thinking, saying, perceiving, wanting or feeling rather than doing — and
#: auxiliaries.
NOT_ACTIONS = word_set(
    """
    thought felt said told asked knew realized realised noticed saw heard wanted needed hoped wished
    guessed meant forgot remembered seemed looked kept let put used mentioned showed texted called
    talked chatted worried wondered figured expected believed imagined supposed assumed decided
    agreed loved liked hated enjoyed appreciated missed tried got had did was were been used started
    finished ended happened reminded inspired encouraged motivated helped allowed asked answered
    replied responded shared posted planned learned learnt understood considered loved preferred
    waited stayed seemed sounded turned pushed pulled gotten managed handled dealt caused changed
    affected surprised interested excited amazed needed deserved belonged owed
    """
)

#: Past-tense verbs of doing something (not of thinking or saying): the clause is the activity.
ACTIVITY_VERBS = (
    "donated rescued climbed hiked biked cycled swam skied surfed camped sailed kayaked explored "
    "toured performed sang danced rehearsed practiced practised trained taught coached mentored "
    "planted gardened fished skated jogged walked shopped relaxed partied raised fundraised "
    "protested marched voted auditioned presented pitched launched opened renovated redecorated "
    "decorated repainted fixed repaired reorganized reorganised cleaned did went helped found "
    "done stumbled discovered came"
)


# -- verb forms ------------------------------------------------------------------------------------
PARTICIPLES = word_set(
    "been done gone seen made taken written eaten given driven gotten forgotten chosen broken "
    "spoken stolen woken fallen ridden hidden beaten proven known grown shown drawn flown thrown "
    "sworn worn torn begun run swum sung won lost met found bought brought built left felt kept "
    "taught thought told sold sent spent read heard held led paid said stood understood become "
    "come had put hurt quit set shut cut let hit got"
)
PAST_FORMS_TEXT = """
    went took got made had did saw met ran won lost bought brought built began came became left felt
    found gave kept knew learnt said sent spent taught thought told wrote drew flew grew threw ate
    drank swam sang rode drove broke chose fell forgot held led sold sat slept spoke stood
    understood woke wore caught fought dug fed hung lit shot stuck tore wept quit put set hurt cut
    paid heard
"""
PAST_FORMS = frozenset(PAST_FORMS_TEXT.split())
NOT_PAST_ED = word_set("need needed feed seed bleed speed exceed proceed succeed breed shed red bed")
ING_ADJECTIVES = word_set(
    "amazing interesting exciting boring annoying inspiring confusing surprising amusing charming "
    "disappointing embarrassing exhausting frightening fascinating overwhelming promising "
    "rewarding satisfying terrifying thrilling touching willing outgoing caring understanding "
    "outstanding"
)
