"""The whole case on the sheet (issue 30): allocations, the base and role of each percent, people, limits, horizons,
and what an amount is for (a commitment, a liability, income, an expense).

extract.py reads the quantities and labels them; refine(problem, facts) then
- reads allocations written with slashes ("target 60/25/15 equities/bonds/alternatives; today 71/19/10", "60/40",
  "a 70/30 split"): one percent a share, its class as label ("equities target" for a target), role target or share,
  base the whole ("portfolio", or the amount the sentence names);
- gives a percent with no base the amount its sentence is split from ("Portfolio CHF 2M: 40% Swiss equities",
  "5% a year of the endowment"), and every percent a role (share, target, spending, tax, growth, return, fee);
- reads people: a name with an age ("Anna (58) and her husband Marc (61)": person Anna, client; "Anna's age"),
  a relation with an age ("her husband, 61"), and counts ("three children, one grandchild");
- turns a bound into a limit ("a cash floor of 18 months of expenses", "keep at least CHF 200k in cash",
  "no more than 10% in one issuer") with its role (floor, cap, minimum, maximum), unit and base;
- reads horizons and deadlines ("over 4 years", "within 9 months", "by 2031", "before retiring at 61");
- gives an amount its role (commitment, liability, income, expense, holding) and, where its label is bare, the words
  the client named it with ("pension buy-in capacity").
The words each reading keys on are the tables at the top of this module.
"""

from __future__ import annotations

import re

from reasoning.facts.phrases import MONTH_NAMES
from reasoning.facts.quantities import NUMBER_WORDS, WORDS, parse_number, words_value
from reasoning.facts.sheet import Fact

# ---- the words -----------------------------------------------------------------------------------------------------

RELATIONS = {  # a word for a person -> (label, role)
    "husband": ("husband", "spouse"), "wife": ("wife", "spouse"), "spouse": ("spouse", "spouse"),
    "partner": ("partner", "partner"), "son": ("son", "child"), "sons": ("sons", "child"),
    "daughter": ("daughter", "child"), "daughters": ("daughters", "child"), "child": ("child", "child"),
    "children": ("children", "child"), "kids": ("children", "child"), "kid": ("child", "child"),
    "stepchildren": ("stepchildren", "child"), "stepsons": ("stepsons", "child"), "stepdaughters": ("stepdaughters", "child"), "stepson": ("stepson", "child"), "stepdaughter": ("stepdaughter", "child"),
    "grandchild": ("grandchild", "grandchild"), "grandchildren": ("grandchildren", "grandchild"),
    "grandkids": ("grandchildren", "grandchild"), "grandson": ("grandson", "grandchild"),
    "grandsons": ("grandsons", "grandchild"), "granddaughter": ("granddaughter", "grandchild"),
    "granddaughters": ("granddaughters", "grandchild"), "heir": ("heir", "heir"), "heirs": ("heirs", "heir"),
    "mother": ("mother", "parent"), "father": ("father", "parent"), "parents": ("parents", "parent"),
    "brother": ("brother", "sibling"), "brothers": ("brothers", "sibling"), "sister": ("sister", "sibling"),
    "sisters": ("sisters", "sibling"), "siblings": ("siblings", "sibling"), "nephew": ("nephew", "beneficiary"),
    "nephews": ("nephews", "beneficiary"), "niece": ("niece", "beneficiary"), "nieces": ("nieces", "beneficiary"),
    "beneficiaries": ("beneficiaries", "beneficiary"), "beneficiary": ("beneficiary", "beneficiary"),
    "kinder": ("children", "child"), "kindern": ("children", "child"), "söhne": ("sons", "child"),
    "töchter": ("daughters", "child"), "enkel": ("grandchildren", "grandchild"), "enkelkinder": ("grandchildren", "grandchild"),
    "enfants": ("children", "child"), "petits-enfants": ("grandchildren", "grandchild"),
    "twins": ("twins", "child"), "triplets": ("triplets", "child"),
}  # fmt: skip
COUNT_WORDS = {"a": 1, "an": 1, "one": 1, "single": 1, "only": 1, "ein": 1, "eine": 1, "einen": 1, "zwei": 2,
               "drei": 3, "vier": 4, "fünf": 5, "sechs": 6, "un": 1, "une": 1, "deux": 2, "trois": 3, "quatre": 4,
               "twin": 2}  # fmt: skip
NOT_A_NAME = set(
    "The A An Our Their His Her Client Clients Kunde Kundin Mandant Mandantin Portfolio Target Today Assets Age "
    "Cash Bonds Equities Goal Goals Note Notes Widow Widower Couple Family Founder Foundation Trust Retired Married "
    "Both He She They We I It This That Income Salary Pension Spending Expenses Costs House Home Mr Mrs Ms Dr "
    "Husband Wife Son Daughter Children Mother Father Also And But Plus Age Ages Aged Current Currently Now "
    "Liabilities Constraints Constraint Horizon Deadline Wants Needs Year Years Total Holdings Situation Case "
    "Allocation Mandate Endowment Board Company Firm Estate Tax Taxes Objective Objectives Facts Client's "
    # the heading words of an advisor's note ("Policy 35/35/20/10", "Thesis: rates fall"): never a person
    "Policy Thesis Strategy Strategic Benchmark Guideline Guidelines Liquidity Annual Monthly Open Max Min Maximum "
    "Minimum Actual Budget Reserve Risk Plan Plans Dear Follow Today's Wants Cannot Must Keep Gift Gifts Spouse "
    "Children Grandchildren Liability Debt Mortgage Property Real Private Public Fund Funds Capital Reserves "
    "Own Owns Hold Holds Control Controls "  # a note's verb first: "Own 100% of an HVAC S corp"
    "Roughly About Around Nearly Almost Approximately Some Just Over Under Only Another Perhaps Maybe".split()  # a hedge
)
GROUPS = {"twins": 2, "triplets": 3}  # a word for a number of people: "the twins" are two children
ALLOCATION_CLASSES_2 = ("equities", "bonds")  # "60/40" with no classes named: the convention
TARGET_CUE = r"target\w*|aim\w*|goal|policy|strategic|strategy|guidelines?|model|benchmark|neutral|to|towards?|into|should\s+be|wants?|desired|asks?\s+for|regulations?|mandated?|long-term|ziel\w*|soll\w*|strategie|cible"
# "drifted to 72%", "has risen to 68%": where a holding went by itself is today's share, its "to" no target cue
CURRENT_CUE = r"(?:drifted|risen|rose|fallen|fell|grown|grew|climbed|slipped|crept|sunk|sank)(?:\s+(?:up|down|back))?\s+to|today(?:['’]s)?|currently|current|now|actual|actually|is|are|sits?|stands?|drifted|from|was|presently|at\s+the\s+last\s+count|aktuell|heute|ist|effective"
WHOLE_WORDS = r"portfolio|assets|endowment|mandate|wealth|investments|account|depot|holdings|fund|savings|corpus|capital|net\s+worth|total|book|compte-titres|foundation|estate"
PERCENT_ROLES = (  # (role, cue words near the percent), the first cue found nearest wins
    # "yielding 3.4% tax-free", "draw 25% tax-free": free of tax describes the money, it is no tax rate
    ("tax", r"tax(?!-(?:free|exempt|deferred|advantaged))\w*|levy|surtax|duty|withholding|NIIT|CGT|IHT|KESt|KapESt|VAT|MwSt|TVA|top\s+rate|excise|LTCG|STCG|\w*steuer\w*|impôt|bracket|marginal|rate\s+of\s+tax|capital\s+gains"),
    ("fee", r"fees?|TER|charges?|costs?\s+of|management\s+fee|expense\s+ratio|commission"),
    ("spending", r"spend\w*|payout|pay\s+out|pays?|distribut\w*|draws?|drawing|withdraw\w*|withdrawal|grants?|entnahme|ausschüttung\w*"),
    ("growth", r"grow\w*|growth|compound\w*|inflation|indexed|increase\w*|rises?|raises?|escalat\w*"),
    ("return", r"returns?|yield\w*|earns?|earning|coupon|interest|performance|rendite|gain\s+of"),
)


LINKING = re.compile(r"^(?:is|are|was|sits?|stands?)$", re.I)
PREPOSITION = re.compile(r"^(?:to|towards?|into|from)$", re.I)


def cue_in(words):
    """ "target" or "share" by the last cue word in `words`, else None. A weak cue ("is", a far "to") counts only where
    no other word is: "the new policy is 50/25/25" is the policy's target, "it is 58/22/20" today's mix, "adding
    equities to a CHF 18m portfolio that is 60% equities" the portfolio's mix today."""
    found = [("target" if w["t"] else "share", _weak(w, words))
             for w in re.finditer(rf"\b(?:(?P<t>{TARGET_CUE})|(?P<c>{CURRENT_CUE}))\b", words, re.I)]
    strong = [cue for cue, weak in found if not weak]
    return (strong or [cue for cue, _ in found] or [None])[-1]


def _weak(cue, words):
    """A linking verb is a weak cue; so is a preposition not right before the figures ("to a 55/30/15 mix" moves
    to a target, "to a CHF 18m portfolio that is 60% ..." names where money goes)."""
    return bool(LINKING.match(cue[0])) or (bool(PREPOSITION.match(cue[0])) and len(words) - cue.end() > 12)


def _number(words):
    words = words.strip()
    if words.lower() in COUNT_WORDS:
        return COUNT_WORDS[words.lower()]
    value = parse_number(words.replace(",", "."))
    if value is None:
        value = words_value(words)
    return value


DURATION = re.compile(
    rf"(?P<n>\d+(?:[.,]\d+)?|(?i:{WORDS})|(?i:a|an|one|a\s+half))(?:\s*-\s*|\s+)(?:(?i:tax|calendar|fiscal|financial)\s+)?(?P<u>(?i:months?|years?|yrs?|monate?n?|jahren?|mois|ans))\b"
)


def _duration(m):
    n = _number(m["n"]) if m["n"].lower() not in ("a half",) else 0.5
    if n is None:
        return None
    unit = m["u"].lower()
    return float(n), ("months" if unit.startswith(("mo", "mois")) else "years")


def _clean(words):
    words = re.sub(r"^(?:(?:the|a|an|her|his|their|its|our|my|any|each|per|in|of|one|single)\s+)+", "", words.strip(), flags=re.I)
    return " ".join(words.split()).strip(" .,;:")


# ---- allocations --------------------------------------------------------------------------------------------------

NUM = r"\d{1,3}(?:[.,]\d{1,2})?"
SLASHES = re.compile(rf"(?<![\w/.,$€£-])(?P<nums>{NUM}\s?%?(?:\s*/\s*{NUM}\s?%?){{1,5}})(?P<pct>\s*%)?(?![\w/]|[.,]\d)")
CLASS = r"[A-Za-zÀ-ÿ][\w&'’-]*(?:\s+(?!(?:portfolio|split|mix|allocation|today|now|currently|target|and|in|at|with|for|on|is|was|mandate|ratio|by|vs|versus|against|compared|than|of|to|from|a|an|the)\b)[A-Za-zÀ-ÿ][\w&'’-]*){0,2}"
CLASSES_AFTER = re.compile(rf"^\s*(?:split\s+|mix\s+|target\s+|allocation\s+|policy\s+)?(?:(?:in|of|between|across)\s+)?(?P<classes>{CLASS}(?:\s*/\s*{CLASS})+)")
# The word after the shares names them a target, whatever the clause before says ("drifted ... against a 60/40 policy").
TARGET_AFTER = re.compile(r"^\s*(?:%\s*)?(?:(?:equity|stock|bond|asset)[\w-]*\s+)?(?:target|policy|benchmark|guideline|mandate|strategic)\b", re.I)
CLASS_LIST_AFTER = re.compile(
    rf"^\s*(?:split|mix|allocation|portfolio)?\s*(?:of|in|between|across|into)\s+(?P<classes>{CLASS}(?:\s*,\s*{CLASS})*(?:,?\s+and\s+{CLASS}))"
)
CLASSES_BEFORE = re.compile(
    rf"(?P<classes>{CLASS}(?:\s*/\s*{CLASS})+)\s*(?:(?:mix|split|allocation|ratio|portfolio|weights?)\s*)?(?:(?:of|at|is|was|are|=|:|currently|today|now|target)\s*)*$",
    re.I,
)


# "50% equities, 35% bonds and 15% hedge funds", "45% equity / 30% fixed income / 25% alternatives"
SHARE_LIST = re.compile(rf"(?:\d[\d.,]*\s?%\s+{CLASS}(?:\s*,\s*|\s+and\s+|,\s+and\s+|\s*/\s*)){{1,6}}\d[\d.,]*\s?%\s+{CLASS}")


