"""Class lists and small vocabularies the synthetic answers draw from.

Class lists are the ones MLE-bench hard-codes (dog breeds, leaf species, RANZCR and Jigsaw labels), so
column names and orders match the real answers. The text vocabularies are invented but realistic.
"""

DOG_BREEDS: tuple[str, ...] = tuple(
    ["affenpinscher", "afghan_hound", "african_hunting_dog", "airedale", "american_staffordshire_terrier", "appenzeller", "australian_terrier", "basenji", "basset", "beagle", "bedlington_terrier", "bernese_mountain_dog", "black-and-tan_coonhound", "blenheim_spaniel", "bloodhound", "bluetick", "border_collie", "border_terrier", "borzoi", "boston_bull", "bouvier_des_flandres", "boxer", "brabancon_griffon", "briard", "brittany_spaniel", "bull_mastiff", "cairn", "cardigan", "chesapeake_bay_retriever", "chihuahua", "chow", "clumber", "cocker_spaniel", "collie", "curly-coated_retriever", "dandie_dinmont", "dhole", "dingo", "doberman", "english_foxhound", "english_setter", "english_springer", "entlebucher", "eskimo_dog", "flat-coated_retriever", "french_bulldog", "german_shepherd", "german_short-haired_pointer", "giant_schnauzer", "golden_retriever", "gordon_setter", "great_dane", "great_pyrenees", "greater_swiss_mountain_dog", "groenendael", "ibizan_hound", "irish_setter", "irish_terrier", "irish_water_spaniel", "irish_wolfhound", "italian_greyhound", "japanese_spaniel", "keeshond", "kelpie", "kerry_blue_terrier", "komondor", "kuvasz", "labrador_retriever", "lakeland_terrier", "leonberg", "lhasa", "malamute", "malinois", "maltese_dog", "mexican_hairless", "miniature_pinscher", "miniature_poodle", "miniature_schnauzer", "newfoundland", "norfolk_terrier", "norwegian_elkhound", "norwich_terrier", "old_english_sheepdog", "otterhound", "papillon", "pekinese", "pembroke", "pomeranian", "pug", "redbone", "rhodesian_ridgeback", "rottweiler", "saint_bernard", "saluki", "samoyed", "schipperke", "scotch_terrier", "scottish_deerhound", "sealyham_terrier", "shetland_sheepdog", "shih-tzu", "siberian_husky", "silky_terrier", "soft-coated_wheaten_terrier", "staffordshire_bullterrier", "standard_poodle", "standard_schnauzer", "sussex_spaniel", "tibetan_mastiff", "tibetan_terrier", "toy_poodle", "toy_terrier", "vizsla", "walker_hound", "weimaraner", "welsh_springer_spaniel", "west_highland_white_terrier", "whippet", "wire-haired_fox_terrier", "yorkshire_terrier"]
)

LEAF_SPECIES: tuple[str, ...] = tuple(
    ["Acer_Capillipes", "Acer_Circinatum", "Acer_Mono", "Acer_Opalus", "Acer_Palmatum", "Acer_Pictum", "Acer_Platanoids", "Acer_Rubrum", "Acer_Rufinerve", "Acer_Saccharinum", "Alnus_Cordata", "Alnus_Maximowiczii", "Alnus_Rubra", "Alnus_Sieboldiana", "Alnus_Viridis", "Arundinaria_Simonii", "Betula_Austrosinensis", "Betula_Pendula", "Callicarpa_Bodinieri", "Castanea_Sativa", "Celtis_Koraiensis", "Cercis_Siliquastrum", "Cornus_Chinensis", "Cornus_Controversa", "Cornus_Macrophylla", "Cotinus_Coggygria", "Crataegus_Monogyna", "Cytisus_Battandieri", "Eucalyptus_Glaucescens", "Eucalyptus_Neglecta", "Eucalyptus_Urnigera", "Fagus_Sylvatica", "Ginkgo_Biloba", "Ilex_Aquifolium", "Ilex_Cornuta", "Liquidambar_Styraciflua", "Liriodendron_Tulipifera", "Lithocarpus_Cleistocarpus", "Lithocarpus_Edulis", "Magnolia_Heptapeta", "Magnolia_Salicifolia", "Morus_Nigra", "Olea_Europaea", "Phildelphus", "Populus_Adenopoda", "Populus_Grandidentata", "Populus_Nigra", "Prunus_Avium", "Prunus_X_Shmittii", "Pterocarya_Stenoptera", "Quercus_Afares", "Quercus_Agrifolia", "Quercus_Alnifolia", "Quercus_Brantii", "Quercus_Canariensis", "Quercus_Castaneifolia", "Quercus_Cerris", "Quercus_Chrysolepis", "Quercus_Coccifera", "Quercus_Coccinea", "Quercus_Crassifolia", "Quercus_Crassipes", "Quercus_Dolicholepis", "Quercus_Ellipsoidalis", "Quercus_Greggii", "Quercus_Hartwissiana", "Quercus_Ilex", "Quercus_Imbricaria", "Quercus_Infectoria_sub", "Quercus_Kewensis", "Quercus_Nigra", "Quercus_Palustris", "Quercus_Phellos", "Quercus_Phillyraeoides", "Quercus_Pontica", "Quercus_Pubescens", "Quercus_Pyrenaica", "Quercus_Rhysophylla", "Quercus_Rubra", "Quercus_Semecarpifolia", "Quercus_Shumardii", "Quercus_Suber", "Quercus_Texana", "Quercus_Trojana", "Quercus_Variabilis", "Quercus_Vulcanica", "Quercus_x_Hispanica", "Quercus_x_Turneri", "Rhododendron_x_Russellianum", "Salix_Fragilis", "Salix_Intergra", "Sorbus_Aria", "Tilia_Oliveri", "Tilia_Platyphyllos", "Tilia_Tomentosa", "Ulmus_Bergmanniana", "Viburnum_Tinus", "Viburnum_x_Rhytidophylloides", "Zelkova_Serrata"]
)

