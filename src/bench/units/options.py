"""What sets an option aside where it stands, what puts a choice back on the table, and what names an option
as the one that held before: the grammar decisions are read by. (A rule amended by contrast, '90 days, not 30',
is `rules.contrasted`.)
"""
from __future__ import annotations

import re
from typing import Iterable, TYPE_CHECKING

from bench.text import normalize
from bench.units.grammar import (ASIDE, CLAUSE, HEDGE, NOT_REFUSING, SEP, role_cues)

if TYPE_CHECKING:     # named in annotations only: that module builds on this one
    from bench.units.keys import Key


# A choice put back on the table, in the future or the progressive ('will be revisited', 'is being reconsidered',
# 'we'll revisit it'), not one done in the past ('revisited and kept'), nor on a condition ('to be revisited only if
# partners move to HTTP/2', 'only when …'): a clause opening on it, its subject a pronoun or a short noun phrase, is
# read with the clause before ('Keep REST; it will be revisited next sprint'), whose choice it reopens only when the
# subject is the choice (`checks._open`).
ON_CONDITION = r"(?![^.;]{0,30}?\b(?:if|unless|once|should|in case|only when|only after|only once)\b)"
REOPEN_VERB = r"(?:revisit|reconsider|re-?evaluate|reopen|re-?decide)"
REOPENED = re.compile(rf"(?:\b(?:(?:will|would|to|shall|is going to)\s+be\s+(?:\w+ly\s+)?|(?:is|are)\s+being\s+)"
                      rf"{REOPEN_VERB}e?d\b|\b(?P<by>we|i|you|they)(?:['’]ll|\s+will|\s+are going to|\s+plan to)\s+"
                      rf"{REOPEN_VERB}\b){ON_CONDITION}")
REOPEN_LEAD = re.compile(r"^(?:and\s+|but\s+)?(?:(?:it|this|that|which|the(?:\s+[\w-]+){1,3})\s+)?(?:" + REOPENED.pattern + ")")
# What sets an option aside where it stands: a negation governing it from before, in its clause ('we should
# not switch to gRPC', 'we are not acting on the gRPC part'), a word that puts another in its place
# ('instead of', 'rather than', 'over', 'rejected:'), or a predicate that rejects it after it ('pg_dump cannot be
# used', 'gRPC is off the table', 'gRPC was rejected', 'floats — ruled out'); 'cannot … yet' too.
SET_BEFORE = re.compile(r"(?:\b(?:instead of|rather than|over|against|not|rejected|ruled out|dropped|not chosen|"
                        r"reverted|removed|undid|undone|rolled back|backed out|deleted|"
                        r"no|never|vs\.?)\s*[:(]?\s*$)")
SET_LABEL = re.compile(r"\b(?:(?:rejected|ruled out|dropped|not chosen|removed|deprecated|reverted|replaced)"
                       # a participle may name the options it set aside ('Rejected alternatives:'), nothing else
                       r"(?:\s+(?:alternatives?|options?|approaches|ideas?|proposals?|choices?|candidates?))?|against|"
                       r"instead of)[\"'”]?\s*[:(]"
                       # a JSON field too ('"rejected": {"'); the option may stand at the head of the value's noun
                       # phrase ('Rejected alternatives: Postgres advisory locks'), never after a word of time or return
                       r"\s*[{\[\"'“]*\s*(?:(?!(?:now|again|back|new|then|later|soon|still|so|and|but|or|we|i|it|they|this|that|"
                       r"which|thus|hence|because|since)\b)[\w-]+\s+){0,2}$")
# the same closed class in the other languages summaries are written in (`ROLES`): function words, not
# vocabulary, so a summary in another language sets an option aside the same way
NEGATED_VERB = re.compile(r"\b(?:not|never|no longer|cannot)\b|n['’]t\b|" + role_cues("not"))
AUX = (r"(?:(?:idea|option|proposal|plan|approach|switch|route|path|suggestion|transport)\s+)?"
       r"(?:(?:is|are|was|were|has|have|had|been|being|got|gets|also|then|already|now|can|could|should|shall|will|"
       r"would|must|may|might|does|do|did)\s+)*")