def allocations(problem, ends, amounts):
    """Percent facts of each slash allocation, in text order."""
    facts, last_classes = [], {}
    lists = [(m.end(), [_clean(c).lower() for c in re.findall(rf"\d[\d.,]*\s?%\s+({CLASS})", m[0])]) for m in SHARE_LIST.finditer(problem)]
    for m in SLASHES.finditer(problem):
        for end, classes in lists:  # "guideline 50% equities, 35% bonds, 15% hedge funds; actual 58% / 30% / 12%"
            if end <= m.start():
                last_classes[len(classes)] = classes
        numbers = [parse_number(n.strip(" %").replace(",", ".")) for n in m["nums"].split("/")]
        if any(n is None for n in numbers) or not 98 <= sum(numbers) <= 102 or min(numbers) < 0:
            continue
        sentence_start = max([e + 1 for e in ends if e < m.start()], default=0)
        before = problem[sentence_start : m.start()]
        after = problem[m.end() : min(e for e in ends if e >= m.end())]
        classes = None
        if c := CLASSES_AFTER.match(after):
            classes = [_clean(x).lower() for x in c["classes"].split("/")]
        elif (c := CLASS_LIST_AFTER.match(after)) and len(re.split(r",\s*|\s+and\s+", c["classes"])) == len(numbers):
            classes = [_clean(x).lower() for x in re.split(r",\s*|\s+and\s+", c["classes"])]
        elif c := CLASSES_BEFORE.search(before):
            classes = [_clean(x).lower() for x in c["classes"].split("/")]
        if classes and len(classes) != len(numbers):
            classes = None
        if not classes:
            classes = last_classes.get(len(numbers)) or (list(ALLOCATION_CLASSES_2) if len(numbers) == 2 else None)
        if not classes:
            continue
        last_classes[len(numbers)] = classes
        clause = re.split(r"[;,(]", before)[-1] if not c or c.start() > 0 else before
        cue = cue_in(clause)
        if cue is None and not clause.strip() and sentence_start and problem[sentence_start - 1] == ":":
            label = problem[max([e + 1 for e in ends if e < sentence_start - 1], default=0) : sentence_start - 1]
            cue = cue_in(label)  # "- Regulations: 35/30/20/15": the label before the colon
        role = "target" if TARGET_AFTER.match(after) else cue or "share"  # "drifted to 72% against a 60/40 target"
        base = whole_before(problem, m.start(), sentence_start, amounts)
        if re.match(r"^\s*(?:%\s*)?(?:[a-z]+\s+)?portfolio\b", after, re.I):  # "$7.4M in a classic 60/40 portfolio"
            bare = [a for a in amounts if sentence_start <= a.start < m.start() and (a.label in BARE or a.label.startswith("amount"))]
            for a in bare[-1:]:
                a.label = "portfolio"
            base = "portfolio"
        named = re.search(r"\b(?:for|in|of)\s+(?:the|her|his|their|its)\s+(?P<np>[\w-]+(?:\s+[\w-]+)?)", before)
        if named:
            from reasoning.facts import vocabulary

            said = vocabulary.canonical(named["np"])
            hits = [a for a in amounts if a.label.replace(" balance", "") in (said, named["np"].lower()) or a.label.split()[0] == named["np"].split()[0].lower()]
            if hits:
                base = hits[-1].label  # "For the compte-titres she asks for a 40/40/20 target"
        for number, cls, text_m in zip(numbers, classes, re.finditer(NUM, m["nums"])):
            start = m.start("nums") + text_m.start()
            label = f"{cls} target" if role == "target" else cls
            facts.append(Fact(label, "percent", float(number), "%", problem[start : start + len(text_m[0])], start,
                              start + len(text_m[0]), base=base, role=role))
    return facts


SMALL = r"(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|\d{1,2}(?:[.,]\d)?)"
BARE_LIST = re.compile(
    rf"(?<![\w-])(?P<nums>(?i:{SMALL})(?:\s*,\s*(?i:{SMALL}))*,?\s+and\s+(?i:{SMALL}))(?![\w-]|\s*(?:%|percent|per\s+cent|years?|months?|[A-Za-z]))"
)


def bare_lists(problem, facts, ends):
    """ "It sits at 65% stocks, 25% bonds and 10% real estate, against a policy of fifty-five, thirty-five and ten": a
    list of bare numbers that sum to a whole after as many shares: the same classes, another role (target where a
    target word leads it, else the current shares)."""
    out = []
    for m in BARE_LIST.finditer(problem):
        parts = re.split(r"\s*,\s*(?:and\s+)?|,?\s+and\s+", m["nums"])
        numbers = [_number(p) for p in parts]
        if any(n is None for n in numbers) or not 98 <= sum(numbers) <= 102 or len(numbers) < 2:
            continue
        earlier = [f for f in facts if f.kind == "percent" and f.end <= m.start() and f.role in ("share", "target")]
        group = earlier[-len(numbers) :]
        if len(group) != len(numbers) or not 98 <= sum(f.value for f in group) <= 102 or len({f.role for f in group}) != 1:
            continue
        if m.start() - group[-1].end > 160:
            continue  # the shares it answers are said just before it
        cue = cue_in(problem[group[-1].end : m.start()])
        role = cue or ("share" if group[0].role == "target" else "target")
        if role == group[0].role:
            continue
        at = m.start()
        for part, number, like in zip(parts, numbers, group):
            start = problem.index(part, at)
            at = start + len(part)
            cls = re.sub(r"\s+(?:share|target)$", "", like.label)
            out.append(Fact(f"{cls} target" if role == "target" else cls, "percent", float(number), "%", part, start, at,
                            base=like.base, role=role))
    return out


def whole_before(problem, at, sentence_start, amounts):
    """The whole an allocation or a list of shares is of: the amount just before it in its sentence or a heading,
    else the first amount named as a whole, else "portfolio"."""
    mine = [a for a in amounts if sentence_start <= a.start < at and a.role not in ("liability", "commitment")]
    if mine:
        return _name_whole(problem, mine[-1])
    if sentence_start > 0 and problem[sentence_start - 1] == ":":  # "$4.8M: 60% equities / 40% T-bills"
        heading = [a for a in amounts if a.end <= sentence_start and not problem[a.end : sentence_start - 1].strip()]
        if heading and heading[-1].role not in ("liability", "commitment"):
            return _name_whole(problem, heading[-1])
    return case_whole(problem, amounts, at)


def _name_whole(problem, whole):
    """A whole's label: a bare figure that shares are of is named as the text names its wholes, else "assets" where
    the client holds it ("She holds 2,1 Mio. EUR, of which"), else "portfolio"."""
    if whole.label in BARE - {"total assets", "assets"} or whole.label.startswith("amount"):
        if m := re.search(rf"\b({WHOLE_WORDS})\b", problem, re.I):
            whole.label = " ".join(m[1].lower().split())
        elif re.search(r"\b(?:holds?|has|owns?|have)\s+(?:about\s+|some\s+|roughly\s+)?$", problem[max(0, whole.start - 30) : whole.start], re.I):
            whole.label = "assets"
        else:
            whole.label = "portfolio"
    return whole.label


def case_whole(problem, amounts, at=None):
    """The whole a case's shares are of: the last amount before `at` named as a whole (portfolio, endowment,
    assets...), else the first such amount, else the whole the text names ("the endowment"), else "portfolio"."""
    at = len(problem) if at is None else at
    wholes = [a for a in amounts if re.search(rf"\b(?:{WHOLE_WORDS})\b", a.label, re.I) and a.role not in ("liability", "commitment")]
    before = [a for a in wholes if a.start < at]
    if before or wholes:
        return max(before or wholes, key=lambda a: a.value if a.unit == (before or wholes)[0].unit else 0).label
    held = [a for a in amounts if a.start < at and a.role in ("", "holding") and a.unit]
    if held:
        whole = max(held, key=lambda a: a.value)  # "Stiftungskapital 12,5 Mio. EUR": the largest holding
        if whole.label in BARE or whole.label.startswith("amount"):
            if m := re.search(r"\b(endowment|portfolio|foundation\s+assets|assets|mandate)\b", problem, re.I):
                whole.label = m[1].lower()  # "Lakeside School endowment, notes * $410M"
        return whole.label
    if m := re.search(r"\b(endowment|portfolio|foundation\s+assets|assets|mandate)\b", problem, re.I):
        return m[1].lower()
    return "portfolio"


# ---- percents: base and role --------------------------------------------------------------------------------------

CLASS_WORDS = re.compile(
    r"^\s*(?:(?:in|into|of)\s+)?(?:(?:global|swiss|us|u\.s\.|european|emerging|domestic|foreign|international|"
    r"developed|world|local|short|long|high|investment|private|public|listed|real|fixed|cash|other|hedged|unhedged|"
    r"government|corporate|inflation-linked|chf|usd|eur|[a-z]+-|\d+-(?:yr|year|y|month)s?\b)\S*\s+){0,3}"
    r"(?:equit\w*|stocks?|bonds?|fixed\s+income|cash|alternatives?|alts|real\s+assets|real\s+estate|property|"
    r"private\s+(?:equity|credit|markets)|hedge\s+funds?|gold|commodities|infrastructure|credit|munis|money\s+market|"
    r"treasur\w*|gilts|aktien|obligationen|anleihen|liquidität|immobilien|actions|obligations|liquidités|"
    r"small\s+caps?|growth|value|dividend\s+stocks|reits?|t-bills|etfs?|funds?|tech|shares)\b",
    re.I,
)
CLASS_NOUN = re.compile(
    r"\b(?:equit\w*|stocks?|bonds?|fixed\s+income|alternatives?|real\s+assets|real\s+estate|private\s+(?:equity|credit|markets)|"
    r"hedge\s+funds?|gold|commodities|infrastructure|munis|gilts|treasur\w*|semis|semiconductors?|tech|(?:small|mid|large)[- ]caps?|SCPI|REITs?|"
    r"luxury|exposure|positions?|holdings?)\b",
    re.I,
)
OF_LATER = re.compile(r"^\s*(?:a|per|each|every)\s+(?:year|annum)\s+of\s+(?:(?:the|her|his|their|its|our)\s+)?(?P<noun>[\w-]+(?:\s+[\w-]+)?)", re.I)


