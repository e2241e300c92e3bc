"""What a unit says of a rule or a goal: ended, loosened, excepted, the same rule in other words, its polarity.
"""
from __future__ import annotations

import re
from typing import Iterable

from bench.units.grammar import (ENDED, ENDED_OBJECT, GOAL_DONE, HEDGE, NEGATION, SEP, role_cues)
from bench.units.options import VERDICT, keys_of
from bench.units.keys import (Key, key_spans, stem, together, without)
from bench.units.sentences import (SPOKEN_ASIDE, units)
from bench.units.sources import asides_out


def cooccur(text: str, keys: Iterable[str]) -> bool:
    """Whether some unit of `text` holds every key (the validator's check on a source event)."""
    ks = keys_of(keys)
    return any(together(u, ks) for u in units(text))


# A table row's last cell that is a verdict, alone or with its reason after a dash or in brackets ('| dropped — one
# summary at the end |', '| removed |'; under its column's name, 'status: dropped'): the row's status, as a rejected
# option's is (`options.VERDICT`); a verdict with an object after a colon ('| rejected: gRPC |') names another
# option, not the row's end.
ROW_STATUS = re.compile(rf"\|\s*(?:[\w ]{{1,24}}:\s*)?{VERDICT}(?:\s*[—–(-][^|]*)?\s*\|?\s*$")


def ended(scope: str) -> bool:
    """The unit says an item has ended — not merely that it might have ('may no longer apply'), and not
    that it ended another one ('replaced the 30-day rule')."""
    return any(not HEDGE.search(" ".join(scope[:m.start()].split()[-3:])) and not ENDED_OBJECT.match(scope[m.end():])
               for m in ENDED.finditer(scope)) or ("|" in scope and bool(ROW_STATUS.search(scope)))


# The whole of the work said to be over: nothing left to do, or no task open ('Nothing else is outstanding',
# 'Task complete — nothing is pending', 'no open tasks'); never with an exception ('nothing left but the docs').
NOTHING_LEFT = re.compile(r"\bnothing\s+(?:else\s+)?(?:is\s+|left\s+|remains\s*)?(?:still\s+)?(?:outstanding|pending|"
                          r"left(?:\s+to\s+do)?|remaining|open|to do)\b|\bno\s+(?:more\s+)?(?:open|pending|remaining|"
                          r"outstanding)\s+(?:tasks?|work|items?|requests?|todos?)\b")


def nothing_left(scope: str) -> bool:
    """The unit says no work is left, with no exception, as a statement of its own: a field's value is said of its
    label ('waiting for: nothing outstanding' is no blocker, not no work)."""
    m = NOTHING_LEFT.search(scope)
    return m is not None and not re.search(r":\s*$", scope[:m.start()]) and not EXCEPTED.search(scope) \
        and not re.search(r"\bbut\b", scope)


def goal_done(scope: str) -> bool:
    """The unit marks a goal as a whole finished, by a status ('(done)', 'task complete')."""
    return bool(GOAL_DONE.search(scope))


# What a paraphrase must still say for a constraint's kind (its truth `kind`), and what turns it round.
RULE_CUES = {
    "ban": r"never|not|no|nothing|none|nobody|no one|avoid\w*|forbid\w*|prohibit\w*|ban\w*|stop|keep|only|until|"
           r"unless|without|wait\w*|before|leave|hold off|off-limits|off limits|no-go|frozen|freeze|read-only|readonly|"
           r"hands off|locked|approv\w*|consent|permission|first|kept|keeps|must|(?:is|are|gets?|stays?|remains?|be)\s+left\s+alone",
    "must": r"must|always|need to|needs to|needed|required|requires?|make sure|ensure|only|until|before|after|first|"
            r"strict|strictly|keep|wait\w*|unless|every|each|never|not|no|should|have to|has to|fixed",
    "reporting": r"only|when|ask|ping|tell|notify|report\w*|come to|contact|check with|flag|post|update|summary|"
                 r"let \w+ know|page|wake|just|nothing else|if and only if|unless|except|otherwise|bother|"
                 r"signs? off",
    "authorization": r"may|can|allow\w*|ok to|okay to|fine to|free to|go ahead|permit\w*|permission|authori\w+|"
                     r"without asking|yourself|let me|let you|lets",
}
# each kind's own cues, and the roles that state it in another language
KIND_ROLES = {"ban": ("not", "bound", "only", "must"), "must": ("must", "bound", "not", "only"),
              "reporting": ("only",), "authorization": ("may",)}
