"""What a clause is about: its subject, read from its words without a parser. Pure.

A value belongs to its subject. "The EU cluster has 5 nodes, and the US cluster has 12 nodes"
does not say that the EU cluster has 12 nodes, although every word of that claim is in it; and
"Ticket 3302 ..." is another ticket than "Ticket 3301 ...", not a new value of one ticket. The
rules here say where a clause's subject ends and what it is:

- **where it ends**: at its verb ("is", "has", "will", a verb of change such as "moved"), at a
  colon, or else after its first word or name ("Maria Chen");
- **its own subject**: a clause that starts with a determiner or a name and goes on to say
  something ("and the US cluster has 12 nodes", "and Sam owns billing") has a subject of its
  own; one that continues the clause before it ("and is deprecated", "and HIPAA-compliant
  storage", "which runs nightly") has none;
- **numbers in names**: a number right after a noun of the subject ("Ticket 3301", "Room 101",
  "Payment 2", "Server 1") or after "for/of" ("the export for invoice 4471") names the thing; a
  number after the verb ("is on floor 3") or before its noun ("5 engineers") is a value;
- **numbered records**: in a clause that tells an event, a code or number right after a noun of
  a record that there are many of ("on ticket T-1073", "closed invoice 4471", "merged PR 212")
  names the record it happened on: "Dana postponed the rollout on ticket T-1073" and "... on
  ticket T-1065" are two events on two tickets, not a new ticket number. In a state it is the
  value ("The login bug is tracked in ticket OPS-4412" / "... NET-118" is an update). A place
  ("floor 5", "room 205") or a version is no record: "is on floor 3" / "is on floor 5" stays an
  update.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from curation_pipeline.core.sentence_tokens import CLAUSE_WORDS, Token, root

# Where a clause's subject ends: its verb "is"/"has"/"will"..., or a verb of change ("moved to").
VERBS = frozenset("""
is are was were be been has have had will would can could must should may might does do did shall
isn't aren't wasn't weren't hasn't haven't hadn't won't wouldn't can't couldn't doesn't don't didn't
moved changed switched passed transferred migrated shifted rescheduled postponed pushed grew grown
went became cut raised lowered increased decreased reduced dropped rose fell extended
""".split())
_DETERMINERS = frozenset("the a an our their his her its my your this that these those".split())


def is_verb(token: Token) -> bool:
    """One of VERBS, but for the month "May" (sentence_tokens gives it a key; the modal has none)."""
    return token.lower in VERBS and not (token.lower == "may" and token.keys)
# Clause words after which a clause refers back to the one before ("which runs nightly").
_REFERRING = frozenset("which who whom whose where when that".split())
# A continuation says too little to have a subject of its own ("and HIPAA-compliant storage").
_MIN_OWN_SUBJECT_CLAUSE = 3


# Words an agent's note opens with that are capitalised only because they open it: "Set April
# 20 deadline ...", "Added project gallery ...", "Scheduled a Zoom meeting ...".
_OPENING_VERBS = frozenset("""
set add use get make keep send move start stop run check call book plan track buy try ask tell
need want build fix ship test write read review update remove create open close
""".split())


def verb_like_opening(token: Token) -> bool:
    """Whether a capitalised word that opens a sentence is a verb rather than a name: a past or
    present participle ("Scheduled", "Targeting"), a common verb ("Set", "Added"), or a past
    form that does not end in -ed ("Held sprint retrospective ...", "Paid $480 ..."), but for
    those that are also first names ("Rose", "Drew", "Sang", "Won", "Ran")."""
    lower = token.lower
    return lower in _OPENING_VERBS or (len(lower) > 4 and lower.endswith(("ed", "ing"))) \
        or (lower in _IRREGULAR_PAST and lower not in _ALSO_NAMES)


# What opens the object right after a verb the words do not know ("holds the record"), and what
# else may follow one: "flows into", "plays for".
_OBJECT_OPENERS = frozenset("the a an my our your his her their its this that these those".split())
_AFTER_A_VERB = _OBJECT_OPENERS | frozenset("into in on at to for from with by of".split())


def verb_by_shape(tokens: Sequence[Token], n: int, *, before_preposition: bool = True, after_a_link: bool = False) -> bool:
    """Whether the word at `n`, after the subject's words, is a verb the words do not list, by
    its shape and what follows: a present form in -s before a preposition, an article, a name or
    a number ("The Danube empties into ...", "Lionel Messi plays for ...", "The support queue
    holds 40 tickets"); not "glass", "status" or "famous". A plural noun may come before a
    preposition too ("swim lessons for Emma"): `before_preposition=False` asks for an object
    right after it (an owner, an article, a name or a number). `after_a_link`: the word before
    may be "and" or "or" ("... and works from Lisbon")."""
    if not 0 < n < len(tokens) - 1:
        return False
    token, following, previous = tokens[n], tokens[n + 1], tokens[n - 1]
    return (token.kind == "word" and not token.is_name and bool(token.keys) and token.lower.endswith("s")
            and not token.lower.endswith(("ss", "us", "is", "'s")) and previous.kind == "word"
            and (bool(previous.keys) or after_a_link and previous.lower in ("and", "or"))
            and ((following.lower in _AFTER_A_VERB if before_preposition else following.lower in _OBJECT_OPENERS)
                 or following.is_name or following.kind == "number"))


def subject_end(tokens: Sequence[Token]) -> int:
    """Index of the first token after the clause's subject: 0 for a clause that continues
    another ("until 17:00", "and Wednesdays")."""
    if tokens and tokens[0].lower in CLAUSE_WORDS:
        return 0
    for n, token in enumerate(tokens):
        if is_verb(token) or token.text == ":":
            return n
    first = next((n for n, t in enumerate(tokens) if t.keys), None)
    if first is None:
        return 0
    if any(t.lower in _PRONOUNS for t in tokens[:first]):
        return first  # the pronoun was the subject, its verb follows: "I've now read 15 books"
    end = first + 1
    while end < len(tokens) and tokens[first].is_name and tokens[end].is_name:
        end += 1  # a name is one subject: "Maria Chen"
    if end < len(tokens) and tokens[end].kind == "number":
        end += 1  # a numbered name: "Server 1 runs ..."
    return end


# The person a pronoun or possessive at a clause's opening speaks of.
_PERSONS = {word: person for person, words in {
    "I": "i i'm i've i'll i'd my me", "we": "we we're we've we'll we'd our us",
    "you": "you you're you've you'll you'd your", "he": "he he'll he'd his him",
    "she": "she she'll she'd her", "they": "they they're they've they'll they'd their them",
}.items() for word in words.split()}
_POSSESSIVES = frozenset("my our your his her their".split())
# A pronoun (or its contraction) that is a clause's subject: the word with keys after it is a verb.
_PRONOUNS = frozenset(_PERSONS) - _POSSESSIVES - frozenset("me us him them".split()) | {"it", "it'll"}
# Verbs of a change someone makes to a thing ("I moved Tom's flight"): the one who makes it
# is no owner of the value. The auxiliaries of VERBS are not among them.
_CHANGE_VERBS = VERBS - frozenset("""
is are was were be been has have had will would can could must should may might does do did shall
isn't aren't wasn't weren't hasn't haven't hadn't won't wouldn't can't couldn't doesn't don't didn't
""".split()) | frozenset("rescheduled upgraded updated adjusted bumped renewed revised".split())


def _possessed(token: Token) -> bool:
    return token.text.endswith(("'s", "’s", "s'", "s’"))


# People someone has: a possessive before one of these opens on another person ("Ravi's sister
# lives in Pune" gives no value of Ravi's, "My sister lives in Oslo" none of mine).
_PEOPLE_OF = frozenset(root(word) for word in """
mother father mom dad mum parent parents wife husband spouse partner boyfriend girlfriend fiance
fiancee son sons daughter daughters child children kid kids sister sisters brother brothers sibling
siblings cousin cousins aunt uncle niece nephew grandmother grandfather grandma grandpa grandparent
grandparents grandson granddaughter friend friends roommate flatmate housemate colleague coworker
boss manager neighbour neighbor landlord landlady tenant coach tutor teacher doctor dentist therapist
nanny babysitter caregiver carer assistant ex
""".split())


def kin_root(word: str) -> str:
    """The root of a relative's word without "step-" and "-in-law" ("stepbrother",
    "mother-in-law": "brother", "mother")."""
    word = word.removesuffix("-in-law")
    return root(word.removeprefix("step-").removeprefix("step") if word.startswith("step") else word)


def _person_noun(token: Token) -> str | None:
    """The root of a person someone has, with "step-", "-in-law" and "ex-" ("mother-in-law")."""
    person = kin_root(token.lower.removeprefix("ex-"))
    return person if person in _PEOPLE_OF else None


def _someone_of(owner: str, words: Sequence[Token], n: int) -> str | None:
    """"of:<owner>:<person>" when the word at `n` (or the next, after one word that says which:
    "older sister", "business partner") is a person someone has, the clause's subject ("sister
    lives", "manager is", "landlord, who ...", "dad's phone number", "sister Meera lives"); not a
    word before another noun ("My therapist appointments are ...")."""
    if _person_noun(words[n]) is None and n + 1 < len(words) and not words[n].is_name \
            and not _possessed(words[n]) and _person_noun(words[n + 1]) is not None:
        n += 1  # "Ravi's older sister", "Nora's business partner"
    token, person = words[n], _person_noun(words[n])
    if person is None:
        return None
    if _possessed(token):
        return f"of:{owner}:{person}"  # "Ana's dad's phone number": her dad's
    verb = n + 1
    while verb < len(words) and words[verb].lower in _STATE_ADVERBS:
        verb += 1
    if verb + 1 < len(words) and words[verb].lower in _CHANGE_VERBS and words[verb + 1].kind != "number":
        # "My doctor increased my lisinopril to 20 mg": mine, as "Dr. Lee moved my therapy
        # sessions" is; "My sister raised her rent": hers; "My sister moved to Bergen": hers.
        changed_for = _owner(words[verb + 1:])
        if changed_for is not None:
            return f"of:{owner}:{person}" if changed_for in ("he", "she", "they") else changed_for
    following = words[n + 1] if n + 1 < len(words) else None
    # A word with keys after it that is no verb (a present in -s, a past in -ed) nor a name makes
    # it a noun's modifier.
    modifier = following is not None and bool(following.keys) and following.lower not in _STATE_ADVERBS \
        and not (is_verb(following) or verb_by_shape(words, n + 1) or following.is_name
                 or following.lower.endswith("ly") or len(following.lower) > 4 and following.lower.endswith("ed"))
    return None if modifier else f"of:{owner}:{person}"


# Adverbs between a subject and its verb: "Priya's daughter now speaks only English".
_STATE_ADVERBS = frozenset("now currently still also just recently finally already no longer".split())


def opening_person(tokens: Sequence[Token]) -> str | None:
    """Whose value a clause gives, when it opens on a person: the person of its pronoun or
    possessive ("I've", "our", "She'll"; after words like "Today" or "Currently"), or a name
    ("Tom's rent", "Priya has"). One who makes a change is no owner: "I moved Tom's flight" is
    Tom's, "I raised the grocery budget" nobody's in particular; nor is "My son's tuition" mine.
    None when it opens on no person ("Read 12 books", "The team has ...")."""
    words = [t for t in tokens if t.kind != "punct"]
    while words and (words[0].lower in CLAUSE_WORDS or (words[0].lower not in _PERSONS and (
            not words[0].keys or (len(words[0].lower) > 4 and words[0].lower.endswith("ly"))))):
        words = words[1:]  # "and", "Today", "Currently"
    if not words:
        return None
    first, rest = words[0], words[1:]
    if first.lower in _PERSONS:
        if first.lower in _POSSESSIVES and rest and _someone_of(_PERSONS[first.lower], words, 1):
            # "My sister lives in Oslo": hers; "My mother's internet bill": my mother's.
            return _someone_of(_PERSONS[first.lower], words, 1)
        if first.lower in _POSSESSIVES and rest and _possessed(rest[0]):
            return None  # "My Spotify's ...": whose, the words do not tell
        if rest and rest[0].lower in _CHANGE_VERBS and not (len(rest) > 1 and rest[1].kind == "number"):
            return _owner(rest[1:])  # "I moved Tom's flight": Tom's; "We've raised $8,000": ours
        return _PERSONS[first.lower]
    named = 1  # the words of the name that opens it: "Tom Hale's manager"
    while first.is_name and named < len(words) and words[named].is_name and not _possessed(words[named - 1]):
        named += 1
    if first.is_name and _possessed(words[named - 1]) and named < len(words):
        person = _someone_of(" ".join(key for t in words[:named] for key in t.keys), words, named)
        if person is not None:
            return person  # "Ravi's sister lives in Pune": hers
    if first.is_name and not _possessed(words[named - 1]) and not verb_like_opening(first) and named + 1 < len(words) \
            and words[named].lower in _CHANGE_VERBS and words[named + 1].kind != "number":
        # "Dr. Lee moved my therapy sessions": mine, as "I moved ..." would be; "Noemi changed
        # her weekday alarm": hers, Noemi's.
        owner = _owner(words[named + 1:])
        return "name:" + " ".join(first.keys) if owner in ("he", "she", "they") else owner
    if first.is_name and rest and (_possessed(words[named - 1]) or (not verb_like_opening(first) and named < len(words) and (
            is_verb(words[named]) or verb_by_shape(words, named)))):
        return "name:" + " ".join(first.keys)
    if verb_like_opening(first) and rest and rest[0].lower in _PERSONS:
        return _PERSONS[rest[0].lower]  # "Gave him 2 mg", "Moved her appointment"
    return None


def _owner(words: Sequence[Token]) -> str | None:
    """The owner a change is made to: the first possessive after the verb ("Tom's flight", "my
    gym membership"), or None."""
    for n, token in enumerate(words[:4]):
        if token.lower in _POSSESSIVES:
            if n + 1 < len(words) and _possessed(words[n + 1]) and root(words[n + 1].lower) in _PEOPLE_OF:
                return f"of:{_PERSONS[token.lower]}:{root(words[n + 1].lower)}"  # "my mother's bill"
            return _PERSONS[token.lower]
        if token.is_name and _possessed(token):
            return "name:" + " ".join(token.keys)
    return None


def other_persons(older: Sequence[Token], newer: Sequence[Token]) -> bool:
    """Whether two clauses open on two persons, one of them a pronoun or someone a person has:
    "He'll drive 2 kids" / "She'll drive 3 kids", "I'm paying $1,450 in rent" / "Tom's rent went
    up to $1,525", "Ravi's sister lives in Pune" / "Ravi lives in Mumbai". The words cannot tell
    whose value is whose; "My rent is $1,450" / "I'm now paying $1,525" are one person's."""
    mine, theirs = opening_person(older), opening_person(newer)
    if mine is None or theirs is None or mine == theirs:
        return False
    if any(one.startswith("of:") and other in ("he", "she") for one, other in ((mine, theirs), (theirs, mine))):
        return False  # "My son's tuition" / "His tuition ...": he may be the son
    return not (mine.startswith("name:") and theirs.startswith("name:"))


def own_subject(tokens: Sequence[Token]) -> frozenset[str]:
    """The keys of a clause's own subject (see the module docstring); empty for a clause that
    continues the one before it."""
    start = 0
    if tokens and tokens[0].lower in CLAUSE_WORDS:
        if tokens[0].lower in _REFERRING:
            return frozenset()
        start = 1
    rest = list(tokens[start:])
    if not rest or not (rest[0].lower in _DETERMINERS or rest[0].is_name):
        return frozenset()
    if sum(1 for t in rest if t.keys or is_verb(t)) < _MIN_OWN_SUBJECT_CLAUSE:
        return frozenset()
    end = subject_end(rest)
    return frozenset(key for token in rest[:end] for key in token.keys)


def _verb_form(token: Token) -> bool:
    """A past form anywhere ("Completed", "logged"), or a present participle inside a clause
    ("highlighting", "including"): a number after it is how many, not part of a name. A
    capitalised "-ing" word may be a name ("Building 4 is closed")."""
    lower = token.lower
    if len(lower) <= 4 or lower in _NOT_VERB_FORMS:
        return False
    return lower.endswith("ed") or (lower.endswith("ing") and token.text[:1].islower())


# Words ending like a verb form that are no verb before a number ("speed 3", "hundred 5").
_NOT_VERB_FORMS = frozenset({"speed", "hundred"})


# Abbreviations a number of a work or a volume follows ("No. 2", "Op. 27", "Vol. 3").
_NUMBERED = frozenset({"no", "nos", "op", "vol"})


def numbered_in_name(tokens: Sequence[Token], n: int) -> bool:
    """Whether the number at `n` follows "No.", "Op.", "Vol." of a name: a word of that name
    ("String Quartet No. 2"), replaced with it."""
    return n > 0 and tokens[n - 1].lower.rstrip(".") in _NUMBERED and tokens[n - 1].text[:1].isupper()


def naming_numbers(tokens: Sequence[Token]) -> set[int]:
    """Positions of the numbers that are part of a name: right after a word of the clause's
    subject ("Ticket 3301 is ...", "Room 101 is ..."), after "for/of <noun>" ("the export for
    invoice 4471") or after "No." ("String Quartet No. 2")."""
    end = subject_end(tokens)
    found = set()
    for n, token in enumerate(tokens):
        if token.kind != "number" or n == 0:
            continue
        before = tokens[n - 1]
        if numbered_in_name(tokens, n):
            found.add(n)  # "String Quartet No. 2", "Op. 27": the number is the name's
            continue
        if before.kind != "word" or not before.keys:
            continue
        if before.lower.rstrip(".") in MONTH_WORDS:
            continue  # "booked for June 4", "the deadline of April 1": a date, not a name
        if before.lower.rstrip(".") in WEEKDAYS or n + 1 < len(tokens) and tokens[n + 1].lower.rstrip(".") in MONTH_WORDS:
            continue  # "booked for Thursday 14 March": a day of a month, not a name
        if token.text.endswith("%") or _verb_form(before):
            continue  # "Achieved 65% coverage", "highlighting 5 mentees": how many, not which
        if n == 1 and verb_like_opening(before) and _counts_a_noun(tokens, n):
            continue  # "Targeting 1,200 words per week", "Averaging 5.5 hours": how many
        in_subject = n < end
        after_of = n >= 2 and tokens[n - 2].lower in ("for", "of")
        if in_subject or after_of:
            found.add(n)
    return found


def _counts_a_noun(tokens: Sequence[Token], n: int) -> bool:
    """Whether the number at n is followed by a noun it counts: a number written with a
    thousands comma or a decimal ("1,200 words", "5.5 hours"), or a small one before a plural
    ("12 problems"); not "Building 4 is closed", "Taking 14 bus", "Debugging 502 errors", a year."""
    number = tokens[n].text
    if not (re.search(r"\d[.,]\d", number) or len(number) <= 2):
        return False  # "Filing 2023 taxes", "Debugging 502 errors": which one, not how many
    following = tokens[n + 1] if n + 1 < len(tokens) else None
    return following is not None and following.kind == "word" and following.text[:1].islower() \
        and not is_verb(following) and (len(number) > 2 or following.lower.endswith("s"))


# Month names: a number after one is a day of a date.
MONTH_WORDS = frozenset("""january february march april may june july august september october november
december jan feb mar apr jun jul aug sep sept oct nov dec""".split())
WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())