def percent_roles(problem, facts, ends, amounts):
    """Each percent's role, and a base where its sentence ties it to an amount or it is one share of a whole."""
    percents = [f for f in facts if f.kind == "percent" and not f.role]
    for f in percents:
        if f.value > 100 and re.fullmatch(r"\d{1,2},\d{3}\s?%", f.text):
            f.value = float(f.text.rstrip(" %").replace(",", "."))  # "26,375 %": a decimal comma
        sentence_start = max([e + 1 for e in ends if e < f.start], default=0)
        sentence_end = min(e for e in ends if e >= f.end)
        before, after = problem[sentence_start : f.start], problem[f.end : sentence_end]
        if sentence_start > 0 and problem[sentence_start - 1] == ":":  # "target: 35 % equities": its heading
            heading_start = max([e + 1 for e in ends if e < sentence_start - 1], default=0)
            before = problem[heading_start:sentence_start] + before
        label = f.label
        if label.endswith(" target") or label == "target":
            f.role = "target"
        else:
            f.role = _role_near(before, after)
            if f.role == "tax" and CLASS_WORDS.match(after) and not re.search(r"\btax", before[-30:] + after[:20], re.I):
                f.role = "share"  # "his SIPP is 92% equities": a share, whatever rule the SIPP has
            if re.search(r"conversion\s+rate|Umwandlungssatz|taux\s+de\s+conversion", before[-30:] + label, re.I):
                f.role = ""  # a pension's conversion rate: no share, no tax, no return
            elif label.endswith(" rate") and f.role == "share" and f.role != "target":
                f.role = "tax" if re.search(r"\btax|NIIT|duty|levy", label + before[-40:], re.I) else "return"
        if f.role == "share" and (who := STAKE_AFTER.match(after)):
            f.label = f"{who['who']}'s stake"  # "owned 70% by Erik (63) and 30% by his brother Nils"
            f.base = f.base or _company(problem, amounts)
        elif f.role == "share" and (who := STAKE_BEFORE.search(re.sub(r"\s*\(\s*\d{1,3}\s*\)", "", re.split(r"[;]", before)[-1]))) and who["who"] not in NOT_A_NAME:
            name = who["who"]
            if re.match(r"\s*each\b", after, re.I) and name.lower() in RELATIONS:
                name = "each " + RELATIONS[name.lower()][0].rstrip("s").replace("children", "child").replace("childre", "child")
            f.label = f"{name}'s stake"  # "Founder Klaus (67) holds 80 %, his sister Petra 20 %"
            f.base = f.base or _company(problem, amounts)
        elif f.role == "share" and OWNS_BEFORE.search(before) and OF_COMPANY_AFTER.match(after):
            who = OWNER_BEFORE.search(before) or SENTENCE_SUBJECT.match(before)
            owner = who["who"] if who and who["who"] not in NOT_A_NAME else ""
            f.label = f"{owner}'s stake" if owner else "stake"  # "Giorgio ... owns ninety percent of a packaging S.r.l."
            f.base = _company(problem, amounts)
        elif f.role == "share" and (verb := DISPOSE_BEFORE.search(before)) and (held := _stake_before(facts, f)):
            f.role, f.base = "target", held.base  # "Own 100% of an S corp. Dan wants to sell 60%": of the same company
            f.label = f"share to {verb['v'].lower().rstrip('s')}"
        elif f.role == "share" and (stake := STAKE_IN_AFTER.match(after)):
            f.base = f.base or _lower(stake["np"].split()[-1])  # "a 40% stake in a Reno car dealership"
            f.label = f"{f.base} stake"
        if f.label in ("percent", "rate", "tax rate") and f.role in ("tax", "return", "fee", ""):
            phrase = _phrase_before(re.split(r"[;,:(]", before)[-1])
            if phrase and not re.fullmatch(r"(?:is|are|of|at)", phrase):
                f.label = phrase  # "Oregon top rate 9.9%"
        if f.role == "tax" and (on := re.match(r"^\s*(?P<what>(?:[\w-]+\s+){0,2}?)on\s+(?:(?:the|her|his|their|its)\s+)?(?P<np>[\w-]+(?:\s+(?!and\b|or\b|for\b|in\b)[\w-]+){0,2})", after)):
            f.base = _tax_base(_lower(on["np"]), amounts)  # "a 30% flat tax on investment income"
            if on["what"].strip():
                f.label = _lower(on["what"].strip())
            elif f.label.endswith(" share"):
                f.label = _lower(_phrase_before(re.split(r"[;,:(]", before)[-1]) or "tax rate")
        if not f.base and (m := OF_LATER.match(after)):  # "5% a year of the endowment"
            noun = m["noun"].lower()
            named = [a for a in amounts if a.label.split()[0] == noun.split()[0]]
            f.base = named[-1].label if named else noun
        if f.role in ("share", "target") and CLASS_WORDS.match(after):
            start_of_list = _list_start(before)
            cue = cue_in(before[:start_of_list][-45:])
            if cue:
                f.role = cue
                if cue == "target" and f.label.endswith(" share"):
                    f.label = f.label[: -len(" share")] + " target"
            if not f.base:
                f.base = whole_before(problem, f.start, sentence_start, amounts)
        elif f.role in ("share", "target") and (cls := _class_before(before)):
            _class_first(f, cls, before, problem, sentence_start, amounts)
        if re.search(r"\bfrom\s+$", before) and (m := re.match(r"\s*to\s+(\d[\d.,]*)\s?%", after)):
            f.role = "share"  # "cut USD exposure from 45% to 20% of his portfolio": today, then the target
            later = next((g for g in percents if g.start == f.end + m.start(1)), None)
            thing = re.search(r"(?:\b(?:cut|cuts|reduce|reduces|bring|brings|raise|raises|increase|increases|take|takes|lift|lifts|move|moves|trim|trims|shift|shifts)\s+)(?P<np>[\w' -]{1,40}?)\s+from\s+$", before, re.I)
            if later is not None:
                later.role, later.label = "target", f"{_lower(thing['np'])} target" if thing else "target"
                if thing:
                    f.label = _lower(thing["np"])
                f.base = f.base or _of_amount(problem, later, amounts) or case_whole(problem, amounts, f.start)
                later.base = later.base or f.base
        if not f.base and f.role in ("spending", "fee"):
            f.base = case_whole(problem, amounts, f.start)
        if not f.base and f.role == "share" and (CLASS_NOUN.search(f.label) or CLASS_NOUN.search(re.split(r"[,;:]", before)[-1][-30:])):
            f.base = whole_before(problem, f.start, sentence_start, amounts)  # "UK equities 55%": a share of the whole
        if f.label.startswith("percent") and f.role in ("share", "target") and (c := CLASS_WORDS.match(after)):
            cls = _lower(re.sub(r"^\s*(?:in|into|of)\s+", "", c[0]).strip())  # "Wants 25% in 20-yr Treasuries"
            f.label = f"{cls} target" if f.role == "target" else cls
        if f.role in ("share", "target") and (f.base in BARE or f.base.startswith("amount")):
            bare = [a for a in amounts if a.label == f.base and a.start < f.start]
            if bare:
                f.base = _name_whole(problem, bare[-1])  # "She holds 2,1 Mio. EUR, of which 10 % in gold"
        if f.role != "share" and f.role != "target" and (whole := _amount_just_before(problem, f, amounts, sentence_start)) and IN_AFTER.match(after):
            f.role, f.base = "share", f.base or _name_whole(problem, whole)  # "$7.5M portfolio, 30% in NY munis yielding"
        elif f.role != "target" and not f.base and (whole := _amount_just_before(problem, f, amounts, sentence_start)) and IN_AFTER.match(after):
            f.base = _name_whole(problem, whole)  # "Portfolio CHF 4.6M, 12% in pharma today"
        if f.role in ("share", "growth", "spending") and (m := INTENT_BEFORE.search(before)) and not PERIODIC_AFTER.match(after):
            if not (f.role == "spending" and MOVED.search(m[0])):  # "raise the draw to 5%": still the spending rate
                _intended(f, facts, after)
        if f.role == "tax" and f.label.endswith(" share"):
            f.label = _phrase_before(re.split(r"[;,:(]", before)[-1]) or "tax rate"  # "KESt of 27,5 % applies": no share
        if f.label in ("percent", "rate") and f.role not in ("share", "target"):
            f.label = {"spending": "spending rate", "tax": "tax rate", "growth": "growth rate", "return": "expected return",
                       "fee": "fee"}[f.role]
    return facts


# "wants 20% by year-end", "plans to take 50 % as capital", "wants to raise that to 15 %": a share the client means
# to reach, once (not "wants to draw 4% a year", a rate)
INTENT_BEFORE = re.compile(
    r"\b(?:wants?|wanted|plans?|planned|aims?|intends?|would\s+like|hopes?|wishes)\s+(?:to\s+(?:raise|increase|lift|grow|"
    r"cut|reduce|trim|bring|take|get|move|draw|withdraw)\s+(?:(?:[\w'’-]+\s+){0,3}?(?:to|at)\s+)?)?"
    r"(?:(?:about|around|roughly|some|only)\s+)?$",
    re.I,
)
IN_AFTER = re.compile(r"\s+(?:(?:already|currently|now|today|mostly|largely)\s+)?(?:in|into)\s+\S", re.I)
MOVED = re.compile(r"\b(?:raise|increase|lift|grow|cut|reduce|trim|bring|move|get)\b", re.I)
PERIODIC_AFTER = re.compile(r"^\s*(?:(?!(?:within|in|over|by|for|inside)\b)[\w'’-]+\s+){0,5}?(?:(?:a|per|each|every)\s+(?:year|annum|month|quarter)|p\.a\.|annually|yearly)\b", re.I)
# "wants 25% as capital", "20% in bonds": the words after a percent that name its own thing
OWN_THING_AFTER = re.compile(r"^\s+(?:as|in|into|of|on)\s+\w", re.I)
SHARE_SUFFIX = re.compile(r"\s+(?:(?:today|now|currently)\s+)?share$")


def _intended(f, facts, after=""):
    """A percent the client means to reach is a target; with no whole or thing of its own it is the target of the
    share said just before it ("12% in pharma today; wants 20% by year-end": the pharma target, of the portfolio)."""
    f.role = "target"
    earlier = [g for g in facts if g.kind == "percent" and g.role == "share" and g.base and g.end <= f.start and f.start - g.end < 200]
    before = earlier[-1] if earlier else None
    if before is not None and not f.base and not OWN_THING_AFTER.match(after):
        f.base = before.base
        if f.label in ("percent", "growth rate", "spending rate") or f.label.endswith((" rate", "percent")):
            f.label = f"{SHARE_SUFFIX.sub('', before.label)} target"
    elif f.label.endswith(" share"):
        f.label = SHARE_SUFFIX.sub("", f.label) + " target"


def _tax_base(words, amounts):
    """What a tax rate is charged on, where that is an amount: an income measure ("on investment income") or an amount
    on the sheet ("on the gains" with "gains of £400k"); a class of asset or payment the rule covers ("CGT 24% on
    residential property", "KESt 27,5 % on dividends", "5,5 % on top") is its scope, not a base."""
    if m := re.search(r"^.*?\bincome\b", words):
        return m[0]  # "investment income applies": the measure, not the verb after it
    named = [a.label for a in amounts if a.label.split() and a.label.split()[0].lower() == words.split()[0]]
    return named[-1] if named else ""


def _amount_just_before(problem, f, amounts, sentence_start):
    """The amount a percent follows in its sentence across a comma ("$7.5M portfolio, 30% ..."), or None."""
    mine = [a for a in amounts if sentence_start <= a.start and a.end <= f.start and a.role not in ("liability", "commitment")]
    if mine and re.fullmatch(r"(?:\s+[\w-]+){0,2}\s*,\s*(?:(?:about|roughly|around|some|only|nearly)\s+)?", problem[mine[-1].end : f.start]):
        return mine[-1]
    return None


STAKE_AFTER = re.compile(
    rf"^\s*(?:owned\s+|held\s+)?by\s+(?:(?:his|her|their|the)\s+(?:{'|'.join(RELATIONS)})\s+)?(?P<who>(?-i:[A-ZÀ-Ý][a-zà-ÿ]+))(?!\s+(?:[A-Z]|&))",
    re.I,
)
STAKE_BEFORE = re.compile(
    r"(?:^\s*|[:]\s*|\b(?:founder|father|mother|sons?|daughters?|sisters?|brothers?|children|kids|nephews?|nieces?|wife|husband|his|her|the|partner|and|two|three|four|five|both)\s+|,\s*)(?P<who>(?-i:[A-ZÀ-Ý][a-zà-ÿ]+)|children|kids|sons|daughters)"
    r"\s+(?:(?:holds?|owns?|has|keeps?)\s+)?(?:(?:about|around|roughly|the\s+other|the\s+remaining)\s+)?$",
    re.I,
)
# "owns ninety percent of a packaging S.r.l.", "holds 100% of Keller Präzision AG": a stake in the company
OWNS_BEFORE = re.compile(r"\b(?:owns?|holds?|controls?)\s+(?:(?:about|around|roughly|all|only)\s+)?$", re.I)
OF_COMPANY_AFTER = re.compile(
    r"^\s+of\s+(?:(?:a|an|the|his|her|their|its)\s+)?(?:[\w&.'’-]+\s+){0,3}?(?:company|firm|business|dealership|"
    r"GmbH|AG|KG|S\.r\.l\.|S\.p\.A\.|SA|LLC|Inc\.?|partnership|practice|corp|corporation)(?!\w)",
    re.I,
)
# "a 40% stake (valued at $11.9M) in a Reno car dealership": the stake is of what it is in
STAKE_IN_AFTER = re.compile(
    r"^\s+(?:stake|interest|holding|share)\b(?:\s*\([^)]*\))?\s+in\s+(?:(?:a|an|the|his|her|their|its)\s+)?"
    r"(?P<np>[\w&'’-]+(?:\s+[\w&'’-]+){0,3}?)(?=\s*(?:[,.;:(]|$))",
    re.I,
)
# "sell 60% to a PE fund", "transfer 30 % to his son": a part of a stake the client means to part with
DISPOSE_BEFORE = re.compile(r"\b(?P<v>sell|sells|transfer|transfers|gift|gifts|give|gives|hand\s+over|pass\s+on)\s+(?:(?:about|around|roughly|another|a\s+further|the\s+remaining|only|up\s+to)\s+)?$", re.I)
OWNER_BEFORE = re.compile(r"(?-i:(?P<who>[A-ZÀ-Ý][a-zà-ÿ]+))\s*(?:\(\s*\d{1,3}\s*\)\s*)?(?:owns?|holds?|controls?)\s+(?:\w+\s+)?$")
SENTENCE_SUBJECT = re.compile(r"^\s*(?:(?:Client|Founder|Mr|Mrs|Ms|Dr)\.?\s+)?(?P<who>[A-ZÀ-Ý][a-zà-ÿ]+)\b")
ENTITY_NAME = re.compile(r"(?:[A-ZÀ-Ý][\w&.-]*\s+)+(?:GmbH\s*&\s*Co\.\s*KG|GmbH|AG|KG|S\.r\.l\.|LLC|Inc\.?|SA|S\.p\.A\.)|\bS\s*corp\b")


EARNINGS = re.compile(r"(?:annual\s+)?(?:EBITDA|EBIT|revenue|revenues|sales|turnover|profit|profits|earnings|net\s+income|dividends)\b", re.I)


def _stake_before(facts, f):
    """The last stake said before a percent (its base is the company), or None."""
    stakes = [g for g in facts if g.kind == "percent" and g.end <= f.start and g.label.endswith("stake") and g.base]
    return stakes[-1] if stakes else None


FLOOR_BEFORE = re.compile(r"\b(?:keep|keeps|min\.?|minimum(?:\s+of)?|at\s+least|no\s+less\s+than)\s+$", re.I)


def _company(problem, amounts):
    """What a stake is of: the company's value where an amount names it, else the company's name."""
    for a in sorted(amounts, key=lambda a: not re.search(r"value|valued|worth", problem[max(0, a.start - 30) : a.start] + a.label, re.I)):
        sentence = problem[max(0, a.start - 80) : a.end + 20]
        if FLOOR_BEFORE.search(problem[max(0, a.start - 20) : a.start]):
            continue  # "none in the business. Keep min. $1M personal cash": a floor, not what the company is worth
        if EARNINGS.match(a.label):
            continue  # "EBITDA $3.2M" beside the company is what it earns, not what it is worth
        if a.role in ("", "holding") and re.search(r"\b(?:company|firm|business|GmbH|KG|AG|corp|S\.r\.l\.|LLC|valued|equity\s+value)(?!\w)", sentence, re.I):
            if a.label in BARE or a.label in ("value", "KG", "AG", "GmbH", "company"):
                named = ENTITY_NAME.search(problem[max(0, a.start - 60) : a.start])
                a.label = " ".join(named[0].split()) if named else "company value"  # "Brunner Textil AG is valued at"
            return a.label
    m = ENTITY_NAME.search(problem)
    return " ".join(m[0].split()) if m else ""