RULE = {k: re.compile(rf"\b(?:{v})\b" + (r"|n['’]t\b" if k in ("ban", "must") else "") + "|" + role_cues(*KIND_ROLES[k]))
        for k, v in RULE_CUES.items()}
# A predicate that says the rule its keys name is in force, whatever its kind ('the Friday 14:00–18:00 UTC payments
# freeze still stands'): the rule as set, neither lifted nor loosened.
IN_FORCE = re.compile(r"\b(?:still\s+(?:stands|applies|holds|in force|in effect)|stands|(?:is|are|remains?|stays?)\s+"
                      r"(?:still\s+)?in\s+(?:force|effect|place))\b")
# A restriction lifted ('no need to wait', 'is no problem', 'right away'), for bans, musts and reporting rules.
RELEASE = re.compile(r"\b(no need|needn['’]t|need not|not necessary|not required|no longer|(?:is|are) (?:now |still |also )?fine|it['’]s fine|no problem|"
                     r"feel free|go ahead|right away|ok to|okay to|free to|optional|doesn['’]t matter|"
                     r"don['’]t bother(?!\s+(?:\w+\s+){0,2}(?:unless|except|other than|but))|"
                     r"(?:do|does|did)(?:n['’]t| not) need|not needed|whenever|skip\w*|(?:is|are) ok(?:ay)?|"
                     r"without waiting|no questions asked|before \w+ (?:is|are) up)\b")
# 'skip' lifts a rule ('skip the soak', 'skip the question'), except where what a ban's 'skip' takes as its object
# holds the rule's own key: skipping the things the ban protects ('skip flags evaluated in the last 90 days') is
# leaving them alone, which keeps it. What a 'skip' that lifts takes: the rule itself, or the act it requires ('the
# 24-hour soak', 'the sign-off').
RULE_NOUN = re.compile(r"^[^,;.]*?\b(?:rules?|bans?|limits?|checks?|windows?|guards?|requirements?|policy|soak|"
                       r"wait\w*|sign-?offs?|approvals?|reviews?|tests?|steps?|questions?|asking)\b")
SKIP = re.compile(r"\bskip(?:s|ped|ping)?\b(?=((?:\s+[\w'’/.:-]+){1,8}))")


def skipped_keys(scope: str, keys: Iterable) -> str:
    """A ban's scope with each 'skip' whose object holds one of `keys` read as 'leave' (above)."""
    def read(m: re.Match[str]) -> str:
        obj = m.group(1)
        at = min((a for k in keys for a, _ in key_spans(obj, k)), default=None)
        return "leave" if at is not None and not RULE_NOUN.search(obj) else m.group(0)
    return SKIP.sub(read, scope) if "skip" in scope else scope


# An exception a paraphrase adds to a rule that has no condition of its own ('leave release/2.4 alone apart from
# item 2'): looser than the quote; a quote bounded already ('without asking me', 'until …') may be restated so.
EXCEPTED = re.compile(r"\b(?:apart from|except(?:\s+for)?|other than|save for|but for|with the exception of|"
                      r"aside from|unless)\b")


def loosened_around(outside: str) -> bool:
    """The words around a verbatim quote (`outside`, the quote blanked) add an exception or lift it ('<quote> —
    skip it when pods crash-loop', '<quote>, except for dev dependencies'): whatever bound the quote has, what is
    written around it is not the user's. An end ('no longer') is the status's to judge (`ended`, hedges and all)."""
    return bool(EXCEPTED.search(outside)) or any(m.group(0) != "no longer" for m in RELEASE.finditer(outside))


def excepted(scope: str, quote: str) -> bool:
    """The scope adds an exception (`EXCEPTED`, in brackets too) to a quote that has no bound of its own."""
    return bool(EXCEPTED.search(scope)) and not BOUNDED.search(quote)


BOUNDED = re.compile(r"\b(?:without|unless|until|before|after|except|only|if|when|whose|once)\b")
# the value said to be the one in force now ('the threshold is now 90 days'): how an amended value is restated
AMENDED = re.compile(r"\b(?:is|are)\s+now\b|\bnow\s+(?:is|are|at|set to)\b|"
                     r"\b(?:changed|raised|lowered|moved|corrected)\s+(?:\w+\s+){0,2}?to\b")
URGENT = re.compile(r"\b(?:immediately|right away|at once|straight away|asap|without delay)\b")
# A heading or label that says what follows is a rule.
RULE_HEAD = re.compile(r"(?:\b(?:rules?|constraints?|requirements?|policy|policies|guardrails?|restrictions?|limits?|bans?|"
                       r"musts?|don['’]ts|do not)\b|" + role_cues("rules") + r")[^␞:：]{0,30}(?:␞|:|：)")
