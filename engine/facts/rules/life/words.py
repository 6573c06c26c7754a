"""Word lists of the life shapes: relations, pets, common words that are never names, and the vocabularies of
health, food, vehicles and work that decide which slot a value belongs to.

General English and general world knowledge only (a labrador is a dog, picanha is meat, a Camry is a car); no
list names a particular person, place or sentence.
"""

from __future__ import annotations

from engine.facts.rules.lexicon import NOT_NAMES, OCCUPATIONS, PETS, RELATIONS, word_set

#: Relation nouns → the speaker's relationship predicate.
RELATION_PREDICATES: dict[str, str] = {
    **RELATIONS,
    **dict.fromkeys(word_set("fiancé fiancée fiance fiancee fiancé"), "has_partner"),
    **dict.fromkeys(word_set("ex ex-wife ex-husband ex-girlfriend ex-boyfriend ex-partner"), "has_relative"),
    **dict.fromkeys(word_set("flatmate housemate roomie"), "has_friend"),
    **dict.fromkeys(word_set("hubby missus wifey"), "has_spouse"),
    **dict.fromkeys(word_set("boys girls sons daughters"), "has_child"),
    **dict.fromkeys(word_set("grandson granddaughter grandchild grandkid"), "has_relative"),
    **dict.fromkeys(word_set("co-founder cofounder"), "has_colleague"),
    **dict.fromkeys(word_set("kids children sons daughters twins"), "has_child"),
}
FEMALE = word_set(
    """wife wifey missus girlfriend gf fiancée fiancee mother mom mum mama mother-in-law sister sis daughter aunt
    grandma grandmother granny niece stepmom stepdaughter stepsister sister-in-law granddaughter ex-wife
    ex-girlfriend"""
)
MALE = word_set(
    """husband hubby boyfriend bf fiancé fiance father dad papa father-in-law brother bro son uncle grandpa grandfather
    nephew stepdad stepson stepbrother brother-in-law grandson ex-husband ex-boyfriend"""
)
#: Animals and breeds: "our kelpie Ziggy" is a dog.
PET_WORDS = (
    PETS
    | word_set(
        """kelpie labrador lab retriever spaniel greyhound whippet lurcher dalmatian schnauzer shiba akita samoyed
    doberman boxer mastiff pitbull terrier collie sheepdog cockapoo labradoodle goldendoodle maltese pomeranian
    tabby siamese persian ragdoll"""
    )
    | frozenset({"guinea pig", "guinea pigs"})
)
DOG_BREEDS = word_set(
    """kelpie labrador lab retriever golden spaniel greyhound whippet lurcher dalmatian schnauzer shiba akita
    samoyed doberman boxer mastiff pitbull terrier collie sheepdog cockapoo labradoodle goldendoodle maltese
    pomeranian poodle beagle bulldog husky corgi shepherd dachshund chihuahua pug rottweiler"""
)
NOT_NAMES_LIFE = NOT_NAMES | word_set(
    """Hello Hi Hey Salam Oi Hola Bonjour Chào Good Big Small New Old First Second Third Update UPDATE Quick One
    Other Nothing Everything Something Perfect Lovely Splendid Brilliant Amazing Noted Done Ok OK Ahh Ahhh Yes
    Also Then Thanks Thank Merci Obrigada Obrigado Gracias Cảm Lindo Genial Perfeito Oya Abeg Classic Legend
    Happy Merry Christmas Easter Eid Ramadan Diwali Bless Sorry Wait Anyway Anyways Board Team Customer Customers
    Doctor Dr Mr Mrs Ms Miss Sir Madam Professor Prof Uni University College School Hospital Clinic Centre Center
    Company Institute Department Dear Regards Best Kind Warm English Spanish French German Polish Portuguese
    Italian Dutch Arabic Japanese Chinese Vietnamese Korean Russian Swedish Norwegian Danish Finnish Persian
    Turkish Greek Hebrew Hindi Urdu Canadian American British Irish Scottish Australian Europe European EU UK US
    USA AI CV LinkedIn Instagram WhatsApp Google Excel Uber Monday Tuesday Wednesday Thursday Friday Saturday
    Sunday January February March April May June July August September October November December Jan Feb Mar
    Apr Jun Jul Aug Sep Sept Oct Nov Dec Spring Summer Autumn Fall Winter Grade Year Class Level Section Part
    Chapter Question Topic Title Subject Note Notes Plan Step Steps Option Options"""
)
#: Common lower-case words that follow a relation noun and are never a name ("my boyfriend thinks …").
COMMON_WORDS = word_set(
    """a an the and or but so if of to in on at by for with from as into onto about over under after before
    since until till than then that this these those there here what which who whom whose when where why how
    is are was were be been being am have has had do does did done will would shall should can could may might
    must not no yes never always also just still even only really very too quite so such both each every all
    some any many much more most less least few lots lot it its it's he she they them their his her him we us
    our you your me my mine i im i'm ive i've id i'd says said say thinks thought think wants wanted want
    keeps kept keep gets got get goes went go comes came come makes made make takes took take gives gave give
    tells told tell asks asked ask loves loved love likes liked like hates hated hate needs needed need knows
    knew know sees saw see works worked work lives lived live plays played play runs ran run calls called call
    feels felt feel seems seemed seem looks looked look wishes wished wish hopes hoped hope tries tried try
    helps helped help uses used use finds found find shows showed show leaves left leave moves moved move
    starts started start stays stayed stay turns turned turn brings brought bring buys bought buy pays paid pay
    sends sent send eats ate eat drinks drank drink sleeps slept sleep reads read write writes wrote cooks
    cooked cook studies studied study teaches taught teach drives drove drive flies flew fly visits visited
    visit joins joined join gets passed pass dies died die born just finally already recently lately now today
    yesterday tomorrow tonight again too either neither else ever soon later once twice usually often
    sometimes rarely seriously literally basically totally honestly apparently probably maybe perhaps lol
    haha omg tbh btw idk imo pls plz thx ok okay well oh ah yeah yep nope sure right wrong good bad great nice
    cool fine happy sad mad angry tired sick busy free new old young little big small long short high low
    first last next other another same own whole half full part best better worse worst sweet lovely dear
    crazy lowkey highkey kinda sorta gonna wanna gotta who's what's that's there's here's he's she's they're
    we're you're isn't aren't wasn't weren't don't doesn't didn't can't won't wouldn't couldn't shouldn't
    haven't hasn't hadn't ain't cant dont doesnt didnt wont isnt arent wasnt havent hasnt also too at its
    years year months month weeks week days day hours time times way ways thing things stuff people person
    family friends home house work job school class car dog cat baby kids child children son daughter one two
    three four five six seven eight nine ten twenty hundred thousand"""
)