def _of_amount(problem, f, amounts):
    m = re.match(r"\s*of\s+(?:(?:his|her|their|the|its|our)\s+)?", problem[f.end :])
    if not m:
        return ""
    inside = [a for a in amounts if f.end + m.end() <= a.start <= f.end + m.end() + 12]
    return inside[0].label if inside else ""


# "current: equities 52 %, bonds 30 %, cash 8 %": a list that names each class before its percent
CLASS_FIRST_ITEM = r"[A-Za-zÀ-ÿ][\w&'’-]*(?:\s+[A-Za-zÀ-ÿ][\w&'’-]*){0,2}\s+(?:at\s+)?"
CLASS_FIRST_RUN = re.compile(rf"(?:{CLASS_FIRST_ITEM}\d[\d.,]*\s?%\s*(?:,|\band\b)\s*)*{CLASS_FIRST_ITEM}$")


def _class_before(before):
    """The asset class named just before a percent ("cash 8 %" -> "cash"), or ""."""
    item = re.split(r"[,;:\n]|\band\b|\s-\s", before)[-1]
    m = CLASS_WORDS.match(item)
    if not m or item[m.end() :].strip() not in ("", "at"):
        return ""
    return _lower(re.sub(r"^\s*(?:in|into|of)\s+", "", m[0]).strip())


def _class_first(f, cls, before, problem, sentence_start, amounts):
    """A share named class first: its label the class, its role by the cue before the whole list ("strategy:",
    "current:"), its base the whole the list is of."""
    run = CLASS_FIRST_RUN.search(before)
    cue = cue_in(before[: run.start() if run else len(before)][-45:])
    if cue:
        f.role = cue
    if f.label.startswith("percent") or f.label in ("share", "target"):
        f.label = f"{cls} target" if f.role == "target" else cls
    if not f.base:
        f.base = whole_before(problem, f.start, sentence_start, amounts)


def _list_start(before):
    """Where a list of shares starts in the words before one of them ("guideline 50% equities, 35% bonds, ")."""
    m = re.search(r"(?:\d[\d.,]*\s?%\s+[^,;%\d]{1,30}(?:,\s*|\s+and\s+|\s*/\s*))+$", before)
    return m.start() if m else len(before)


TAX_RULE = re.compile(r"tax|surtax|surcharge|levy|duty|steuer|zuschlag|impôt|imposta|withholding|bracket", re.I)


def _role_near(before, after):
    """The role a cue word nearest the percent names, within its clause; else a share."""
    clause_before = re.split(r"[;,]", before)[-1][-60:]
    clause_after = re.split(r"[;,]", after)[0][:40]
    from reasoning.facts import regimes

    near = regimes.find_regimes(clause_before[-30:] + " " + clause_after[:25])
    if any(TAX_RULE.search(f"{m.name} {m.what}") for m in near):
        return "tax"  # "the 24% CGT rate", "Abgeltungsteuer of 26.375%"; not an account ("draw 25% of the SIPP")
    best, distance = "share", 10**6
    for role, cue in PERCENT_ROLES:
        for m in re.finditer(rf"\b(?:{cue})\b", clause_before, re.I):
            if len(clause_before) - m.end() < distance:
                best, distance = role, len(clause_before) - m.end()
        m = re.search(rf"\b(?:{cue})\b", clause_after, re.I)
        if m and m.start() < distance:
            best, distance = role, m.start()
    if re.search(r"\b(?:CPI|RPI|HICP|inflation)\s*\+\s*$", clause_before, re.I):
        return "return"  # "aims for CPI + 4%": a real return
    own = re.split(r"%|\band\b", clause_before)[-1]  # "aims for CPI + 4% and spends 3.5%": the aim is not this one's
    if re.search(rf"\b(?:{TARGET_CUE.replace('|to|towards?|into|', '|')})\b", own, re.I) and re.search(r"target|ziel|cible|aim", own, re.I):
        return "target"
    return best


# ---- people -------------------------------------------------------------------------------------------------------

REL = "|".join(sorted(map(re.escape, RELATIONS), key=len, reverse=True))
NAME = r"(?P<name>(?-i:[A-ZÀ-Ý][a-zà-ÿ]+(?:-[A-ZÀ-Ý][a-zà-ÿ]+)?))"
NAME_AGE = re.compile(
    rf"(?:(?P<rel>\b(?:{REL}))\s*,?\s+)?{NAME}\s*(?:\(\s*(?:age\s+|aged\s+)?(?P<a1>\d{{1,3}})\s*\)|,\s*(?:aged?\s+)?(?P<a2>\d{{1,3}})(?=\s*(?:[,.;:)]|and\b|und\b|$))|,?\s+(?:is|aged?)\s+(?P<a3>\d{{1,3}}|(?i:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?)(?![\w-]))\b"
    rf"|,\s*(?P<a4>(?i:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?))(?=\s*[,.;:])"
    rf"|\s+(?P<a5>\d{{2}})(?![.,]\d)(?=\s*(?:[/;)]|,(?!\d)|and\b|$)))",
    re.I,
)
REL_AGE = re.compile(rf"\b(?P<rel>{REL})\b\s*(?:\(\s*(?:age\s+)?(?P<a1>\d{{1,3}})\s*\)|,\s*(?:aged?\s+)?(?P<a2>\d{{1,3}})(?=\s*[,.;:)])|\s+(?:is\s+|aged?\s+)(?P<a3>\d{{1,3}})\b)", re.I)
REL_NAME = re.compile(rf"\b(?P<rel>{REL})\s*,?\s+{NAME}\b(?!\s*\()", re.I)
COUNT = re.compile(
    rf"(?<![\w-])(?P<n>\d{{1,2}}|(?i:{WORDS})|(?i:a|an|single|ein|eine|einen|zwei|drei|vier|fünf|sechs|un|une|deux|trois|quatre|twin))"
    rf"\s+(?:(?i:adult|grown(?:-up)?|young|minor|small|little|married|twin|step|adopted|erwachsene|kleine)\s+)?(?P<rel>(?i:children|kids|sons|daughters|"
    rf"grandchildren|grandkids|grandsons|granddaughters|heirs|siblings|brothers|sisters|nephews|nieces|beneficiaries|"
    rf"stepchildren|stepsons|stepdaughters|kinder|söhne|töchter|enkel|enkelkinder|enfants|petits-enfants|son|daughter|child|grandchild|"
    rf"grandson|granddaughter|heir|brother|sister|nephew|niece))\b"
)


def people(problem, facts, ends):
    """Person facts (named, related, counted) and the ages that belong to them relabelled ("Anna's age")."""
    found, ages, new_ages = [], [f for f in facts if f.kind == "age"], []
    named_spans = []
    for m in NAME_AGE.finditer(problem):
        name = m["name"]
        if name in NOT_A_NAME or name.lower() in RELATIONS or _a_place_or_known(name):
            continue
        figure = next(g for g in ("a1", "a2", "a3", "a4", "a5") if m[g])
        if any(f.kind in ("percent", "amount", "limit") and f.start <= m.start(figure) < f.end for f in facts):
            continue  # "Policy 35/35/20/10": a share, not an age
        age = next((a for a in ages if a.start == m.start(figure)), None)
        rel = (m["rel"] or "").lower()
        young = rel in RELATIONS and RELATIONS[rel][1] in ("child", "grandchild") and m[figure].isdigit()
        if age is None:  # "Lisa 61 / Tom 63": an age the quantity reader has no cue for
            value = _number(m[figure])
            if value is None or not (0 if young else 16) <= value <= 105:
                continue
            age = Fact("age", "age", float(value), "years", m[figure], m.start(figure), m.end(figure))
            new_ages.append(age)
        role = RELATIONS[rel][1] if rel in RELATIONS else ""
        if not role:
            role = _role_of_named(problem, m.start("name"), found)
        found.append(Fact(name, "person", 1, "people", name, m.start("name"), m.end("name"), role=role))
        named_spans.append((m.start(), m.end()))
        if age is not None:
            age.label, age.role = f"{name}'s age", role
    for m in REL_NAME.finditer(problem):  # "her son Leo", "his wife Marie" with no age
        name, rel = m["name"], m["rel"].lower()
        if name in NOT_A_NAME or any(s <= m.start("name") < e for s, e in named_spans) or _a_place_or_known(name):
            continue
        if rel not in RELATIONS or rel.endswith("s") and rel not in ("parents",):
            continue
        found.append(Fact(name, "person", 1, "people", name, m.start("name"), m.end("name"), role=RELATIONS[rel][1]))
        named_spans.append((m.start(), m.end()))
    for m in SINGLE.finditer(problem):  # "his mother", "His daughter's 529": one person of that relation
        rel = m["rel"].lower()
        label, role = RELATIONS[rel]
        if any(s <= m.start("rel") < e for s, e in named_spans) or any(p.label == label or p.role == role and p.value > 1 for p in found):
            continue
        among = {role, "child"} if role == "sibling" and re.match(r"(?i)my|our", m[0]) else {role}
        if any(RELATIONS.get(c["rel"].lower(), ("", ""))[1] in among for c in COUNT.finditer(problem)):
            continue  # "my sister" among "four kids" (the narrator's parents' children) is no new person
        found.append(Fact(label, "person", 1, "people", m["rel"], m.start("rel"), m.end("rel"), role=role))
    for m in REL_AGE.finditer(problem):  # "her husband, 61": the husband and his age
        if any(s <= m.start() < e for s, e in named_spans):
            continue
        rel = m["rel"].lower()
        label, role = RELATIONS[rel]
        figure = next(g for g in ("a1", "a2", "a3") if m[g])
        age = next((a for a in ages if a.start == m.start(figure)), None)
        if age is None:
            continue
        age.label, age.role = (f"{label}' age" if label in GROUPS else f"{label}'s age"), role
        if not any(p.label == label for p in found):
            found.append(Fact(label, "person", GROUPS.get(label, 1), "people", m["rel"], m.start("rel"), m.end("rel"), role=role))
    for m in re.finditer(rf"\b(?:{'|'.join(GROUPS)})\b", problem, re.I):  # "the twins": two children, named or not
        label, role = RELATIONS[m[0].lower()]
        if not any(p.label == label for p in found) and not any(s <= m.start() < e for s, e in named_spans):
            found.append(Fact(label, "person", GROUPS[label], "people", m[0], m.start(), m.end(), role=role))
    for m in COUNT.finditer(problem):
        rel = m["rel"].lower()
        n = _number(m["n"])
        if n is None or n <= 0 or n > 30 or any(s <= m.start("rel") < e for s, e in named_spans):
            continue
        label, role = RELATIONS[rel]
        if any(p.start == m.start("rel") for p in found):
            continue
        found.append(Fact(label, "person", n, "people", problem[m.start() : m.end()], m.start(), m.end(), role=role))
    ages += new_ages
    facts.extend(new_ages)
    for age in ages:  # an age with no person: the client's, where the text opens with it ("Widow, 81")
        if age.label in ("age", "his age", "her age") and not age.role:
            age.role = "client" if not any(p.role == "client" for p in found) else ""
            if age.label == "age" and age.role == "client":
                age.label = "client's age"
    return found


SINGLE = re.compile(
    r"\b(?:his|her|their|my|our)\s+(?:only\s+|late\s+|elderly\s+)?(?P<rel>mother|father|son|daughter|brother|sister|husband|wife|partner|stepson|stepdaughter|grandson|granddaughter)\b(?!\s+(?:(?-i:[A-ZÀ-Ý])|\())",
    re.I,
)


def _role_of_named(problem, at, found):
    if not any(p.role == "client" for p in found):
        return "client"
    before = problem[max(0, at - 20) : at]
    if re.search(r"\b(?:and|&|und|et)\s+$", before) and sum(p.role in ("client", "spouse") for p in found) == 1:
        return "spouse"
    return ""


def _a_town(name):
    from reasoning.facts import places as placelib

    return any(p.start == 3 for p in placelib.find_places("in " + name.title()))


def _a_place_or_known(name):
    from reasoning.facts import places as placelib

    return any(p.start == 0 for p in placelib.find_places(name))


# ---- limits -------------------------------------------------------------------------------------------------------

LIMIT_NOUNS = {"floor": "floor", "buffer": "minimum", "reserve": "minimum", "cushion": "minimum", "cap": "cap",
               "ceiling": "cap", "limit": "cap", "minimum": "minimum", "maximum": "maximum", "max": "maximum",
               "min": "minimum"}  # fmt: skip