# A restriction softened into a wish ('try to avoid', 'preferably', 'usually', 'if possible'): a ban, must or
# reporting rule hedged so is looser than the quote, unless the quote hedges alike.
SOFTENED = re.compile(r"\b(try(?:ing)? (?:not )?to|preferabl[ey]|ideally|if (?:at all )?possible|where possible|"
                      r"when(?:ever)? possible|as (?:much|far) as possible|usually|generally|typically|mostly|"
                      r"normally|when you can|if you can|might want to|it would be (?:nice|good|best)|best effort|"
                      # a modal of possibility over the obligation: 'Dana may need to sign off'
                      r"(?:may|might|could)\s+(?:need|have|has)\s+to)\b|"
                      + role_cues("soft"))
ONLY = re.compile(r"\bonly\b|" + role_cues("only"))      # a restriction's focus: 'skip the full CI run only when ...'
# An obligation or a ban the quote states outright ('must', 'have to', 'cannot', 'never'), which a paraphrase
# that only says 'should' weakens into advice ('Never delete volumes' kept as 'I should avoid deleting volumes').
OBLIGED = re.compile(r"\b(must|have to|has to|need(?:s)? to|required|requires?|cannot|can['’]t|may not|not allowed|never)\b")
# A permission or preference denied ('may not', "don't", 'avoid', 'instead of').
DENIAL = re.compile(r"\b(may not|can['’]t|cannot|can not|not allowed|not permitted|no longer|never|must not|"
                    r"don['’]t|do not|avoid\w*|stop|no more|instead of|isn['’]t allowed)\b")


def same_rule(scope: str, kind: str, quote: str, keys: tuple[str, ...] = ()) -> bool:
    """Whether a unit that holds a constraint's keys still states the same kind of rule as its quote:
    a ban, a must or a reporting rule keeps a restriction, lifts none ('Billing must wait until ...'
    yes, 'no need to wait' no) and is not softened into a wish ('try to avoid', 'preferably', 'usually',
    unless the quote says so too, nor an outright obligation into 'should'); an authorization keeps its permission and denies none; a preference
    is not turned into its opposite. A quote that its kind's cues do not describe falls back to
    comparing polarity (the parity of negation cues). The keys themselves are left out ('sign-off' is no
    reporting cue of its own). This is a lexical reading: it tells a kept rule from a lost or turned one
    in the common phrasings, and a judged probe is what tests a paraphrase's meaning."""
    scope = asides_out(scope, keys)     # '(the old Friday slot no longer applies)' is said of the old slot
    if kind == "ban":
        scope = skipped_keys(scope, keys)
    if any(WAIVED.search(scope) and _waived(scope, k) and not _waived(quote, k) for k in keys):
        return False            # its condition waived: 'page Aiko for any alert, customer-facing or not'
    if kind in ("must", "preference") and any(_offered(scope, k) and not _offered(quote, k) for k in keys):
        return False            # what must be done, offered as one way among others: 'rebase or squash, whichever'
    told = kind == "must" and any(imperative(scope, k) and imperative(quote, k) for k in keys)
    # a must the quote gives as an order ('Fix it properly instead') has no must-word to compare: its paraphrase
    # orders it too, says it with a cue of its kind, or stands under a rule's label — never by polarity alone
    ordered = kind == "must" and any(imperative(quote, k) for k in keys)
    # a rule worded as a contrast ('make it 90 days, not 30') is affirmative: its 'not' sets the old value aside
    set_aside = any(CONTRAST_BEFORE.search(scope[:a]) for k in keys for a, _ in key_spans(scope, k))
    plain_scope, plain_quote = contrasted(scope, keys), contrasted(quote, keys)
    turned, stated_as_contrast = plain_quote != quote, plain_scope != scope
    scope, quote = plain_scope, plain_quote
    if keys:
        for k in keys:
            scope, quote = without(scope, k), without(quote, k)
    # the kind's cue is read in the unit, not in the heading it sits under ('... oldest first' over a copied line
    # is no 'first' of the rule's); a heading says what follows is a rule only by naming it so (RULE_HEAD)
    body = scope.rsplit(SEP, 1)[-1]
    if turned:
        # a contrast amends a rule's value ('make it 90 days, not 30' for a 30-day ban): it carries no polarity
        # of its own, so the paraphrase states the rule in either form — as a contrast, under a rule's label, or
        # with its kind's cue ('never delete a flag evaluated in the last 90 days') — lifting or allowing nothing
        if set_aside or RELEASE.search(scope) or SOFTENED.search(scope) and not SOFTENED.search(quote) or (
                kind in ("ban", "must") and (excepted(scope, quote) or granted(body) and not granted(quote))):
            return False
        if kind in ("ban", "must") and RULE["authorization"].search(body) and polarity(body):
            return False    # 'flags evaluated in the last 90 days may be deleted' turns a ban into a permission
        return bool(stated_as_contrast or RULE_HEAD.search(scope) or RULE[kind].search(body) or AMENDED.search(body))
    if kind in ("ban", "must") and excepted(scope, quote):
        return False            # an exception the rule never had: 'leave release/2.4 alone apart from item 2'
    if kind in ("ban", "must", "reporting"):
        if SOFTENED.search(scope) and not SOFTENED.search(quote):
            return False        # loosened: 'Never merge billing/' kept as 'try to avoid merging billing/'
        if OBLIGED.search(quote) and not OBLIGED.search(scope) and re.search(r"\bshould\b", scope):
            return False        # 'must' kept as 'should': advice, not the obligation
        if URGENT.search(quote):
            scope = URGENT.sub(" ", scope)      # 'roll back right away' says the quote's 'immediately'
        if RULE[kind].search(quote) and not RELEASE.search(quote) or ordered:
            if RELEASE.search(scope) or granted(body) and not granted(quote):
                return False
            # under a heading or label that names it a rule ('Rules: byte-for-byte identical shapes'), a
            # statement of the quote's polarity is the rule
            if UNCHANGED.search(body) and polarity(scope) != polarity(quote):
                return False    # 'public URLs do not stay as they are' turns the ban round, whatever its cue
            return bool(RULE[kind].search(body)) or (told or bool(RULE_HEAD.search(scope))) and polarity(scope) == polarity(quote) \
                or bool(IN_FORCE.search(body)) and not NEGATION.search(body)
    elif kind == "authorization":
        if SOFTENED.search(scope) and not SOFTENED.search(quote) and (ONLY.search(quote) or NEGATION.search(quote)):
            return False        # a permission bounded by a restriction, the restriction softened into a wish
        if RULE[kind].search(quote) and not DENIAL.search(quote):
            # under a heading or label that names it a rule, the permitted act stated plainly is the permission
            return bool(RULE[kind].search(body) or RULE_HEAD.search(scope)) and not DENIAL.search(scope)
    elif kind == "preference" and not DENIAL.search(quote):
        return not DENIAL.search(scope)
    return polarity(scope) == polarity(quote)