# Nouns of records that are numbered because there are many of them: the code after one names
# the record. Places (floor, room), versions and sizes are left out: a new one is a new value.
RECORD_NOUNS = frozenset("""
ticket tickets issue issues invoice invoices order orders case cases incident incidents bug bugs
pr prs mr mrs task tasks story stories epic epics request requests receipt receipts claim claims
""".split())


def record_codes(tokens: Sequence[Token]) -> set[int]:
    """Positions of the codes and numbers that name a record (RECORD_NOUNS): right after its
    noun, or after its noun and a "#" ("ticket #4471")."""
    found = set()
    for n, token in enumerate(tokens):
        if n == 0 or not (token.kind == "number" or any(ch.isdigit() for ch in token.text)):
            continue
        before = tokens[n - 1]
        if before.text == "#" and n >= 2:
            before = tokens[n - 2]
        if before.lower in RECORD_NOUNS:
            found.add(n)
    return found


# The words at the end of a clause that are its object or the value it states ("owns billing",
# "is rap rock"): at most this many.
_TAIL_WORDS = 2


def tail_start(tokens: Sequence[Token]) -> int:
    """Where the clause's last words begin (see tail_keys): len(tokens) when it ends in none."""
    start, count = len(tokens), 0
    for n in range(len(tokens) - 1, -1, -1):
        token = tokens[n]
        if token.kind == "punct":
            if count:
                break
            continue
        if not token.keys:
            break
        start, count = n, count + 1
        if count == _TAIL_WORDS:
            break
    return start