LIMIT_NOUN = re.compile(
    r"(?P<what>\b[\w-]+(?:\s+[\w-]+)?\s+)?(?P<noun>floor|buffer|reserve|cushion|cap|ceiling|limit|minimum|maximum)\s+"
    r"(?:(?:of|at|is|=|:)\s+)*(?:(?:at\s+least|about|roughly|some|no\s+more\s+than|around)\s+)?$",
    re.I,
)
AT_LEAST = re.compile(r"\b(?:at\s+least|no\s+less\s+than|not\s+less\s+than|a\s+minimum\s+of|minimum\s+of|min\.?|mindestens|au\s+moins|never\s+(?:(?!more\b)\w+\s+){0,3}?(?:less|fewer)\s+than)\s+$", re.I)  # "never hold less than"
AT_MOST = re.compile(r"\b(?:(?:cannot|can't|may\s+not|must\s+not|will\s+not|won't)\s+\w+\s+more\s+than|without\s+\w+ing\s+more\s+than|no\s+higher\s+than|stay(?:s|ing)?\s+(?:under|below|within|inside)(?:\s+the)?|no\s+more\s+than|not\s+more\s+than|at\s+most|a\s+maximum\s+of|maximum\s+of|max\.?|up\s+to|capped\s+at|cap(?:ped)?\s+(?:it\s+)?at|not\s+(?:to\s+)?exceed(?:ing)?|never\s+(?:(?!less\b)\w+\s+){0,3}?more\s+than|höchstens|maximal|under|below|less\s+than|beneath)\s+$", re.I)
NO_ONE_ABOVE = re.compile(r"\bno\s+(?P<one>single\s+|one\s+|individual\s+)?(?P<np>[\w-]+(?:\s+[\w-]+)?)\s+(?:(?:is\s+|may\s+be\s+|should\s+be\s+)?(?:above|over|beyond|exceeding|more\s+than))\s+$", re.I)
NEVER_BELOW = re.compile(r"\b(?:never|not|must\s+not|may\s+not|cannot|can't|should\s+not)\s+(?:\w+\s+){0,2}?(?:fall|drop|go|dip|sink)s?\s+(?:below|under)\s+$", re.I)
OBJECT_AFTER = re.compile(
    r"^\s*(?:of\s+(?:the\s+)?(?:annual\s+|yearly\s+|monthly\s+)?(?P<of>(?!cash\b)[\w-]+(?:\s+(?!(?:in|for|and|at|should|must|may|can|will|is|are|be|sit|stay|remain|to|this|a|per|each|every|next|that)\b)[\w-]+)?)\s*)?"
    r"(?:(?:in|into|of|per|for|on|at)\s+(?P<in>(?:any\s+|a\s+|one\s+|each\s+|a\s+single\s+|the\s+|any\s+single\s+|single\s+)?[\w-]+(?:\s+(?!and\b|or\b|to\b|at\b|for\b|in\b|of\b|with\b|by\b|but\b)[\w-]+)?))?",
    re.I,
)


CAP_AT = re.compile(r"\bcap\s+(?P<obj>(?:any|each|every|a|the|one)?\s*[\w-]+(?:\s+[\w-]+)?)\s+at\s+$", re.I)
# a bound said after its figure, with no object: "15% max", "5 % min." (the thing is the share said before)
BOUND_LAST = re.compile(r"^\s*(?P<w>max(?:imum)?|min(?:imum)?)\b\.?(?!\s*[A-Za-z(])", re.I)
BOUND_AFTER = re.compile(r"^\s+(?P<w>minimum|min\.|maximum|max\.)\s+(?P<obj>[\w-]+)", re.I)
VERB_OBJECTS = {"spend": "spending", "realise": "gains", "realize": "gains", "draw": "withdrawals", "withdraw": "withdrawals",
                "give": "gifts", "gift": "gifts", "borrow": "borrowing", "sell": "sales", "invest": "investment"}  # fmt: skip
PERIODS = {"year", "years", "month", "months", "quarter", "annum", "week"}
# "sell no more than CHF 300'000": the verb before the bound says what the cap is of (VERB_OBJECTS)
VERB_NO_MORE = re.compile(r"\b(?P<v>\w+)\s+(?:no|not)\s+more\s+than\s+$", re.I)
# "cannot sell more than", "without selling more than": the verb says what the cap is of (VERB_OBJECTS)
NEGATED_VERB = re.compile(
    r"\b(?:(?:cannot|can't|may\s+not|must\s+not|will\s+not|won't)\s+(?P<v>\w+)|without\s+(?P<ing>\w+ing))\s+more\s+than\s+$",
    re.I,
)


def _base_form(verb):
    """A verb as VERB_OBJECTS names it: "selling" is "sell", "realising" "realise", "giving" "give"."""
    verb = verb.lower()
    if not verb.endswith("ing"):
        return verb
    stem = verb[:-3]
    return next((v for v in (stem, stem + "e", stem[:-1]) if v in VERB_OBJECTS), stem)


MAX_BEFORE = re.compile(r"\b(?P<w>max(?:imum)?|min(?:imum)?)\.?\s+(?P<obj>[\w-]+(?:\s+[\w-]+)?)\s+(?:of\s+|at\s+|:\s*|is\s+)?$", re.I)
RATE_BASE = re.compile(r"\b(?:bracket|loan-to-value|LTV|ltv|rate|ratio|fees?|TER|leverage|drawdown|volatility)\b", re.I)


# what a client keeps an amount as, or needs it for, makes the amount a minimum
KEPT_AS = re.compile(r"^\s+(?:in\s+)?(?P<np>cash|liquidity|T-bills|treasuries|money\s+market)\b", re.I)
NEEDED_INCOME = re.compile(r"^\s+(?:(?:a|per|each|every)\s+(?P<period>year|month)\s+)?(?:of\s+(?:\w+\s+)?income|to\s+live\s+on|in\s+income)\b", re.I)


def limits(problem, facts, ends, durations, amounts=()):
    """Limit facts: a quantity (amount, percent, duration) bound as a floor, cap, minimum or maximum."""
    out, used = [], set()
    candidates = [(f.start, f.end, f.kind, f.value, f.unit, f) for f in facts if f.kind in ("amount", "percent")]
    candidates += [(s, e, "duration", v, u, None) for s, e, v, u in durations]
    for start, end, kind, value, unit, fact in sorted(candidates, key=lambda c: c[0]):
        sentence_start = max([e + 1 for e in ends if e < start], default=0)
        before = problem[sentence_start:start]
        if sentence_start > 0 and problem[sentence_start - 1] == ":":  # "liquidity floor: 10% of assets"
            before = problem[max([e + 1 for e in ends if e < sentence_start - 1], default=0) : sentence_start] + " " + before.lstrip()
            before = before.replace(":", " ")
        after = problem[end : min(e for e in ends if e >= end)]
        role = label = base = ""
        obj = OBJECT_AFTER.match(after)
        of_words = _clean(obj["of"]) if obj and obj["of"] else ""
        in_words = _clean(obj["in"]) if obj and obj["in"] else ""
        if pos := re.match(r"^\s*(?:in|for|of)\s+(?:the\s+|her\s+|his\s+|their\s+)?[\w-]+['’]s?\s+(?P<np>[\w-]+(?:\s+(?!and\b|or\b|in\b|at\b)[\w-]+)?)", after):
            in_words = _clean(pos["np"])  # "for the couple's own needs": the needs, not the couple
        if (m := CAP_AT.search(before[-60:])) and not LIMIT_NOUN.search(before[-60:]):  # "Cap any single stock at 8%"
            role, base = "cap", _clean(m["obj"])
            label = f"{_lower(base)} cap"
        elif (m := BOUND_AFTER.match(after)) and not LIMIT_NOUN.search(before[-60:]):  # "keep CHF 150'000 minimum liquidity"
            role = "minimum" if m["w"].lower().startswith("min") else "maximum"
            base = _clean(m["obj"])
            label = f"{'minimum' if role == 'minimum' else 'maximum'} {_lower(base)}"
        elif m := LIMIT_NOUN.search(before[-60:]):
            role = LIMIT_NOUNS[m["noun"].lower()]
            what = _clean(m["what"] or "")
            what = "" if what.lower() in ("a", "an", "the", "her", "his", "their", "its", "our", "set", "has", "with", "keep") else what
            what = re.sub(r"^(?:keep|keeps|set|has|have|with|a|an|the|her|his|their|its|our)\s+", "", what, flags=re.I)
            what = " ".join(w for w in what.split() if w.lower() not in MODALS)
            label = f"{what} {m['noun'].lower()}".strip()
            base = of_words or in_words or what
        elif re.search(r"\bkeep\s+$", before[-12:], re.I) and re.match(r"^\s+liquid\b", after):  # "must keep $2M liquid"
            role, base, label = "minimum", "liquid assets", "liquidity minimum"
        elif re.search(r"\bkeep\s+$", before[-12:], re.I) and (m := KEPT_AS.match(after)):  # "Keep CHF 100k cash"
            role, base, label = "minimum", m["np"].lower(), f"{m['np'].lower()} minimum"
        elif re.search(r"\bneeds?\s+$", before[-12:], re.I) and (m := NEEDED_INCOME.match(after)):  # "Needs $250k a year of income"
            role, base = "minimum", "income"
            label = "monthly income minimum" if (m["period"] or "").lower() == "month" else "income minimum"
        elif AT_LEAST.search(before[-40:]) or re.search(r"\bkeep\s+(?:at\s+least\s+)?$", before[-20:], re.I) and in_words and not _a_place_or_known(in_words):
            role = "minimum"
            base = of_words or in_words
            label = f"{in_words or of_words} minimum" if base else "minimum"
            noun = re.search(r"(?P<np>[A-Za-zÀ-ÿ][\w-]*)\s+min(?:imum)?\.?\s+$", before)
            if noun and noun["np"].lower() not in MODALS and not re.fullmatch(r"\w+(?:ed|ing)", noun["np"]):
                base, label = noun["np"].lower(), f"{noun['np'].lower()} minimum"  # "Liquidity min. CHF 10 Mio."
            if not base:  # "$300k in cash, of which at least $120k must stay as an emergency fund"
                base, label = _kept_as(problem, before, after, sentence_start, start, amounts) or (base, label)
        elif m := NO_ONE_ABOVE.search(before[-60:]):  # "No single bond issuer above 10 %", "no stock over 5%"
            role = "cap"
            base = ("one " if m["one"] else "") + _clean(m["np"]).lower()
            label = f"{_head(m['np']).lower()} cap"
        elif NEVER_BELOW.search(before[-60:]):
            role = "floor"
            subject = re.search(r"(?P<np>[\w-]+(?:\s+(?!(?:must|should|may|can|will|to)\b)[\w-]+)?)\s+(?:(?:must|should|may|can|will|is|are|to)\s+)*(?:never|not)\b", before, re.I)
            base = _clean(subject["np"]) if subject else ""
            label = f"{base} floor".strip()
        elif (m := AT_MOST.search(before[-40:])) and (kind != "amount" or re.search(r"no\s+more|more\s+than|at\s+most|max|cap|exceed|up\s+to|stay\w*\s+(?:under|below|within|inside)", m[0], re.I)):
            if re.match(r"(?:under|below|beneath|less)", m[0], re.I) and not re.search(
                r"\b(?:keep|stay|remain|hold|get|bring|cut|reduce|trim|take)\w*\b[^.;,]{0,40}$", before[: m.start() + len(before) - 40 if len(before) > 40 else m.start()] + before[-40:][: m.start()], re.I
            ):
                continue
            role = "cap"
            if in_words.lower() in PERIODS:
                in_words = ""  # "per year": how often, not what is capped
            base = in_words or of_words
            thing = in_words or of_words
            verb = NEGATED_VERB.search(before) or VERB_NO_MORE.search(before)
            v = verb and _base_form(verb["v"] or verb["ing"])
            if verb and not base:
                base = VERB_OBJECTS.get(v, "")  # "cannot spend more than $150,000 a year", "without selling more than"
                thing = base
            elif verb and base and v in VERB_OBJECTS and v in ("realise", "realize"):
                base = f"{v}d {base}"  # "realise more than $50k of gains": realised gains
            elif verb and base and v in VERB_OBJECTS:
                thing = VERB_OBJECTS[v]  # "sell no more than CHF 300'000 of equities": a sales cap on the equities
            bound = re.search(r"\b(?:get|gets|getting|bring|brings|bringing|cut|cuts|reduce|reduces|trim|trims|keep|keeps|take|takes)\s+(?P<np>[^.;,]{1,40}?)\s+(?:below|under|beneath)\s+$", before, re.I)
            if bound:
                base = thing = _clean(bound["np"])
            label = f"{_head(thing)} cap".strip() if thing else "cap"
        elif m := MAX_BEFORE.search(before[-50:]):  # "Maximum loan-to-value 30 %", "max. 20% in USD"
            role = "maximum" if m["w"].lower().startswith("max") else "minimum"
            base = _clean(m["obj"])
            label = f"{_lower(base)} {'cap' if role == 'maximum' else 'minimum'}"
        elif (m := BOUND_LAST.match(after)) and kind == "percent":  # "Wants 15% max, funded from cash"
            role = "minimum" if m["w"].lower().startswith("min") else "cap"
            shares = [f for f in facts if f.kind == "percent" and f.end <= start and f.role == "share" and not f.label.startswith("percent")]
            base = SHARE_SUFFIX.sub("", shares[-1].label) if shares else ""
            label = f"{base} {'minimum' if role == 'minimum' else 'cap'}".strip()
        else:
            continue
        if not base and role in ("cap", "maximum") and (d := TURNOVER_AFTER.match(after)):
            label = f"{d['what'].lower()} cap per {d['period'].lower()}"  # "No more than 5 % turnover per quarter"
        if not base and role in ("cap", "maximum") and (d := re.match(r"^\s+(?P<np>(?!in\b|of\b|a\b|per\b|for\b|overall\b|in\s+total\b|total\b|combined\b|altogether\b)[a-z][\w-]*(?:\s+(?!in\b|of\b|and\b|for\b)[a-z][\w-]*)?)(?=\s*$|\s*[,.;])", after, re.I)):
            base = _lower(d["np"])  # "max. 40 % equities"
            label = f"{base} cap"
        if not base and role in ("cap", "maximum") and (d := re.search(r"(?P<np>[\w-]+(?:\s+[\w-]+)?)\s+(?:no\s+higher\s+than|no\s+more\s+than|at\s+most|max\.?)\s+$", before, re.I)):
            base = _lower(d["np"])  # "Federal bracket no higher than 22%"
            label = f"{base} cap"
        if not base and role in ("cap", "maximum") and (d := re.match(r"^\s+(?P<np>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}?\s+(?:bracket|rate|ratio|fees?|loan-to-value))\b", after)):
            base = d["np"]  # "under the 24% federal bracket"
            label = f"{base} cap"
        if role == "cap" and RATE_BASE.search(base or ""):
            role = "maximum"  # a ceiling on a rate or a ratio: "stay under the 24% federal bracket", "loan-to-value"
        if kind == "duration" and not (role and (of_words or in_words or label)):
            continue
        unit_out = unit
        named = [a for a in amounts if base and a.start < start and a.label.split()[0].lower() == base.split()[0].lower()]
        if named:
            base = named[-1].label  # "40% of the SIPP": the SIPP's amount
        label, base = _lower(label), _lower(base)
        lim = Fact(label or role, "limit", float(value), unit_out, problem[start:end], start, end, base=base, role=role)
        out.append(lim)
        if fact is not None:
            used.add(id(fact))
    return out, used