# a participle phrase coordinated before the predicate that rejects ('Redis locks were considered and rejected', '…
# looked at before and turned down', '… evaluated and rejected last week'); a verdict that is also a verb of doing
# something to another thing then takes no object ('gRPC benchmarked twice and dropped p99 by 40%', '… tried and
# gone live there' report what gRPC did)
DOES = r"(?:dropped|removed|gone|reverted|rolled back)"
WEIGHED = r"\w+ed(?:\s+(?!and\b|but\b|then\b)\w+){0,2}\s+(?:and|but|then|and then)\s+"
VERDICT = (r"(?:off the table|a no-go|no-go|out of the question|ruled out|rejected|dropped|"
           r"abandon\w*|declined|refused|set aside|too slow|too risky|not chosen|not an option|turned down|vetoed|discarded|"
           r"shelved|scrapped|(?:still\s+)?missing|absent|gone|reverted|removed|rolled back|out\b(?![\s-]+(?:of\s+the\s+box|perform))|"
           # a cross beside an option, as a check mark beside an item, says it was set aside — not for a while only
           r"[✗✘❌](?!\w)(?![^.;|␞]*\b(?:for now|today|yet|later|next|planned|switch\w*|after|until|revisit\w*|"
           r"reconsider\w*|reopen\w*)\b)|"
           # weighed with no verdict of its own ('postgres advisory locks were considered too, but redis was the
           # pick'): an option that was on the table, neither the choice nor a proposal
           r"(?<!being )(?:considered|weighed|discussed|evaluated|looked at)(?:\s+(?:too|also|as well))?(?:,?\s*but\b|\s*[.;)]|\s*$))")
SET_AFTER = re.compile(
    # its own predicate denies it ('pg_dump cannot be used', 'gRPC is not an option'); a comma or bracket
    # before 'not' turns to another option instead ('cursor pagination, not offset'; 'cents (not floats)')
    rf"^\s+{AUX}(?:not\b|never\b|no longer\b|cannot\b|\w+n['’]t\b)|"
    rf"^\s*[(:—–-]?\s*{AUX}{VERDICT}|"
    rf"^\s*[(:—–-]?\s*{AUX}{WEIGHED}"
    rf"(?!{DOES}\s+(?!(?:because|as|since|for|due|after|by|then|too|again|already|entirely|outright|on|last|in)\b)\w)"
    rf"{VERDICT}")

# a value said to hold only for a while ('REST  # for now', '# temporary', '# until the load test')
# or put back on the table ('# revisit after the load test')
PROVISIONAL = re.compile(rf"\b(?:(?:for now|for the moment|temporar\w*|tentative\w*|provisional\w*|interim|until|"
                         rf"pending)\b|{REOPEN_VERB})")


def undone_note(note: str) -> bool:
    """A comment after a field's value that hedges it, holds it only for a while, puts it back on the table or whose
    own predicate sets it aside (`Key.valued`)."""
    return bool(HEDGE.search(note) or PROVISIONAL.search(note) or SET_AFTER.match(" " + note.lstrip("#/—– ")))


NEGATION_REACH = 8      # words before an option that a negation in its clause still governs
# An option named as what held before, not what holds: the value an annotation says it was ('money: float  # was
# integer cents', 'REST (was gRPC)'), the subject of a past copula that calls it the original or old one ('Keep
# REST was the original decision'), or what a clause says, before it, was done so far in the simple past ('so far
# each service was copied with logical replication'; not 'REST was chosen and works so far'): the tense and the
# bound say it is replaced, whatever the option.
FORMER_BEFORE = re.compile(r"(?:^|[#(—–]\s*|\s-\s+)(?:was|were)\s*:?\s*$")
FORMER = r"(?:original|old|former|previous|earlier|initial|first|prior)"     # what held before
FORMER_AFTER = re.compile(rf"^\s+(?:was|were|had been)\s+(?:(?:the|our|my|an?|his|her|their)\s+)?{FORMER}\b")
# a field whose label says its value held before ('Previous transport: REST', '| before: REST |', 'From: REST')
FORMER_LABEL = re.compile(rf"^\s*(?:{FORMER}|before|from|was|were|until)\b")
SO_FAR = re.compile(r"\b(?:so far|until now|up to now|up till now|till now|thus far)\b")
PAST = re.compile(r"\b(?:was|were)\b")