#: Named-value vocabularies (lower case).
DIET_WORDS = word_set("vegetarian vegan pescatarian pescetarian pescatarians keto paleo halal kosher carnivore")
MEAT_WORDS = word_set(
    """meat beef steak steaks pork bacon ham jamón jamon chicken turkey lamb mutton veal sausage sausages salami
    chorizo prosciutto picanha brisket ribs burger burgers karaage biryani kebab kebabs shawarma gyro duck goose
    venison goat meatballs meatball pepperoni hotdog hotdogs churrasco barbecue bbq wings nuggets schnitzel
    carnitas asada pastor"""
)
FISH_WORDS = word_set(
    """fish salmon tuna cod sardines anchovies shrimp prawns prawn calamares calamari squid octopus crab lobster
    mussels oysters clams scallops seafood sushi sashimi"""
)
DAIRY_EGG_WORDS = word_set("cheese milk butter cream yogurt yoghurt egg eggs omelette honey gelatin")
ALCOHOL_WORDS = word_set(
    """alcohol wine wines beer beers ale lager cider whisky whiskey vodka gin rum tequila mezcal sake soju cocktail
    cocktails prosecco champagne cava sangria spritz margarita mojito booze drinks pint pints"""
)
SMOKING_WORDS = word_set(
    "smoke smoking smoker cigarette cigarettes cigar cigars shisha hookah vape vaping tobacco joint"
)
CONDITION_WORDS = word_set(
    """asthma diabetes diabetic adhd autism anxiety depression ptsd ocd bipolar epilepsy migraine migraines
    arthritis osteoarthritis cancer insomnia hypertension eczema psoriasis celiac coeliac crohn's crohns ibs lupus
    fibromyalgia dyslexia scoliosis tinnitus hypothyroidism hyperthyroidism hypothyroid thyroid cholesterol
    gout sciatica endometriosis pcos anemia anaemia glaucoma cataracts apnea apnoea copd emphysema psoriasis
    rosacea acne allergies hay-fever hayfever intolerance intolerant lactose gluten dermatitis vertigo
    osteoporosis hernia tendinitis tendonitis gerd reflux diverticulitis colitis dementia concussion shingles angina
    afib bursitis prediabetes pre-diabetes hashimoto's sinusitis fibroids adenomyosis neuropathy"""
)
#: Conditions of more than one word ("a herniated disc L4-L5", "kidney stones").
CONDITION_PHRASES = (
    "herniated disc",
    "slipped disc",
    "bulging disc",
    "disc herniation",
    "kidney stones",
    "heart condition",
    "heart disease",
    "sleep apnea",
    "sleep apnoea",
    "high blood pressure",
    "low blood pressure",
    "acid reflux",
    "multiple sclerosis",
    "chronic fatigue",
    "long covid",
    "carpal tunnel",
    "plantar fasciitis",
    "atrial fibrillation",
    "ulcerative colitis",
    "iron deficiency",
    "vitamin d deficiency",
    "b12 deficiency",
)
MEDICATION_SUFFIXES = (
    "statin",
    "pril",
    "sartan",
    "olol",
    "dipine",
    "mab",
    "cillin",
    "mycin",
    "azole",
    "prazole",
    "xine",
    "pine",
    "pam",
    "lam",
    "tidine",
    "formin",
    "triptan",
    "profen",
    "amol",
    "oxetine",
    "aline",
    "ide",
    "one",
)
MEDICATION_WORDS = word_set(
    """ventolin seretide symbicort inhaler insulin thyroxine levothyroxine eltroxin metformin aspirin paracetamol
    ibuprofen tylenol advil prednisone warfarin lithium melatonin antihistamine antihistamines cetirizine
    loratadine epipen sertraline fluoxetine citalopram escitalopram omeprazole lansoprazole ramipril lisinopril
    amlodipine atorvastatin rosuvastatin simvastatin propranolol metoprolol bisoprolol amoxicillin penicillin
    ritalin adderall concerta zoloft prozac lexapro wellbutrin xanax valium pill pills tablets"""
)
VEHICLE_BRANDS = word_set(
    """toyota honda nissan ford vw volkswagen skoda škoda audi bmw mercedes tesla volvo kia hyundai mazda subaru
    peugeot renault citroen citroën fiat opel seat chevrolet chevy dodge jeep ram gmc lexus porsche mini
    mitsubishi suzuki dacia jaguar cupra polestar byd maxus"""
)
VEHICLE_MODELS = word_set(
    """ibiza leon arona ateca clio captur megane twingo kangoo 500 panda punto tipo corsa mokka insignia zafira
    fiesta kuga puma mondeo galaxy octavia kamiq karoq enyaq kodiaq scala t-roc id.3 id.4 touran sharan caddy
    prius aygo c-hr land-cruiser tacoma tundra highlander camry corolla auris avensis jazz hr-v cr-v
    swift vitara jimny micra note navara x-trail ariya outlander asx eclipse i10 i20 i30 santa-fe kona
    picanto rio ceed niro sorento sportage stonic model-3 model-y 3 cx-30 mx-5 forester legacy xv
    civic accord corolla camry prius rav4 hilux yaris golf passat polo tiguan kodiaq octavia fabia superb
    transit e-transit focus fiesta ranger mustang f-150 model leaf qashqai juke patrol sportage tucson i30 clio
    megane 308 208 3008 astra corsa fit crv cr-v outback forester impreza cx-5 mazda3 a4 a3 x5 jetta e-golf
    ioniq kona niro zoe f150 f-250 f250 silverado sierra tahoe suburban equinox malibu colorado impala camaro
    corvette wrangler cherokee compass durango charger challenger explorer escape bronco expedition edge sienna
    4runner odyssey ridgeline altima sentra rogue frontier elantra sonata optima forte crosstrek ascent miata
    beetle"""
)
VEHICLE_NOUNS = word_set("car van truck pickup suv motorbike motorcycle scooter bike e-bike caravan camper minivan")
#: Things that become a "habit" slot: a stopped or kept activity ("quit smoking", "stopped singing").
LANGUAGE_WORDS = word_set(
    """english spanish french german italian portuguese dutch swedish norwegian danish finnish polish czech
    russian ukrainian greek turkish arabic hebrew persian farsi hindi urdu bengali punjabi tamil telugu marathi
    gujarati chinese mandarin cantonese japanese korean vietnamese thai indonesian malay tagalog swahili yoruba
    igbo hausa zulu xhosa afrikaans amharic latin catalan basque galician estonian latvian lithuanian hungarian
    romanian bulgarian serbian croatian bosnian slovak slovenian icelandic irish welsh pidgin"""
)