# "5 % turnover per quarter": a cap on what is traded in a period, of the whole portfolio (no one holding is its base)
TURNOVER_AFTER = re.compile(
    r"^\s+(?P<what>turnover|trading)\s+(?:per|a|each|every)\s+(?P<period>quarter|year|month)\b", re.I
)


# "must stay as an emergency fund", "is to remain in cash", "must stay liquid": what a minimum is kept as
KEPT_AS_AFTER = re.compile(
    r"^\s*(?:must|should|has\s+to|have\s+to|needs?\s+to|is\s+to|are\s+to|to)?\s*(?:stay|remain|be\s+kept|be\s+held)\s+"
    r"(?:(?:as|in)\s+(?:an?\s+|the\s+|her\s+|his\s+|their\s+)?(?P<np>[a-z][\w-]*(?:\s+(?!for\b|to\b|and\b)[a-z][\w-]*)?)"
    r"|(?P<liquid>liquid|available|untouched))",
    re.I,
)
OF_WHICH_BEFORE = re.compile(r",?\s*(?:of\s+which|dont|davon)\s+(?:at\s+least\s+|a\s+minimum\s+of\s+|min\.?\s+)?$", re.I)


def _kept_as(problem, before, after, sentence_start, start, amounts):
    """(base, label) of a minimum whose words say what it is kept as, and of which amount ("$300k in cash, of which at
    least $120k must stay as an emergency fund": the cash's emergency fund minimum); None where they say neither."""
    kept = KEPT_AS_AFTER.match(after)
    of_which = OF_WHICH_BEFORE.search(before)
    owner = None
    if of_which:
        at = sentence_start + of_which.start()
        owner = next((a for a in reversed(amounts) if a.end <= at and at - a.end <= 40), None)
    if not kept and owner is None:
        return None
    if kept and kept["liquid"]:
        name = "liquidity"
    else:
        name = _lower(kept["np"]) if kept else owner.label
    base = owner.label if owner is not None else (_lower(kept["np"]) if kept and kept["np"] else "liquid assets")
    return base, f"{name} minimum"


MODALS = set("should must may might will would can could shall to we i they she he it is are was be want wants needs "
             "need keep keeps set sets has have with a an the her his their its our".split())


def _lower(words):
    return " ".join(w if w.isupper() or any(c.isupper() for c in w[1:]) else w.lower() for w in str(words).split())


def _head(words):
    words = _clean(words)
    words = re.sub(r"^(?:any|one|single|a|each)\s+", "", words, flags=re.I)
    return words.split()[-1] if words else ""


def durations(problem):
    """(start, end, value, unit) of every duration: "18 months", "eighteen months", "a 5-year"."""
    out = []
    for m in DURATION.finditer(problem):
        read = _duration(m)
        if read:
            out.append((m.start(), m.end(), read[0], read[1]))
    return out


# ---- horizons -----------------------------------------------------------------------------------------------------

HORIZON_DURATION = re.compile(
    r"\b(?P<cue>over|within|in|during|across|inside|for|innerhalb|über|binnen|sur|en|d'ici)\s+(?:the\s+|a\s+)?(?:next\s+|coming\s+|following\s+|following\s+|nächsten\s+|prochains?\s+)?$",
    re.I,
)
# "by 2031", "by June 2027", "growing 25% a year to 2030" (not "up to 2030", a bound on something else)
HORIZON_YEAR = re.compile(r"\b(?P<cue>by|until|till|through|before|ahead\s+of|after|no\s+later\s+than|not\s+before|from|bis|avant|après|d'ici|entro|(?:by|at|before)\s+(?:the\s+)?end\s+of|in|(?<!up\s)to)\s+(?:(?:the\s+)?(?:end|start|spring|summer|autumn|fall|winter|mid|early|late|year-end|year\s+end|the\s+\w+\s+of|Q[1-4]|MONTHS)(?:\s*-\s*|\s*(?:of\s+)?))?$".replace("MONTHS", MONTH_NAMES), re.I)
HORIZON_AGE = re.compile(r"\b(?P<cue>before|by|until|after|at|to)\s+(?:(?:he|she|they|the\s+client)\s+)?(?:retir\w*|turning|turns?|reaching|reach\w*|age)\s+(?:at\s+|age\s+)?$", re.I)
HORIZON_NOUN = re.compile(r"\b(?P<noun>[\w-]+\s+)?(?P<h>horizon|time\s+frame|timeframe|runway|deadline)\s+(?:of\s+|is\s+|:\s*)?(?:about\s+|roughly\s+)?$", re.I)
BIRTHDAY = re.compile(r"\b(?P<cue>before|by|until|after)\s+(?:his|her|their|my|the\s+client['’]s)\s+(?P<n>\d{2,3})(?P<th>st|nd|rd|th)\s+birthday\b", re.I)
TENOR_AFTER = re.compile(
    r"^\s*(?:[\w-]+\s+){0,2}?(?:treasur\w*|bonds?|notes?|gilts?|bunds?|bills?|T-bills?|munis?|paper|CDs?|GICs?|loans?|"
    r"mortgages?|fixed\s+rate|swaps?|yields?|maturit\w*|duration|ladder|Bundesanleihen?|obligations?|Anleihen?)\b",
    re.I,
)
HORIZON_LABELS = (  # a stem in the clause before -> the horizon's label
    (r"\bsell\w*|\bsale\b|divest\w*|dispos\w*|\bexit\w*|verkauf\w*|vend\w*", "sale deadline"),
    (r"rebalanc\w*|\bbring\w*|\bget\s+\w+\s+(?:below|under)|\bshift\w*|reallocat\w*|\bmove\s+(?:to|from|towards)|de-?risk\w*|reduc\w*|diversif\w*|unwind\w*|trim\w*", "rebalancing horizon"),
    (r"retir\w*|pension\w*|ruhestand|retraite", "retirement"),
    (r"\binvest\w*|deploy\w*|\bput\s+to\s+work|enter\w*|\bbuy\w*\s+in", "investment horizon"),
    (r"\bgift\w*|transfer\w*|\bpass(?:es|ed|ing)?\b|succession|hand\s+over|inherit\w*", "transfer horizon"),
    (r"\bbuy\w*|purchas\w*|acquir\w*", "purchase deadline"),
    (r"relocat\w*|\bmov\w*|emigrat\w*", "move"),
    (r"spend\w*|\bdraw\w*|withdraw\w*|income|fund\w*", "spending horizon"),
    (r"\bcall\w*|capital\s+call", "call period"),
    (r"\bthesis\b|\bbeliev\w*|\bexpect\w*|\bforecast\w*|\bview\b", "thesis horizon"),
    (r"lock-?up|vest\w*", "lockup end"),
)


# the time over which committed capital is called: "4 yrs to call", "three years to be drawn"
CALLED_AFTER = re.compile(r"^\s+(?:left\s+)?to\s+(?:be\s+)?(?:call|called|draw\s+down|drawn(?:\s+down)?|deploy|deployed|pay\s+in|paid\s+in)\b", re.I)


AVERAGED = re.compile(r"\b(?:average|averaged|trailing|rolling|smoothed|mean)\b[^.;,]{0,25}$", re.I)


def horizons(problem, facts, ends, spans_durations):
    out, replaced = [], set()
    for start, end, value, unit in spans_durations:
        sentence_start = max([e + 1 for e in ends if e < start], default=0)
        before = problem[sentence_start:start]
        if TENOR_AFTER.match(problem[end : end + 40]):
            continue  # "20-yr Treasuries", "a 10-year bond": an instrument's tenor, not the client's horizon
        if m := HORIZON_NOUN.search(before[-50:]):
            label = f"{(m['noun'] or '').strip().lower()} {m['h'].lower()}".strip()
            out.append(Fact(label, "horizon", value, unit, problem[start:end], start, end, role="over"))
            continue
        if re.match(r"^\s*(?:horizon|time\s+horizon|investment\s+horizon)\b", problem[end:end + 30], re.I):
            out.append(Fact("investment horizon", "horizon", value, unit, problem[start:end], start, end, role="over"))
            continue
        if CALLED_AFTER.match(problem[end : end + 30]):  # "$42M unfunded commitments, ~4 yrs to call"
            out.append(Fact("commitment drawdown", "horizon", value, unit, problem[start:end], start, end, role="over"))
            continue
        if re.search(r"\b(?:survives?|outlives?|lives?)\s+$", before[-12:], re.I):  # "if he survives 7 years"
            out.append(Fact("survival period", "horizon", value, unit, problem[start:end], start, end, role="over"))
            continue
        m = HORIZON_DURATION.search(before[-40:])
        if not m:
            continue
        cue = m["cue"].lower()
        if cue == "for" and not re.search(r"\b(?:next|coming)\s+$", before[-15:], re.I) and not re.search(
            r"\b(?:stays?|remains?|persists?|lasts?)\b[^.;,]{0,30}$", before, re.I
        ):
            continue  # "for ten years" is a horizon where something lasts ("inflation will stay above 3% for ten years")
        if cue in ("in", "en") and not re.search(r"\b(?:next|coming)\s+$|\bin\s+$", before[-10:], re.I):
            continue
        role = "over" if cue in ("over", "across", "during", "über", "sur", "for") else "within"
        if role == "over" and AVERAGED.search(before[: len(before) - len(m[0])][-40:]):
            continue  # "3.75% of the average value over five years": a smoothing window, no horizon of the client's
        after = problem[end : min(e for e in ends if e >= end)]
        out.append(Fact(_horizon_label(before[: len(before) - len(m[0])], role, after), "horizon", value, unit,
                        problem[start:end], start, end, role=role))
    for m in BIRTHDAY.finditer(problem):  # "everything done before his 80th birthday": a deadline at an age
        if any(f.start <= m.start("n") < f.end for f in facts if f.kind in ("age", "horizon")):
            continue
        sentence_start = max([e + 1 for e in ends if e < m.start()], default=0)
        role = {"until": "by"}.get(m["cue"].lower(), m["cue"].lower())
        out.append(Fact(_horizon_label(problem[sentence_start : m.start()], role), "horizon", float(m["n"]), "age",
                        m["n"] + m["th"], m.start("n"), m.end("th"), role=role))
    for f in facts:
        sentence_start = max([e + 1 for e in ends if e < f.start], default=0)
        before = problem[sentence_start : f.start]
        if f.kind == "year" and (m := HORIZON_YEAR.search(before[-40:])):
            cue = m["cue"].lower()
            earlier = re.search(r"\b(?P<c>before|after|until)\b[^.;,]{0,30}\bin\s+$", before, re.I) if cue == "in" else None
            if earlier:  # "before the IPO in 2026", "before the exemption shrinks in 2026"
                role = {"until": "by"}.get(earlier["c"].lower(), earlier["c"].lower())
                out.append(Fact(_horizon_label(before, role), "horizon", f.value, "year", f.text, f.start, f.end, role=role))
                replaced.add(id(f))
                continue
            if cue == "in" or cue == "from":
                if not re.search(r"\b(?:sell|retire|exit|move|vest|buy|complete|finish|done|lock|due|expires?|ends?|matur|deadline|call)\w*\b[^.;,]{0,30}$", before, re.I):
                    continue
                if re.search(r"\b(?:sold|bought|moved|inherited|founded|started|retired|since|was|were|did|born)\b[^.;]{0,40}$", before, re.I):
                    continue
                role = "by" if cue == "in" else "after"
            else:
                role = {"after": "after", "not before": "after", "from": "after", "après": "after", "before": "before", "avant": "before"}.get(
                    " ".join(cue.split()), "by")
            out.append(Fact(_horizon_label(before, role), "horizon", f.value, "year", f.text, f.start, f.end, role=role))
            replaced.add(id(f))
        elif f.kind == "age" and (m := re.search(r"\b(?P<cue>before|until|after|by)\s+$", before)) and f.value >= 50:
            role = {"until": "by"}.get(m["cue"].lower(), m["cue"].lower())  # "must not run out of money before 95"
            label = _horizon_label(before[: m.start()], role)
            out.append(Fact("longevity" if re.search(r"run\s+out|outlive|last", before, re.I) else label, "horizon", f.value, "age",
                            f.text, f.start, f.end, role=role))
            replaced.add(id(f))
        elif f.kind == "age" and f.label not in ("age", "his age", "her age", "client's age") and not f.label.endswith("'s age"):
            role = "before" if re.search(r"\bbefore\b[^.;,]{0,30}$", before) else "by"
            label = "retirement" if f.label == "retirement age" else _horizon_label(before, role)
            if label in ("deadline", "horizon") and f.label.endswith(" age") and f.label != "start age":
                label = f.label[: -len(" age")]
            out.append(Fact(label, "horizon", f.value, "age", f.text, f.start, f.end, role=role))
            replaced.add(id(f))
        elif f.kind == "age" and (m := HORIZON_AGE.search(before[-45:]) or re.search(r"\b(?:turns?|until\s+\w+\s+turns|to\s+age|by\s+age|at\s+age)\s+$", before[-25:], re.I)):
            cue = (m.groupdict().get("cue") or "by").lower()
            role = {"before": "before", "after": "after", "at": "by"}.get(cue, "by")
            label = "retirement" if re.search(r"retir", m[0], re.I) else _horizon_label(before, role)
            out.append(Fact(label, "horizon", f.value, "age", f.text, f.start, f.end, role=role))
            replaced.add(id(f))
    return out, replaced