# A 'not' that turns from the key to another option after a comma, bracket or dash ('make it 90 days, not 30',
# '90 days (not 30)') sets that other option aside; it does not negate the rule that holds the key.
CONTRAST_BEFORE = re.compile(r"(?:^|,|\(|—|–|\s-)\s*(?:and\s+|but\s+)?not\s+(?:\w+\s+)?$")   # '30 days, not 90 days'
CONTRAST_NOT = re.compile(r"^\s*(?:,|\(|—|–|\s-)\s*(?:and\s+|but\s+)?(not)\b")


def contrasted(text: str, keys: Iterable) -> str:
    """`text` without the 'not' of each contrast that follows one of `keys` (above); a 'not' before the key
    ('30 days, not 90 days') still governs it."""
    cuts = set()
    for k in keys:
        for _, end in key_spans(text, k):
            m = CONTRAST_NOT.match(text[end:])
            if m:
                cuts.add(end + m.start(1))
    for i in sorted(cuts, reverse=True):
        text = text[:i] + "   " + text[i + 3:]
    return text


# A condition disjoined with its own negation restricts nothing: 'customer-facing or not', 'whether or not it is
# customer-facing', 'regardless of the path'.
WAIVED = re.compile(r"\bor not\b|\bregardless\b|\bno matter\b|\birrespective\b")
WAIVED_AFTER = re.compile(r"^[\s,]*or not\b")
WAIVED_BEFORE = re.compile(r"\b(?:whether or not|regardless of|no matter|irrespective of)\s+(?:\w+\s+){0,3}$")