def set_against(scope: str, start: int, end: int) -> bool:
    """Whether the mention of an option at scope[start:end] is set aside where it stands (above): read within
    its clause, so a negation or rejection of another clause ('no downtime expected; use gRPC') is not. A mention
    inside an identifier is read from where the identifier starts ('instead of pg_advisory_xact_lock')."""
    j = start
    while j and (scope[j - 1].isascii() and scope[j - 1].isalnum() or scope[j - 1] == "_"):
        j -= 1
    if "_" in scope[j:start]:
        start = j
    lo = max((m.end() for m in CLAUSE.finditer(scope, 0, start)), default=0)
    hi = next((m.start() for m in CLAUSE.finditer(scope, end)), len(scope))
    before = scope[lo:start]
    words = before.split()[-NEGATION_REACH:]
    near = " ".join(words)
    # a label before it, or a heading over its list ('Rejected:' / '- transport: REST'), that sets it aside
    head = scope[:start].rpartition(SEP)[0]
    if SET_BEFORE.search(before) or NEGATED_VERB.search(NOT_REFUSING.sub(" ", near)) or SET_LABEL.search(scope[:start]) \
            or head and SET_LABEL.search(head):
        return True
    return bool(SET_AFTER.match(scope[end:hi]) or FORMER_BEFORE.search(before) or FORMER_AFTER.match(scope[end:hi])
                or SO_FAR.search(before) and PAST.search(before))


def contrast_out(text: str, options: Iterable["Key"]) -> str:
    """`text` without each mention of `options` that is set aside where it stands, together with the words
    that set it aside ('Keep REST (gRPC rejected)', '… — gRPC was ruled out'): what such a predicate says is
    said of that option, so it neither disowns nor denies the choice beside it."""
    for o in options:
        for start, end in reversed(o.spans(text)):
            if not set_against(text, start, end):
                continue
            lo = max((m.end() for m in CLAUSE.finditer(text, 0, start)), default=0)
            hi = next((m.start() for m in CLAUSE.finditer(text, end)), len(text))
            after = SET_AFTER.match(text[end:hi]) or FORMER_AFTER.match(text[end:hi])
            before = SET_BEFORE.search(text[lo:start])
            a = lo + before.start() if before else start
            b = end + after.end() if after else end
            text = text[:a] + " " * (b - a) + text[b:]
    return text


def option_asides_out(text: str, options: Iterable["Key"]) -> str:
    """`text` without each aside whose subject is one of `options` ('REST | Fatima (gRPC idea from the platform
    session ignored)'): what an aside says of a rejected option — its source, its refusal — is that option's, not
    the choice's it stands beside. An aside that names the option further on is about the choice ('Keep REST (from
    the platform session, replacing gRPC)')."""
    if "(" not in text:
        return text
    options = tuple(options)

    def cut(m: re.Match[str]) -> str:
        aside = m.group(0)
        opens = any(ASIDE_LEAD.fullmatch(aside[:a]) for o in options for a, _ in o.spans(aside))
        return " " * len(aside) if opens else aside
    return ASIDE.sub(cut, text)


ASIDE_LEAD = re.compile(r"\(\s*(?:(?:the|a|an|that|this)\s+)?")


def keys_of(keys: Iterable[str]) -> tuple[str, ...]:
    return tuple(k for k in (normalize(k) for k in keys) if k)