def _horizon_label(before, role, after=""):
    clause = re.split(r"[;:]", before)[-1]
    best, at = "", -1
    for stems, label in HORIZON_LABELS:
        for m in re.finditer(stems, clause, re.I):
            if m.start() > at:
                best, at = label, m.start()
    if best:
        return best
    later = re.split(r"[;:,]", after)[0]
    for stems, label in HORIZON_LABELS:
        m = re.search(stems, later, re.I)
        if m and (not best or m.start() < at):
            best, at = label, m.start()
    if best:
        return best
    return "deadline" if role in ("by", "before") else "horizon"


# ---- amounts: role and the client's words ----------------------------------------------------------------------------

COMMITMENT = re.compile(r"\b(?:commit\w*|unfunded|uncalled|not\s+yet\s+called|undrawn|capital\s+calls?|pledged?\s+to|pledges?\b|promised|zugesagt\w*|engagements?)", re.I)
LIABILITY = re.compile(r"\b(?:mortgages?|loans?|debts?|owes?|owing|outstanding|liabilit\w*|lombard|credit\s+line|line\s+of\s+credit|margin\s+loan|borrow\w*|hypothek\w*|hypoth[èe]que|kredit\w*|darlehen|leverage)\b", re.I)
INCOME = re.compile(r"^(?:annual\s+|monthly\s+)?(?:salary|income|rental\s+income|pension|bonus|dividends|rent|social\s+security\s+benefit|annuity|wage|earnings|distributions)", re.I)
EXPENSE = re.compile(r"^(?:annual\s+|monthly\s+)?(?:spending|expenses|living\s+costs|costs|tuition|premium|payment|fees|outgoings)", re.I)
BARE = {"amount", "value", "total assets", "assets", "pension", "reserve", "payment", "giving", "drawing"}
PHRASE_BEFORE = re.compile(
    r"(?P<np>(?:[A-Za-zÀ-ÿ][\w’'-]*\s+){0,3}[A-Za-zÀ-ÿ][\w’'-]*)\s*(?:(?:of|is|are|was|at|:|=|totals?|totalling|amounts?\s+to|stands\s+at|runs\s+at)\s*)?(?:(?:about|around|roughly|approx\.?|some|up\s+to|nearly)\s+)?$",
    re.I,
)
PHRASE_STOP = set(
    "a an the her his their its our my of is are was at to and or but with has have had holds hold plus also "
    "which that this these those there about around roughly some up nearly approx client clients he she they we "
    "i it in on for by from as be been will would could can may must should another other total overall "
    "includes including worth valued keep keeps".split()
)


POINT = re.compile(rf"(?P<whole>(?i:{WORDS}))\s+point\s+$", re.I)


GIFT_VERB = re.compile(r"\b(?:give|gives|giving|gift|gifts|gifting|donate|donating|schenken|donner)\b", re.I)
WHO = r"(?P<who>child|children|kids?|grandchild|grandchildren|grandkids?|heirs?|daughters?|sons?|nieces?|nephews?)"
EACH_WHO_BEFORE = re.compile(rf"\beach\s+(?:of\s+(?:her|his|their|the|our)\s+(?:\w+\s+)?)?{WHO}\s+(?:about\s+|some\s+)?$", re.I)
EACH_WHO_AFTER = re.compile(rf"^\s*(?:to|for)\s+each\s+(?:of\s+(?:her|his|their|the|our)\s+(?:\w+\s+)?)?{WHO}\b", re.I)
SINGULAR = {"children": "child", "kids": "child", "kid": "child", "grandchildren": "grandchild", "grandkids": "grandchild",
            "grandkid": "grandchild"}  # fmt: skip


def _gift_per_person(before, after):
    """"give each child 150.000 EUR", "gift EUR 150,000 to each of the children": a gift per person, the client's
    goal, labelled by whom it is for ("gift per child"), or ""."""
    if not GIFT_VERB.search(before + " " + after[:40]):
        return ""
    m = EACH_WHO_BEFORE.search(before) or EACH_WHO_AFTER.match(after)
    if not m:
        return ""
    who = m["who"].lower()
    who = SINGULAR.get(who, who[:-1] if who.endswith("s") and who[:-1] in ("heir", "daughter", "son", "niece", "nephew") else who)
    return f"gift per {who}"


def amount_roles(problem, facts, ends):
    for f in facts:
        if f.kind != "amount":
            continue
        if (m := POINT.search(problem[max(0, f.start - 40) : f.start])) and (digit := re.match(r"(?i)(one|two|three|four|five|six|seven|eight|nine|zero)\b", f.text)):
            whole, tenth = words_value(m["whole"]), words_value(digit[1])  # "one point two billion dollars"
            scale = f.value / tenth if tenth else 0
            if whole is not None and scale:
                f.value = (whole + tenth / 10) * scale
                f.start -= len(m[0]) + 0
                f.start = max(0, f.start)
                f.text = problem[f.start : f.end]
                f.label = "amount"
        sentence_start = max([e + 1 for e in ends if e < f.start], default=0)
        sentence_end = min(e for e in ends if e >= f.end)
        before = problem[sentence_start : f.start]
        if f.label and re.search(rf"\bin\s+{re.escape(f.label)}\s*,?\s*$", before, re.I) and _a_town(f.label):
            f.label = "amount"  # "Bauer KG in Linz, valued at": a place names no figure
        clause_before = re.split(r"[;,]|\band\b", before)[-1]
        phrase = _phrase_before(clause_before)
        head = f.label.split()[-1].lower() if f.label else ""
        words = phrase.lower().replace("-", " ").split()
        if len(f.label.split()) == 1 and len(words) > 1 and f.label.lower() in words[:-1]:
            f.label = phrase  # "Pension buy-in capacity of CHF 480k": the client's words, not "pension"
        if (f.label in BARE or f.label.startswith("amount") or f.label.endswith(" point")) and (
            m := re.search(r"(?P<np>[A-Za-zÀ-ÿ][\w-]*(?:\s+[A-Za-zÀ-ÿ][\w-]*){0,4})\s*(?:,|\((?:[^()]*,)?)\s*$", before)
        ):
            while _a_place_or_known(m["np"]) and (earlier := re.search(r"(?P<np>[A-Za-zÀ-ÿ][\w-]*(?:\s+[A-Za-zÀ-ÿ][\w-]*){0,4})\s*,\s*$", before[: m.start()])):
                m = earlier  # "University fund, Basel, CHF 310 Mio.": the fund, not its town
            words = m["np"].split()  # "Foundation, CHF 40M.", "the Harwood Endowment (Delaware nonprofit, $240M)"
            whole = [w for w in words if re.fullmatch(rf"(?:{WHOLE_WORDS})", w, re.I)]
            f.label = whole[-1].lower() if whole else _lower(" ".join(w for w in words[-3:] if w.lower() not in PHRASE_STOP))
        after = problem[f.end : sentence_end]
        clause_after = re.split(r"[;,(]|\band\b", after)[0]
        if other := next((g for g in facts if g.kind == "amount" and f.end < g.start < f.end + len(clause_after)), None):
            clause_after = clause_after[: other.start - f.end]  # "portfolio £2.1m with £1.3m of mortgages": theirs
        near = clause_before[-40:] + " " + clause_after[:60]
        if SIZED.search(before):  # "Unfunded commitments to venture and buyout funds total $38M": the subject's
            near = re.split(r"[;,]", before)[-1] + " " + near
        if gift := _gift_per_person(before, after):  # "give each child 150.000 EUR and each grandchild 20.000 EUR"
            f.label, f.role = gift, "goal"
            continue
        if COMMITMENT.search(near) and not re.search(r"\bcommitted\s+to\s+(?:keep|stay|hold)", near, re.I):
            f.role = "commitment"
            if f.label in BARE or f.label.startswith("amount") or not COMMITMENT.search(f.label):
                words = re.search(r"^\s*(?:of|in)\s+(?P<np>(?:[\w-]+\s+){0,2}?(?:commitments?|pledges?|capital\s+calls?|calls))", clause_after, re.I)
                label = words["np"].lower() if words else "commitment"
                if re.search(r"not\s+yet\s+called|uncalled|unfunded|undrawn", near, re.I) and not re.search(r"uncalled|unfunded|undrawn", label):
                    label = ("unfunded " if "unfunded" in near.lower() else "uncalled ") + label
                f.label = label
        elif LIABILITY.search(near) or LIABILITY.search(f.label):
            f.role = "liability"
            if f.label.endswith(" balance") and LIABILITY.search(f.label):
                f.label = f.label[: -len(" balance")]
            elif f.label in BARE or f.label.startswith("amount"):
                m = LIABILITY.search(clause_after) or LIABILITY.search(clause_before)
                f.label = m[0].lower() if m else "liability"
        elif INCOME.search(f.label):
            f.role = "income"
        elif EXPENSE.search(f.label):
            f.role = "expense"
        if f.role in ("", "income", "expense") and (f.label in BARE or f.label.startswith("amount")):
            phrase = _phrase_before(clause_before)
            if phrase:
                f.label = phrase
        seat = re.match(r"(?:seated|based|domiciled|headquartered|registered|located)\b", f.label)
        if (f.label.startswith("amount") or seat) and (subject := _subject_before(before, after)):
            f.label = subject  # "the packaging firm, valued at €36m", "Federal exemption assumed at $13.99M"
    return facts


SIZED = re.compile(r"\b(?:total|totals|totalled|stand\s+at|stands\s+at|come\s+to|comes\s+to|amount\s+to|amounts\s+to)\s+(?:about\s+|around\s+|roughly\s+)?$", re.I)
LINK_WORDS = set(
    "at of is are was were ca ca. about around roughly approx approx. some nearly pays pay gets get holds hold holding "
    "assumed valued estimated worth net by with : = totals total totalling stands runs sits".split()
)


# "Stiftung Alpenlicht, seated in Zurich, CHF 45M": where the owner sits is no part of the figure's name.
SEAT_PHRASE = re.compile(
    r",?\s*\b(?:seated|based|domiciled|headquartered|registered|located|resident|living)\s+in\s+"
    r"[A-ZÀ-Ý][\w'’.-]*(?:\s+[A-ZÀ-Ý][\w'’.-]*){0,2}\s*,?\s*$"
)


def _subject_before(before, after):
    """The noun phrase a bare figure belongs to, across a comma: the last words before it that are no link word."""
    before = SEAT_PHRASE.sub(", ", before)
    if m := re.match(r"^\s*(?:pledged|promised|committed)\b(?:\s+by\s+(?P<who>\w+))?", after, re.I):
        return f"{(m['who'] or '').rstrip('s').lower()} pledges".strip()
    if m := re.match(r"^\s*held\s+in\s+(?P<what>\w+)", after, re.I):
        return f"{m['what'].lower().rstrip('s')} holdings"
    tokens = re.findall(r"[\w'’.&-]+|[,:;=]", before)
    while tokens and (tokens[-1].lower() in LINK_WORDS or tokens[-1] in ",:=" or re.fullmatch(r"\w+ed", tokens[-1])):
        tokens.pop()
    if len(tokens) >= 2 and tokens[-2].lower() in ("in", "near", "at") and _a_town(tokens[-1]):
        del tokens[-2:]  # "Bauer KG in Linz, valued at": the KG, not Linz
    words = []
    while tokens and len(words) < 3 and re.fullmatch(r"[A-Za-zÀ-ÿ][\w'’&-]*", tokens[-1]) and tokens[-1].lower() not in PHRASE_STOP:
        words.insert(0, tokens.pop())
    if not words or re.fullmatch(r"\w+(?:ed|ing)", words[-1]):
        return ""
    if any(len(w) > 1 and w.isupper() for w in words[1:]):
        return " ".join(words)  # a company's name as written: "Bauer KG"
    return _lower(" ".join(words))