# A key offered as one of alternatives ('rebase or squash', 'either squash or rebase'): an obligation or a preference
# said so no longer requires it. A ban's alternatives widen it ('never merge billing/ or auth/'). A slash is no 'or'
# ('2% / 5 min', 'billing/').
# 'or' before a comparison is a bound, no alternative ('2% or more', 'five minutes or longer'); a key that is the
# condition of the rule ('ask before any breaking change or removal') is widened by its alternatives, not loosened.
COMPARED = r"(?:not|more|less|fewer|longer|shorter|higher|lower|greater|above|below|over|under|so|equal)\b"
# nor is an 'or' that opens a consequence ('squash, or else …', 'squash or the changelog breaks', 'or nothing')
OFFERED_AFTER = re.compile(rf"^(?:\s+[\w'’-]+){{0,3}}?\s*,?\s+or\s+(?!{COMPARED}|(?:else|otherwise|nothing|the|a|an|we|i|"
                           rf"it|they|you|this|that|there)\b)\w")
OFFERED_BEFORE = re.compile(r"(?:\b(?:either|whichever|any of)\s+(?:[\w-]+\s+){0,2}|\w\s*,?\s+or\s+)$")


def _offered(text: str, key: "Key | str") -> bool:
    return any((OFFERED_AFTER.match(text[b:]) or OFFERED_BEFORE.search(text[:a]))
               and not BOUNDED.search(" ".join(text[:a].split()[-3:])) for a, b in key_spans(text, key))


def _waived(text: str, key: "Key | str") -> bool:
    return any(WAIVED_AFTER.match(text[b:]) or WAIVED_BEFORE.search(text[:a]) for a, b in key_spans(text, key))


# What may stand before an imperative: the start of a clause, a label, a condition closed by a comma ('If the
# 5xx rate stays above 2%, roll that service back'), 'always' / 'then' / 'please'.
IMPERATIVE_LEAD = re.compile(r"(?:^|[␞:;.!?]\s*|,\s+)(?:(?:always|then|please|just|and)\s+)*$")


def imperative(text: str, key: "Key | str") -> bool:
    """Whether `key` (an action: 'roll that service back') opens its clause as an order. A must whose quote
    orders its key and whose paraphrase orders it too states the same obligation without a must-word ('5xx above 2%:
    rolling catalog back per the rule' applies it). A verb in the past reports a deed: 'Fixed address.spec.ts'
    orders nothing."""
    verb = re.match(r"\w*", str(getattr(key, "text", key)).lower()).group()
    return any(IMPERATIVE_LEAD.search(text[:a]) and not _past(re.match(r"\w*", text[a:].lower()).group(), verb)
               for a, _ in key_spans(text, key))


def _past(word: str, verb: str) -> bool:
    """`word` is `verb` in the past tense or its participle ('fixed', 'rolled'; not 'fix', 'rolling')."""
    return word != verb and word.endswith(("ed", "en")) and (word.startswith(verb[:-1] or verb) or stem(word) == stem(verb))


# A predicate that says its subject is left unchanged ('public URLs stay exactly as they are', 'the schema
# remains untouched'): a negated change, so it counts as one negation cue ("don't change any public URL").
UNCHANGED = re.compile(r"\b(?:stay|stays|stayed|remain|remains|remained|is left|are left|be left)\s+(?:\w+\s+){0,2}?"
                       r"(?:as (?:it is|they are|is|it was|they were)|unchanged|untouched|intact|as-is)\b")


# A verb that means not doing its object ('skip the full CI run' is 'without the full CI run').
PRIVATIVE = re.compile(r"\b(?:skip|skips|skipped|skipping|omit|omits|omitted|omitting)\b")


# A permission granted outright ('major versions are allowed without asking', 'you can take a major'): no negation
# or restriction governs it from the words before ('only allowed after', 'unless Omar allows it') and none
# follows it ('may not', "can't").
PERMITS = re.compile(r"\b(?:may|can|allowed|permitted|fine to|ok to|okay to|free to)\b(?!['’]t|\s*not\b)")
GOVERNS_PERMIT = re.compile(r"\b(?:not|no|never|only|unless|if|until|once|when|whether|nobody|no one)\b|n['’]t\b")


def granted(text: str) -> bool:
    """The text grants a permission outright (`PERMITS`): a ban or a must stated so is turned round. An aside a
    person speaks ('(I can then say yes or no)') grants nothing of the rule's."""
    text = SPOKEN_ASIDE.sub(" ", text) if "(" in text else text
    return any(not GOVERNS_PERMIT.search(" ".join(text[:m.start()].split()[-3:])) for m in PERMITS.finditer(text))


def polarity(text: str) -> bool:
    """True for an affirmative clause: an even number of negation cues ('do not X without asking'
    reads like 'ask before X'; 'X is fine without asking' does not); a predicate of no change counts as one."""
    return (len(NEGATION.findall(text)) + len(UNCHANGED.findall(text)) + len(PRIVATIVE.findall(text))) % 2 == 0