def tail_keys(tokens: Sequence[Token]) -> frozenset[str]:
    """The keys of the clause's last words (its object, or the value it states): the run of
    content words that ends it, at most two ("is rap rock", "owns billing", "run Ubuntu 24.04")."""
    return frozenset(key for token in tokens[tail_start(tokens):] for key in token.keys)


# ----------------------------------------------------------------------------- the subject index

# Nouns a value sits next to that say nothing of what is measured ("3 times", "2 of them").
_VAGUE_NOUNS = frozenset("time times thing things one ones lot lots way ways bit kind sort part am pm".split())
_CLOCK = frozenset({"am", "pm", "a.m", "p.m", "utc", "gmt"})
# How far from a value a noun still says what the value measures ("8 cards", "deadline April 1",
# "1,000 calls/day quota", "accuracy ... from 70% to 90%").
_VALUE_REACH = 3


def subject_keys(text: str) -> frozenset[str]:
    """What a memory is about, as keys two memories of one thing share however they are worded
    (the candidate index of step 2): each name or run of names other than a lone word that only
    starts its sentence ("name:danielle"; a lone opening word before a verb is a name: "Telegram
    was developed by ...", `_opening_name`); each code ("id:INV-4471", case kept); the head noun
    of each clause's subject ("thing:deadlin"); and each noun within three words of a number,
    date, time or value word, which says what the value measures ("thing:card" of "8 cards"). A
    speaker label is no subject: every turn of a conversation has one."""
    from curation_pipeline.core.clauses import text_clauses
    from curation_pipeline.core.fact_tokens import extract_facts
    from curation_pipeline.core.measures import is_measurement
    from curation_pipeline.core.speakers import without_speaker
    from curation_pipeline.core.value_words import value_class

    text = without_speaker(text)
    keys: set[str] = {f"id:{token}" for token in extract_facts(text).by_kind.get("identifier", ())
                      if not is_measurement(token)}  # "180ms" is a value, not what the memory is about
    for sentence in text_clauses(text):
        tokens = sentence.tokens
        run: list[Token] = []
        for token in (*tokens, None):
            if token is not None and token.is_name and token.keys and token.lower not in _CLOCK \
                    and value_class(token.lower, token.keys[0]) not in ("weekday", "month"):
                run.append(token)
                continue
            if run and not (len(run) == 1 and tokens.index(run[0]) == 0 and not _opening_name(tokens)):
                keys.add("name:" + " ".join(t.lower for t in run))
            run = []
        for clause in sentence.clauses:
            words = clause.tokens
            end = subject_end(words)
            head = [t for t in words[:end] if t.keys and t.kind == "word" and not t.is_name]
            if head and head[-1].lower not in _VAGUE_NOUNS:
                keys.add(f"thing:{head[-1].keys[-1]}")
            for n, token in enumerate(words):
                is_value = token.kind == "number" or (token.kind == "word" and token.keys
                                                      and value_class(token.lower, token.keys[0]) is not None)
                if not is_value:
                    continue
                for near in (*words[max(0, n - _VALUE_REACH):n], *words[n + 1:n + 1 + _VALUE_REACH]):
                    if (near.kind == "word" and near.keys and not near.is_name and near.lower not in _VAGUE_NOUNS
                            and value_class(near.lower, near.keys[0]) is None):
                        keys.add(f"thing:{near.keys[-1]}")
    return frozenset(keys)