def _phrase_before(before):
    m = PHRASE_BEFORE.search(SEAT_PHRASE.sub(", ", before))
    if not m:
        return ""
    words = m["np"].split()
    while words and words[-1].lower() in ("of", "is", "are", "was", "at", "totals", "total", "totalling", "about", "around", "roughly", "some", "nearly"):
        words.pop()
    kept = []
    for w in reversed(words):
        if w.lower().strip(":") in PHRASE_STOP or re.search(r"\d", w):
            break
        kept.insert(0, w)
    if not kept or re.search(r"(?:ed|ing)$|^(?:gets?|pays?|earns?|owns?|invests?|gives?|takes?|puts?|sells?|buys?|spends?)$", kept[-1], re.I):
        return ""  # "She received $500k": a verb names nothing
    return " ".join(w if w.isupper() or any(c.isupper() for c in w[1:]) else w.lower() for w in kept).strip(":")


# ---- the whole --------------------------------------------------------------------------------------------------------


BASIS_POINTS = re.compile(rf"(?<![\w-])(?P<n>\d+(?:[.,]\d+)?|(?i:{WORDS}))\s*(?:basis\s+points?|bps|bp)\b", re.I)


def basis_points(problem, facts):
    """ "forty basis points", "35 bps": a percent of a hundredth."""
    out = []
    for m in BASIS_POINTS.finditer(problem):
        n = _number(m["n"])
        if n is None or any(f.start <= m.start() < f.end for f in facts):
            continue
        out.append(Fact("percent", "percent", float(n) / 100, "%", m[0], m.start(), m.end()))
    return out


FRACTIONS = {"half": 50.0, "a half": 50.0, "one half": 50.0, "a third": 100 / 3, "one third": 100 / 3, "two thirds": 200 / 3,
             "a quarter": 25.0, "one quarter": 25.0, "three quarters": 75.0, "a fifth": 20.0, "one fifth": 20.0}  # fmt: skip
FRACTION = re.compile(r"(?<![\w-])(?P<f>half|a\s+half|one\s+half|a\s+third|one\s+third|two\s+thirds|a\s+quarter|one\s+quarter|three\s+quarters|a\s+fifth|one\s+fifth)\s+of\s+(?:(?:the|her|his|their|its|our)\s+)?(?P<np>(?:it|them|that)\b|[\w-]+(?:\s+[\w-]+)?)", re.I)


def fractions(problem, facts, amounts):
    """ "a quarter of the portfolio", "half of the pension fund assets": a percent of a named whole."""
    out = []
    for m in FRACTION.finditer(problem):
        if any(f.start <= m.start() < f.end for f in facts):
            continue
        np = m["np"].lower()
        if np in ("it", "them", "that"):  # "two point four million euros invested, a fifth of it in gold"
            out += _fraction_of_it(problem, m, amounts)
            continue
        named = [a for a in amounts if np.split()[0] in a.label.lower().split() or a.label.lower().split()[0] == np.split()[0]]
        if not named and not re.match(r"(?:portfolio|assets|endowment|estate|proceeds|capital|savings|wealth|shares|stake|pension)", np):
            continue
        words = " ".join(m["f"].lower().split())
        goal = re.search(r"\b(?:wants?|would\s+like|plans?|aims?|hopes?|to|should|will)\b[^.;]{0,30}$", problem[max(0, m.start() - 40) : m.start()], re.I)
        label = f"{np} {'target' if goal else 'share'}"
        out.append(Fact(label, "percent", FRACTIONS[words], "%", m["f"], m.start(), m.start() + len(m["f"]),
                        base=named[-1].label if named else np.split()[0], role="target" if goal else "share"))
    return out


def _fraction_of_it(problem, m, amounts):
    """ "a fifth of it in gold": a share, of the amount said just before in the sentence, of the class after it."""
    sentence_start = max(problem.rfind(". ", 0, m.start()), problem.rfind("\n", 0, m.start())) + 1
    whole = [a for a in amounts if sentence_start <= a.start and a.end <= m.start()]
    cls = CLASS_WORDS.match(problem[m.end() :])
    if not whole or not cls or not re.match(r"\s+(?:in|into)\s", problem[m.end() :]):
        return []
    label = _lower(re.sub(r"^\s*(?:in|into|of)\s+", "", cls[0]).strip())
    words = " ".join(m["f"].lower().split())
    return [Fact(label, "percent", FRACTIONS[words], "%", m["f"], m.start(), m.start() + len(m["f"]),
                 base=_name_whole(problem, whole[-1]) if whole[-1].label in BARE or whole[-1].label.startswith("amount") else whole[-1].label, role="share")]


WORD_SCALE = re.compile(
    rf"(?<![\w$€£-])(?P<n>(?i:{WORDS}))(?P<half>\s+and\s+a\s+half)?\s+(?P<scale>(?i:million|billion))\b"
    rf"(?![\s-]+(?:and\s+)?(?i:{'|'.join(NUMBER_WORDS)}|hundred|thousand)\b)"  # "two million four hundred thousand": read whole
    r"(?:\s+(?P<cur>(?i:euros?|dollars?|francs?|pounds?)))?(?!\s+(?:shares|people|units|options|acres|miles))"
)
CURRENCY_WORDS = {"euro": "EUR", "dollar": "USD", "franc": "CHF", "pound": "GBP"}


def word_amounts(problem, facts):
    """ "Two and a half million euros", "seven million" after a figure in francs: amounts written in words, a bare one
    in the currency of the figure before it (as an advisor's list does)."""
    out, drop = [], set()
    for m in WORD_SCALE.finditer(problem):
        n = words_value(m["n"])
        if n is None or n == 0:
            continue
        value = (n + (0.5 if m["half"] else 0)) * (10**6 if m["scale"].lower() == "million" else 10**9)
        unit = CURRENCY_WORDS.get((m["cur"] or "").lower().rstrip("s"), "")
        if not unit:
            earlier = [f for f in facts if f.kind == "amount" and f.end <= m.start()]
            unit = earlier[-1].unit if earlier else ""
        if not unit:
            continue
        inside = [f for f in facts if f.kind == "amount" and m.start() <= f.start < m.end() or f.kind == "amount" and f.start <= m.start() < f.end]
        if inside and all(abs(f.value - value) < 1 for f in inside):
            continue  # already read
        drop.update(id(f) for f in inside)
        out.append(Fact("amount", "amount", float(value), unit, m[0], m.start(), m.end()))
    out += _more_in_words(problem, facts)
    return [f for f in facts if id(f) not in drop] + out


# "he could buy in another two hundred and fifty thousand": more of the money just named, in its currency
MORE_IN_WORDS = re.compile(
    rf"\b(?i:another|a\s+further|an\s+additional|an\s+extra)\s+(?P<n>(?i:{WORDS}))(?![\w-])"
    r"(?!\s*%|\s+(?!(?:from|to|in|into|for|of|over|by|next|this|that|a|an|the|and|or|but|if|when|at|on|per|each|every|"
    r"later|now|soon)\b)[a-z])"  # "another fifty thousand shares" counts shares, not money
)


def _more_in_words(problem, facts):
    out = []
    for m in MORE_IN_WORDS.finditer(problem):
        value = words_value(m["n"])
        earlier = [f for f in facts if f.kind == "amount" and f.end <= m.start() and f.unit]
        taken = any(f.start < m.end("n") and m.start("n") < f.end for f in facts)
        if value is None or value < 1000 or not earlier or taken:
            continue
        out.append(Fact("amount", "amount", float(value), earlier[-1].unit, m["n"], m.start("n"), m.end("n")))
    return out


def refine(problem, facts, ends):
    """The extracted quantities with the case's terms read in: see the module's docstring."""
    from reasoning.facts.extract import amount_label

    facts = word_amounts(problem, facts)
    for f in facts:
        if f.kind == "amount" and f.label == "amount" and " " in f.text:
            f.label = amount_label(problem, f, ends)  # one read here, in words
    facts = facts + basis_points(problem, facts)
    amounts = [f for f in facts if f.kind == "amount"]
    amount_roles(problem, facts, ends)
    found = allocations(problem, ends, amounts)
    taken = [(f.start, f.end) for f in found]
    facts = [f for f in facts if not (f.kind in ("percent", "age", "year") and any(s <= f.start < e for s, e in taken))]
    # "a USD 60/40 mix": an allocation in dollars, not USD 60
    facts = [f for f in facts if not (f.kind == "amount" and any(s < f.end <= e for s, e in taken))]
    facts = facts + found
    facts = facts + fractions(problem, facts, amounts)
    percent_roles(problem, facts, ends, amounts)
    listed = bare_lists(problem, facts, ends)
    facts = [f for f in facts if not (f.kind in ("percent", "age", "year") and any(g.start <= f.start < g.end for g in listed))] + listed
    spans = durations(problem)
    bound, used = limits(problem, facts, ends, spans, amounts)
    facts = [f for f in facts if id(f) not in used]
    bound_spans = [(b.start, b.end) for b in bound]
    times, replaced = horizons(problem, facts, ends, [d for d in spans if (d[0], d[1]) not in bound_spans])
    facts = [f for f in facts if id(f) not in replaced]
    facts = [f for f in facts if not (f.kind == "age" and NOT_A_PERSON_AGE.match(problem[f.end :]))]
    persons = people(problem, facts, ends)
    percent_bases(problem, facts + bound, amounts)
    bare_targets(problem, facts, ends)
    return facts + bound + times + persons


LOSS_WORDS = re.compile(r"\b(?:drawdown|drop|loss|decline|fall|hedge|hedged|hedging)\b", re.I)
ON_THING = re.compile(r"^\s*(?:[\w-]+\s+){0,2}?(?:on|of|in)\s+(?:the|her|his|their|its|our)\s+(?P<np>[\w-]+(?:\s+[\w-]+)?)", re.I)
AT_RATE = re.compile(r"\s+(?:(?:of|in)\s+[\w' -]{1,30}?\s+)?at\s+$", re.I)


def percent_bases(problem, facts, amounts):
    """The base of a percent the text ties to one amount by its words, where none was read: a loss or hedge limit "on
    the bond sleeve" is of the amount of that name (else, with no thing named, of the case's whole); "$420k of
    student loans at 6.8%" is the loans' rate. A percent applied to another amount is then a wrong base."""
    wholes = [a for a in amounts if re.search(rf"\b(?:{WHOLE_WORDS})\b", a.label, re.I) and a.role not in ("liability", "commitment")]
    whole = max(wholes, key=lambda a: a.value).label if len({a.unit for a in wholes}) == 1 else None
    for f in facts:
        if f.kind not in ("percent", "limit") or f.unit != "%" or f.base:
            continue
        owner = _amount_before_at(problem, f, amounts)
        if owner is not None:
            f.base = owner.label
            if f.label in ("percent", "rate", "share") or f.label.endswith(" share"):
                f.label = f"{owner.label} interest rate" if owner.role == "liability" else f"{owner.label} rate"
                f.role = "" if f.kind == "percent" else f.role
            continue
        if not LOSS_WORDS.search(f.label + " " + problem[f.end : f.end + 20]):
            continue
        if m := ON_THING.match(problem[f.end :]):
            named = [a for a in amounts if _stems(m["np"]) & _stems(a.label)]
            if len(named) > 1:  # "hedge of the Kreuzlingen account": the account the text placed in Kreuzlingen
                named = [a for a in named if _placed_in(a, m["np"], problem)]
            if len(named) == 1:
                f.base = named[0].label
        elif whole is not None:
            f.base = whole  # "can't stomach more than a 20% drop": of all they hold


def bare_targets(problem, facts, ends):
    """ "Equities drifted to 70% against a 55% target": a bare target in a sentence that gave one class's share today
    is that class's target, of the same whole."""
    for f in facts:
        if f.kind != "percent" or f.label != "target":
            continue
        start = max([e + 1 for e in ends if e < f.start], default=0)
        shares = [g for g in facts if g.kind == "percent" and g.role == "share" and start <= g.end <= f.start
                  and g.label.endswith(" share") and CLASS_NOUN.search(g.label)]
        if len(shares) == 1:
            f.label, f.base = f"{shares[0].label.removesuffix(' share')} target", f.base or shares[0].base


def _placed_in(amount, words, problem):
    """The amount is the one the text tied, in its own clause, to a name in `words` that its label lacks ("CHF
    750'000 with a bank in Kreuzlingen" for "the Kreuzlingen account")."""
    clause = re.split(r"[;:.(]|,\s|\band\b", problem[amount.end : amount.end + 60])[0]
    names = [w for w in re.findall(r"[A-ZÄÖÜ][\w-]{3,}", words) if w.lower() not in amount.label.lower()]
    return any(re.search(rf"\b{re.escape(n)}\b", clause) for n in names)


def _stems(text):
    """The first four letters of each word of four or more: "bond sleeve" and "bond ladder" share "bond"."""
    return {w[:4] for w in re.findall(r"[a-z]{4,}", text.lower())}


def _amount_before_at(problem, f, amounts):
    """The amount right before "at <percent>" ("$420k of student loans at 6.8%"), or None."""
    for a in amounts:
        if a.end <= f.start and f.start - a.end <= 45 and AT_RATE.fullmatch(problem[a.end : f.start]):
            return a
    return None


# "a 40-year-old family firm", "the 90-year-old foundation": an entity has no age
NOT_A_PERSON_AGE = re.compile(
    r"^(?:[- ]years?[- ]old|-jährig\w*)\s+(?:[\w-]+\s+){0,2}?(?:foundation|stiftung|trust|company|firm|business|"
    r"corporation|GmbH|AG|LLC|partnership|endowment|charity|fund|bank|house|building|property|villa|chalet)\b",
    re.I,
)