RANZCR_LABELS: tuple[str, ...] = (
    "ETT - Abnormal",
    "ETT - Borderline",
    "ETT - Normal",
    "NGT - Abnormal",
    "NGT - Borderline",
    "NGT - Incompletely Imaged",
    "NGT - Normal",
    "CVC - Abnormal",
    "CVC - Borderline",
    "CVC - Normal",
    "Swan Ganz Catheter Present",
)
RANZCR_PREVALENCE: tuple[float, ...] = (
    0.003,
    0.038,
    0.24,
    0.009,
    0.018,
    0.09,
    0.16,
    0.106,
    0.28,
    0.71,
    0.028,
)
RANZCR_SCORED = RANZCR_LABELS[:9]  # MLE-bench grades 9 of the 11 (README known issue #30)

JIGSAW_LABELS: tuple[str, ...] = ("toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate")
JIGSAW_PREVALENCE: tuple[float, ...] = (0.095, 0.0057, 0.058, 0.0033, 0.054, 0.011)

PLANT_LABELS: tuple[str, ...] = ("healthy", "multiple_diseases", "rust", "scab")
SPOOKY_AUTHORS: tuple[str, ...] = ("EAP", "HPL", "MWS")

# Insult-detection comments: neutral and insulting fragments, joined into quoted sentences.
NEUTRAL_WORDS = ["the", "game", "last", "night", "was", "great", "I", "think", "we", "should", "wait", "for", "the", "results", "because", "this", "policy", "has", "worked", "before", "and", "nobody", "expected", "such", "a", "good", "season", "thanks", "for", "sharing", "the", "article", "about", "taxes", "schools", "roads", "weather", "music", "movies", "council", "election", "budget", "prices", "players", "coach", "fans"]
INSULT_WORDS = ["idiot", "moron", "stupid", "loser", "clown", "fool", "pathetic", "ignorant", "dumb", "troll", "liar", "coward", "jerk"]

# Text normalisation: (before, after, weight). Most tokens are unchanged (PLAIN, PUNCT).
EN_TOKENS: tuple[tuple[str, str, float], ...] = (
    *[(w, w, 3.0) for w in ["the", "of", "and", "in", "a", "to", "was", "is", "for", "on", "as", "by", "with", "he", "that", "at", "from", "his", "it"]],
    *[(w, w, 1.0) for w in ["an", "were", "are", "which", "be", "this", "has", "also", "or", "had", "first", "not", "their", "its", "new"]],
    *[(w, w, 0.5) for w in ["Brazil", "Paris", "Elizabeth", "railway", "album", "county", "season", "river", "church"]],
    *[(p, p, 4.0) for p in (".", ",")],
    *[(p, p, 0.8) for p in ("-", ":", "(", ")", '"', "'", ";")],
    ("1995", "nineteen ninety five", 0.4),
    ("2010", "twenty ten", 0.4),
    ("2006", "two thousand six", 0.3),
    ("12", "twelve", 0.3),
    ("3", "three", 0.3),
    ("100", "one hundred", 0.2),
    ("$5", "five dollars", 0.1),
    ("£10", "ten pounds", 0.05),
    ("km", "kilometers", 0.1),
    ("Dr.", "doctor", 0.1),
    ("St.", "saint", 0.1),
    ("U.S.", "u s", 0.15),
    ("BBC", "b b c", 0.1),
    ("2nd", "second", 0.1),
    ("19th", "nineteenth", 0.1),
    ("1/2", "one half", 0.05),
    ("3.5", "three point five", 0.05),
    ("10%", "ten percent", 0.1),
    ("January 1, 2010", "january first twenty ten", 0.1),
    ("5:30", "five thirty", 0.05),
    ("e.g.", "for example", 0.05),
    ("vs.", "versus", 0.05),
    ("&", "and", 0.1),
    ("kg", "kilograms", 0.05),
    ("II", "the second", 0.05),
    ("www.bbc.co.uk", "w w w dot b b c dot c o dot u k", 0.03),
)

RU_TOKENS: tuple[tuple[str, str, float], ...] = (
    *[(w, w, 3.0) for w in ["в", "и", "на", "с", "по", "не", "что", "из", "к", "а", "он"]],
    *[(w, w, 1.0) for w in ["был", "его", "также", "от", "для", "году", "который", "как", "это", "время", "город", "район"]],
    *[(w, w, 0.5) for w in ["России", "Москва", "Санкт-Петербург", "области", "реки", "церковь", "альбом", "сезон"]],
    *[(p, p, 4.0) for p in (".", ",")],
    *[(p, p, 0.8) for p in ("—", ":", "(", ")", "«", "»", '"')],
    ("1995", "тысяча девятьсот девяносто пятого", 0.4),
    ("2010", "две тысячи десятого", 0.4),
    ("г.", "года", 0.4),
    ("км", "километров", 0.1),
    ("XIX", "девятнадцатого", 0.1),
    ("5", "пять", 0.2),
    ("10", "десять", 0.2),
    ("1", "один", 0.2),
    ("100", "сто", 0.1),
    ("%", "процентов", 0.1),
    ("т.", "том", 0.05),
    ("см", "сантиметров", 0.05),
    ("25 мая", "двадцать пятого мая", 0.1),
    ("Google", "г_trans у_trans г_trans л_trans", 0.05),
    ("Tiger", "т_trans а_trans й_trans г_trans е_trans р_trans", 0.03),
    ("BBC", "b b c", 0.03),
)