def _opening_name(tokens: Sequence[Token]) -> bool:
    """Whether a lone capitalised word opening a sentence is its subject, a name, because a verb
    follows it ("Telegram was developed by ...", "Greg helped me ...", "Rosa does Mondays"),
    rather than a word capitalised only because it opens the note ("Booked a table ...",
    "Dentist appointment moved ...", "Paid $480 ...")."""
    if len(tokens) < 2 or verb_like_opening(tokens[0]):
        return False
    following = tokens[1]
    return following.kind == "word" and not following.is_name and (
        is_verb(following) or verb_by_shape(tokens, 1) or past_form(following.lower))


# Past forms that do not end in -ed.
_IRREGULAR_PAST = frozenset("""
went met made got took gave saw ran wrote built sent bought sold led held spent won lost left found
began brought chose drew drove ate fell felt flew forgot grew hit kept knew lent paid put quit read
rode rose said sat shot showed slept spoke stood stole struck swam taught thought threw told understood
woke wore drank sang rang did had
""".split())
_ALSO_NAMES = frozenset({"rose", "drew", "sang", "won", "ran"})
_SUBORDINATORS = frozenset("""
after before until till since because when whenever while once if unless although though whereas
""".split())
_HAVE_BE = frozenset("is are am be been has have 's 're".split())