#: Head nouns of job titles ("UX designer", "audit senior", "COO", "pharmacienne adjointe").
ROLE_HEADS = (
    (OCCUPATIONS - word_set("model guide lead owner volunteer student retiree intern gamer"))
    | word_set(
        """associate paediatrician pediatrician coo ceo cto cfo cmo vp executive co-owner bassist guitarist drummer
    vocalist auditor analyst roaster pharmacienne hygienist architect physician gp registrar resident
    anaesthetist anesthetist radiologist sonographer midwife carer caregiver clerk solicitor barrister notary
    advocate economist underwriter actuary strategist planner buyer merchandiser copywriter owner-chef
    technologist mechanic welder machinist foreman labourer laborer handyman housekeeper concierge steward
    joiner roofer plasterer bricklayer tiler decorator glazier mason landscaper porter stylist beautician
    tattooist sommelier dispatcher paramedic optometrist dentist hygienist orthodontist podiatrist
    physiotherapist physio osteopath chiropractor psychotherapist counsellor nanny childminder caretaker
    warden ranger curator archivist librarian cartographer surveyor estimator planner scheduler coordinator
    administrator receptionist cashier teller clerk
    stewardess flight-attendant cabin-crew postman postwoman courier dispatcher controller inspector"""
    )
    | word_set("owner senior lead")
)
#: Leading words that are not part of a job title.
ROLE_MODIFIERS_STOP = word_set(
    """so very really such also just now still currently actually officially basically technically finally
    new first proud happy excited a an the as at in on of for to and but or my your our his her their its
    i me we you he she they it this that been being be is am are was were totally honestly kind sort like
    pretty quite too more most best good great full only single"""
)