def past_form(word: str) -> bool:
    return word in _IRREGULAR_PAST or (len(word) > 4 and word.endswith("ed"))


def past_event(piece) -> bool:
    """Whether a clause tells something that happened, not how things are: its verb is in the
    past ("Completed 12 problems", "I secured 3 interviews"), it says what an event brought
    ("improving tone consistency by 22%"), or when ("after the May 27 review"). Two such clauses
    with other values are two events; a state ("The printer is on floor 3") has one value at a
    time. A verb after "is", "has" ("is scheduled", "has grown") is a state."""
    words = [t for t in piece.tokens if t.kind != "punct"]
    if words and words[0].lower in CLAUSE_WORDS:
        if words[0].lower in _SUBORDINATORS:
            return True
        words = words[1:]
    if not words:
        return False
    opening = words[0].lower
    if opening.endswith("ing") and len(opening) > 4 and not words[0].is_name:
        return True
    if opening == "used" and piece.first == 0 and not (len(words) > 1 and words[1].lower == "to"):
        return True  # "Used the Calm app 5 nights a week in September": too short for the -ed test
    if piece.first == 0 or words is not piece.tokens:
        if past_form(opening) and not words[0].is_name or (words[0].is_name and verb_like_opening(words[0])
                                                              and past_form(opening)):
            return True
    end = subject_end(words)
    for n in range(max(end, 1), min(len(words), end + 3)):
        word = words[n].lower
        if word in _HAVE_BE or word in ("will", "would", "can", "should", "must") or (word == "may" and not words[n].keys):
            return False
        if past_form(word) and words[n].kind == "word":
            return True
    return False


def words_before_the_verb(tokens) -> int:
    """Where the words of a note's subject end: at its first verb or number ("Resident parking
    permit | costs £120", "Cloud bill for the side project | averages $80"), or after a one-word
    subject before a word in -s ("User | drinks about 4 coffees", "Wren | takes ...")."""
    for n in range(1, len(tokens)):
        if is_verb(tokens[n]) or verb_by_shape(tokens, n) or tokens[n].kind == "number":
            return n
        if n == 1 and tokens[0].is_name and not tokens[1].is_name and tokens[1].lower.endswith("s"):
            return 1
    return len(tokens)
