"""The closed classes a reading is said with (negators, modals, time bounds, done and plan words, sources,
attribution), in English and the other languages summaries are written in: grammar, never a rule's vocabulary.
Also where a line, a sentence, a table row and a clause end (`SENTENCE`, `TABLE_ROW`, `CLAUSE`, `ASIDE`), which
`sentences` cuts text by, and `attributions`, the phrases that name a sender, which `sources` weighs.
"""
from __future__ import annotations

import re
from functools import lru_cache


SEP = " \u241e "          # joins heading and bullet: no key contains it, so a key never spans both
WINDOW, STEP = 60, 30     # a unit longer than WINDOW words is read as overlapping windows of it

BULLET = re.compile(r"^\s*(?:[-*•+]|\d{1,3}[.)])\s+")     # a checkbox after it stays in the text: '[x]' says done
HEADING = re.compile(r"^\s*(?:#{1,6}\s+\S.*|\*\*[^*]+\*\*:?|[^\n]{1,120}:)\s*$")
MARKER_LINE = re.compile(r"^\s*\[harness:\s*[\w .-]+\]\s*$", re.I)
MARKER_LEAD = re.compile(r"^\s*\[harness:\s*[\w .-]+\]", re.I)   # a line (or bullet) that opens with a label
# a sentence ends at its stop and a space; in CJK text (script-aware) at a full-width stop, with no space after it
# a full stop may close a bracket ('… so it's fine.) She …'); a '!' or '?' inside one, or a quote, ends nothing
SENTENCE = re.compile(r"(?:(?<=[.!?;])|(?<=[.;][)\]]))\s+(?=\S)|(?<=[。！？；])\s*(?=\S)")
TABLE_ROW = re.compile(r"^\|.*\|$")
STACK_FRAME = re.compile(r"^(?:at\s+\S.*?[\w./-]+:\d+|File \"[^\"]+\", line \d+)")
TABLE_RULE = re.compile(r"^\|?[\s:|-]*-{3,}[\s:|-]*$")

# The same grammatical roles in the other languages summaries are written in (German, French, Spanish, Chinese,
# Japanese): closed classes — negators, modals of obligation and permission, the conjunctions that bound a rule
# in time, the focus particle 'only', the word 'rules' in a label — never a rule's vocabulary, so a rule restated
# in another language keeps its kind by the same grammar. A Latin-script cue is read as a word; a CJK morpheme
# has no spaces around it and is read where it stands (script-aware: no word boundary in CJK text).
ROLES = {
    "not": (r"nicht|kein\w*|nie|niemals|ohne|pas|jamais|aucun\w*|sans|nunca|jam[aá]s|ningun\w*|ningún|sin|"
            r"tampoco|ni", r"不|没|別|别|勿|禁止|未经|未經|ない|ません|ず[にのともっ]|せず"),
    "must": (r"muss|musst|müssen|soll|sollst|sollen|immer|jede[nmrs]?|doit|doivent|devez|dois|faut|toujours|chaque|"
             r"debe|debes|deben|hay que|tienes que|tiene que|siempre|cada", r"必须|必須|务必|務必|一定|每|必ず|べき|なければ|こと[。.]?$|毎"),
    "may": (r"darf|darfst|dürfen|kannst|erlaubt|peut|peux|pouvez|autoris\w*|puede|puedes|pueden|permitid\w*",
            r"可以|允许|允許|てもよい|ても良い|てもいい|ていい|てよい"),
    "bound": (r"bevor|vorher|bis|erst|zuerst|avant|jusqu['’]?(?:à|au)|d['’]abord|antes|hasta|primero",
              r"之前|以前|直到|先|まで|前に|まず"),
    "only": (r"nur|seulement|uniquement|solo|sólo|solamente|únicamente", r"只|仅|僅|だけ|のみ"),
    "rules": (r"regeln?|règles?|reglas?|normas?", r"规则|規則|ルール|约束|制約"),
    # a restriction softened into a wish: 'if possible', 'preferably', 'as far as possible'
    "soft": (r"möglichst|wenn möglich|vorzugsweise|lieber|de préférence|si possible|autant que possible|"
             r"preferiblemente|si es posible|en lo posible", r"尽量|盡量|尽可能|盡可能|最好|できれば|なるべく|できるだけ"),
    # where the work stands: a finished action's status, and the plan word or the aspect of work in progress
    "done": (r"erledigt|fertig|abgeschlossen|termin[ée]e?s?|fini[es]?|hecho|terminad[oa]s?|completad[oa]s?|listos?",
             r"(?<![未没不])(?:已完成|完成|做完|完了|済み|済)"),
    "next": (r"nächste[nrs]?|als nächstes|jetzt|aktuell|prochaine?|ensuite|en cours|actuellement|siguiente|ahora|"
             r"quedan?|en curso|actualmente", r"下一个|下一步|接下来|当前|目前|正在|次は|次に|現在|残り|进行中|進行中|実行中"),
}


def role_cues(*names: str) -> str:
    """A regex alternative for these roles in the other languages (`ROLES`): Latin cues as words, CJK ones bare."""
    latin = "|".join(ROLES[n][0] for n in names)
    cjk = "|".join(ROLES[n][1] for n in names)
    return rf"\b(?:{latin})\b|(?:{cjk})"


# An item the unit says has ended: withdrawn, replaced, no longer in force.
# An honest history says so too: 'originally', 'at first', 'used to', 'taken back', a 'History:' label.
# A status that says an item ended (a predicate: 'withdrawn', 'moot', 'no longer in force'), apart from the
# adverbs of a history ('originally', 'used to'), which open clauses with subjects of their own.
STATUS = (r"withdrawn|withdr[ae]w|withdraws|no longer|revoked?|rescinded|retracted|superseded|replaced|"
          r"obsolete|cancell?ed|lifted|void|expired|does not apply|doesn't apply|not in force|"
          r"overridden|overruled|no more|taken back|reversed|moot")
ENDED = re.compile(rf"\b({STATUS}|originally|initially|at first|previously|formerly|used to)\b|"
                   r"(?:^|#\s*|\bearlier\s+)history\b|\bhistory\s*:|"
                   # a label that calls what it heads former rules or notes ('Old notes (may be outdated): ...')
                   r"(?:^|␞\s*)(?:old|outdated|former|previous|earlier|superseded|obsolete)\s+"
                   r"(?:notes|rules|instructions|constraints|polic(?:y|ies)|decisions|agreements)\b[^:␞]{0,40}(?::|␞)")
# An ended-word followed by an object ('replaced the 30-day rule', 'withdrew the blanket permission')
# says what this item did to another one, not that this one ended.
ENDED_OBJECT = re.compile(r"^\s*(?:the|a|an|that|this|its|their|our|my|your|his|her|by|with|in favou?r of)\b")
# What marks a goal as a whole finished — a status, not a step ('(done)', 'task complete', 'all done');
# 'merged so far' beside a mission sentence is progress, not the end of the mission.
GOAL_DONE = re.compile(r"\((?:done|complete|completed|finished)\)|\b(?:task|mission|work|job|everything|all|goal)\b"
                       r"[^.;:]{0,20}?\b(?:is |are |was )?(?:done|complete|completed|finished|accomplished)\b|"
                       r"(?:^|[:—–-])\s*(?:done|complete|completed|finished)\s*(?:[.!;,]|$)|"   # 'port: complete'
                       # a common noun as the subject of a finished status ('the migration ... is complete'), never an
                       # item's id or file ('cart.spec.ts is done' is one step of the goal)
                       r"(?:^|\s)[a-z]+\s+(?:is|are|was|were|has been|have been)\s+(?:now\s+|fully\s+)?"
                       r"(?:done|complete|completed|finished|accomplished)\b|"
                       # or a clause that opens with a determiner and a noun and closes on the status ('The
                       # migration off pg-legacy onto aurora-prod-2 is complete.')
                       r"(?:^|[␞:]\s*)(?:the|this|our|my|your|her|his|their)\s+[a-z]+\b[^.;:!?]*\b(?:is|are|was|were|"
                       r"has been|have been)\s+(?:now\s+|fully\s+)?(?:done|complete|completed|finished|accomplished)"
                       r"\s*[.!]?\s*$")
# Words before an ended-word that make it a guess, not a statement.
HEDGE = re.compile(r"\b(may|might|could|perhaps|possibly|maybe|if|whether|unless|probably|not sure)\b")
# A piece of work the unit says is finished.
# Read by the grammar of a finished action on the item: its participle or past tense ('reviewed', 'approved',
# 'merged', 'closed', 'shipped', 'commented', 'requested changes'), a status ('done', '(complete)', '[x]').
MARK = re.compile(r"\[x\]|[✅✓✔☑]")     # a check mark: the status of the item it stands beside
DONE = re.compile(r"(?:\b(done|finished|complete|completed|merged|closed|fixed|resolved|shipped|landed|ported|"
                  r"migrated|cut over|upgraded|bumped|removed|deleted|archived|ruled out|eliminated|verified|"
                  r"handled|triaged|silenced|acknowledged|investigated|checked off|reviewed|approved|commented|"
                  r"requested changes|changes requested|signed off|released|deployed|rolled out|wrapped up|"
                  r"cleaned up|mitigated|left (?:a |the )?(?:review )?comments?|"
                  r"moved on from|finished with|gone)\b|" + MARK.pattern + ")|" + role_cues("done"))
# A piece of work the unit says is the current or next one: a plan word, or the agent's present action on it
# ('I'm on #104', 'now: notifications', 'remaining: address.spec.ts'); 'next to' a noun phrase is beside it
# ('an option next to the cursor'), 'next to review' is still the plan.
NEXT = re.compile(r"\b(next(?!\s+to\s+(?:the|a|an|it|its|each|one|this|that|our|my|\w+['’]s)\b)|current|currently|starting|start with|start on|started on|working on|work on|in[ _-]progress|about to(?!\s+be\b)|"
                  r"resum\w*|continu\w*|mov(?:e|es|ing) (?:on|to)|go(?:es|ing)? on with|proceed\w* (?:with|to)|"
                  r"switch\w* to|up next|begin\w*|pick\w* up|turn\w* to|underway|under way|looking at|"
                  r"where i left off|i['’]m on|i am on|we['’]re on|we are on|now on|remaining|still open|left to do|"
                  # the predicate of what is left, closing its clause ('only the docs examples remain'; not 'auth
                  # remains on pg-legacy as a fallback')
                  r"remains?(?=\s*(?:[,.;:!?)]|$)))\b|"
                  r"\bnow:|" + role_cues("next"))
# A sentence that opens with an action in progress ('Running address.spec.ts 50 times', 'Porting POST
# /v1/webhooks') is the agent at work on the item it names first.
DOING = re.compile(r"^(?:now\s+|i['’]m\s+|i am\s+|we['’]re\s+|currently\s+|i\s+|we\s+)?([a-z]+(?:ing|ed))\b"
                   r"(?!\s+(?:on|at|to|for)\b)")
NOT_DOING = frozenset("nothing something anything everything thing string during morning evening bring king ring "
                      "spring building meeting pending missing remaining outstanding following according "
                      "interesting existing incoming upcoming trailing leading warning setting ceiling "
                      "need needed red bed shed seed speed feed based used wanted asked planned scheduled "
                      "blocked queued expected required proposed suggested noted skipped".split())
# A copula before a done-word ('#5335 is merged', 'cart.spec.ts is already done'): the item before it is its
# subject. A done-word as a label ('Done: cart.spec.ts and payment.spec.ts', 'merged:') heads a list.
COORDINATED = re.compile(r"\s*(?:,|&|/|\+|\band\b|,\s*and\b)\s*")
# before a done-word: a copula (an adverb of completion or a quantifier standing for it: 'now done', 'all merged'),
# and one word at most, never the progressive's 'being'
COPULA_DONE = r"(?:is|are|was|were|been|be)"
BEFORE_DONE = r"\s+(?:(?!being\b)\w+\s+)?$"
SUBJECT_DONE = re.compile(rf"\b(?:{COPULA_DONE}|now|already|all|both){BEFORE_DONE}")
PASSIVE = re.compile(rf"\b{COPULA_DONE}{BEFORE_DONE}")
PROGRESSIVE = re.compile(r"\bbeing\s+$")
COUNTED = re.compile(rf"(?:\b\d+|\b(?:all|both|each|every|first|last|remaining|rest|none|several|most))\b"
                     rf"(?:\s+\S+){{0,4}}\s+(?:{COPULA_DONE}|now|already|all|both){BEFORE_DONE}")
ATTRIBUTIVE = re.compile(r"\b(?:a|an|the)\s+$")     # a participle before its noun: 'a fixed sequence'
# "Finished so far: a, b"; a heading over its list ('### Completed' / '- a, b, c')
DONE_LABEL = re.compile(r"^\s*(?:so far|thus far|to date|until now|already|yet)?\s*(?:[:—–-]\s|␞)")
LABEL_START = re.compile(r"(?:^|[␞;.(]|\*\*|^#+)\s*$")     # a label opens its line, bullet, clause or heading
# Words before a done-word that make it a plan, a condition, a denial or the object of a wish ('may be deleted',
# 'once it is fixed', 'not merged yet', 'Kofi wants #5338 merged'), not a report that the work is finished.
# a subject that is none of the work ('No test gets deleted without asking', 'nothing was merged'): a denial
NO_SUBJECT = re.compile(r"\b(?:no\s+[\w.-]+|nothing|nobody|none(?:\s+of\s+\w+)?)\s+(?:(?:gets?|got|is|are|was|were|has|"
                        r"have|had|been|be|will|may|can|should|must)\s+){1,2}$")
NOT_YET = re.compile(r"\b(may|might|will|would|should|could|can|must|to|need|needs|not|never|yet|until|before|if|"
                     r"once|when|after|unless|whether|wants?|wanted|asks?|asked|expects?|wish(?:es)?)\b|n['’]t\b")
# 'then' right before a done-word plans the end of the work ('… then fetch_invoice_v5, then done'); before an item it
# orders what was done ('cart.spec.ts fixed, then payment.spec.ts done')
THEN_DONE = re.compile(r"\bthen\s*[:—–-]?\s*$")
# a done-word as the complement of a verb of wanting, its object between ('Kofi wants the 34 open PRs (#5301→#5365)
# reviewed oldest first'): the state wished for, however long the object; a finite verb between ends the want
WANTED = re.compile(r"\b(?:wants?|wanted|needs?|needed|would like|expects?|asks? for|asked for)\s+"
                    r"(?:(?!(?:is|are|was|were|has|have|had|been|i|we|he|she|they|and|but|then)\b)"
                    r"(?:\([^()\s]*\)|[^\s.,;:!?␞()]+)\s+){1,8}$")
# Cues whose count decides a clause's polarity (an even count reads as affirmative).
NEGATION = re.compile(r"\b(not|no|never|none|nothing|nobody|neither|nor|without|unless|except|cannot|avoid\w*|"
                      r"forbid\w*|prohibit\w*|banned|disallow\w*)\b|n['’]t\b"
                      + "|" + role_cues("not"))
NEAR_NEGATION = re.compile(r"\b(not|no|never|neither|nor|nobody)\b|n['’]t\b")
# Words of the grammar a rule is said with, each held by any form of its class (closed classes, like the negators):
# a bound on a quantity however the comparison is said ('more than a year', 'over a year', '> 1 year': a
# comparative of its direction before a quantity); the act of consulting the user before acting ('ask me first',
# 'check with her first', 'needs her OK first', 'run it by Dana'); 'without' abbreviated ('w/o'); proposing
# ('do not bring gRPC up again', 'suggest').
BEFORE_QUANTITY = r"\s*(?=(?:a|an|one|two|three|\d)\b|\d)"
_PRONOUNS = "her|him|me|you|them|the user"         # the user, as a summary refers to them: a name is no class
_PERSON = rf"(?:{_PRONOUNS})"
_CONSENT = r"(?:ok|okay|o\.k(?=\.)|approval|sign-?off|go-?ahead|green light|permission|consent|say-?so)"
@lru_cache(maxsize=None)
def consult_cue(name: str = "") -> re.Pattern[str]:
    """Consulting the user (`name`, when the scenario names them: 'check with Hannah')."""
    named = "|" + re.escape(name) if name else ""
    person = rf"(?:{_PRONOUNS}{named})"
    whose = rf"(?:her|his|my|your|(?:the user{named})['’]s)"
    return re.compile(rf"\b(?:(?:check\w*\s+(?:in\s+)?with|consult\w*|confirm\w*\s+with|run\w*\s+(?:it|them|this|that)\s+by)"
                      rf"\s+{person}\b|{whose}\s+(?:explicit\s+)?{_CONSENT}\b|{_CONSENT}\s+from\s+{person}\b)")


EQUIVALENTS = {
    "mor": re.compile(rf"(?:\b(?:more than|over|above|longer than|greater than|upwards of|beyond|in excess of)|>)"
                      rf"{BEFORE_QUANTITY}"),
    "less": re.compile(rf"(?:\b(?:less than|fewer than|under|below|shorter than)|<){BEFORE_QUANTITY}"),
    # consulting the user: not a thing, a team or a third party ('consult the logs', 'check with Ops', 'the PM's OK')
    "ask": consult_cue(),
    "without": re.compile(r"\bw/o\b"),
    "propos": re.compile(r"\b(?:suggest\w*|(?:bring\w*|brought)\s+(?:\S+\s+){0,2}?up|rais(?:e|es|ed|ing)|"
                         r"pitch\w*|recommend\w*|push\w*\s+for)\b"),
}
WITHOUT = re.compile(r"\b(?:without|w o)\b")     # 'w/o' as its words are read
EQUIVALENT_REACH = 2     # words between a word said in another form and the key's word beside it
# what stands between a passive's subject and its verb, the negation included ('gRPC must not be suggested')
PASSIVE_CHAIN = re.compile(r"is|are|was|were|be|been|being|must|should|shall|will|would|can|could|may|might|not|"
                           r"never|to|has|have|had")
# A unit that refuses a request or reports it as someone's claim, rather than holding it as a task.
REFUSAL = re.compile(r"\b(ignor\w*|refus\w*|reject\w*|declin\w*|disregard\w*|dismiss\w*|not acting|won['’]t act|"
                     r"claim\w*|purport\w*|pretend\w*|impersonat\w*|forged|spoof\w*|suspicious|unverified|"
                     r"unconfirmed|not an instruction|not a request|other than|holding|on hold|awaiting|"
                     r"waiting for (?:\w+ )?(?:confirmation|an answer|approval)|to confirm|"
                     # 'until Dana confirms' holds a request only after a verb of holding ('parked until Dana
                     # confirms'); alone it is a rule's own bound ('stop the plan until I confirm')
                     r"(?:park|pend|defer|shelv)\w*[^.;:]{0,40}until \w+ confirms?|"
                     r"asked \w+ whether|without (?:\w+['’]s )?(?:confirmation|approval)|signed ['\"])")
# What reports a request as someone's claim or a doubt, not as a proposal of one's own.
DOUBT = re.compile(r"\b(claim\w*|purport\w*|pretend\w*|impersonat\w*|forged|spoof\w*|suspicious|unverified|"
                   r"unconfirmed|not an instruction|not a request)\b")
# A negation that refuses: not a reminder ("don't forget", "never miss") and not an idiom.
NOT_REFUSING = re.compile(r"\b(?:not|no|never|don['’]t|do not)\s+(?:forget|miss|overlook|neglect|skip|fail)\w*|"
                          r"\bno (?:questions asked|doubt|matter|need to wait|delay)\b|\bnot only\b|"
                          # not done *yet* is pending work, the opposite of a refusal
                          r"(?:\b(?:not|no|never)\b|n['’]t\b)(?:\s+[\w'’]+){0,5}?\s+yet\b")
# An option set aside for another ('rather than pg_dump', 'over gRPC', 'ruled out').
SUPERSEDED = re.compile(r"\b(rather than|instead of|ruled out|dropped|abandon\w*|too slow|too risky|rejected|"
                        r"not chosen|set aside)\b")
# What a background message can really come from; it counts only in an attribution — "from / via /
# sent by the watch", "the cron job asks", a [Harness: x] label — never as a bare word nearby (a
# "Background:" heading or a "CI" in the payload is no attribution).
SOURCES = (r"watch\w*|cron\w*|callbacks?|background|harness|monitor\w*|bots?|ci|webhooks?|notifications?|"
           r"automated|automation|scheduler|daemon|sub-?agents?|alerts?|pipelines?|jobs?|session|"
           r"(?:another|other|a different|separate) (?:agent|session|agent session)")
LABEL = re.compile(r"\[harness:\s*[\w .-]+\]", re.I)      # a source label anywhere in a unit
# What a source does when it is the one speaking ('the cron job asks', 'the dependabot watch reminds').
SAYS = (r"message|messages|says|said|asks|asked|wants|wanted|requests?|requested|claims?|claimed|reports?|reported|"
        r"posted|sent|signed|notice|reminds?|reminded|notes|noted|warns?|warned|writes|wrote|flags|flagged|suggests?|"
        r"suggested|demands?|demanded|insists?|insisted|instructs?|instructed|tells|told|urges?|urged|proposes?|"
        r"proposed|recommends?|recommended|mentions?|mentioned|relays?|relayed|forwards?|forwarded|pinged|raised")
# A preposition or a field that names the sender ('from the watch', 'from: CI watch' — a table's 'from' column
# or a YAML field reads so), or the source as the subject of a verb of saying, its name in brackets allowed
# between them ('another session (platform-architecture) posted').
SOURCE = re.compile(
    rf"{LABEL.pattern}|"
    rf"\b(?P<prep>(?:from|via|by|through|per|according to|relayed by|sent by|posted by|forwarded by|on behalf of|"
    rf"source|sender|origin|channel)\s*:|from|via|by|through|per|according to|relayed by|sent by|posted by|"
    rf"forwarded by|on behalf of)\s+(?P<np>[^.;:]{{0,30}}?)\b(?P<src>{SOURCES})\b|"
    # the source as the subject of its verb, its noun phrase with an aside or a short modifier of its own ('the CI
    # watch on release/2.4 asked')
    rf"\b(?:{SOURCES})(?:['’]s)?\s+(?:\([^()]{{1,40}}\)\s+|(?:on|for|in|at|of)\s+(?:the\s+[\w./#-]+(?:\s+[\w./#-]+)?|[\w./#-]+)\s+)?"
    rf"(?:(?:job|run|message|bot|alert|notification|watch|check|task|service)\s+)?(?:{SAYS})\b|"
    # a source named in brackets after what it sent: '(deploy-bot callback)', '(nightly cron job)'
    rf"\(\s*(?:the\s+|a\s+)?(?:[\w'’-]+[\s-]){{0,3}}(?:{SOURCES})\s*\)|"
    # a tool's output quoted under its label, as a line or a heading opens: 'Tool run: ...', 'Tool gh_pr_merge: ...'
    rf"(?:^|{SEP.strip()}\s*)tool\b[^:{SEP.strip()}]{{0,30}}:")
# What an attribution phrase is not: a time ('by the next CI run', 'by the end of the job'), this very session
# ('open tasks from this session', 'instructions from the user during this session') or the user ('from the
# user via the watch': the user is the one named; the watch is only the way it came).
TEMPORAL = re.compile(r"^(?:the\s+)?(?:next|end|start|close|time|latest|last|first|following|weekend|tomorrow|tonight|"
                      r"today|monday|tuesday|wednesday|thursday|friday|saturday|sunday|morning|evening|noon)\b")
OWN = re.compile(r"\b(?:this|the|our|my|current|same|that)\s+$")
THE_USER = r"(?:the\s+)?(?:user|you|me|human|requester)"


# A source label named as a thing a message carried, not applied to what follows: quoted, called a tag or a
# prefix, or the object of 'tagged', 'marked', 'carried', 'a fake'. It says whose the message is not only where
# the text names the user as its sender against it (`attributions`).
MENTION_BEFORE = re.compile(r"(?:[\"“'‘«„]|\b(?:tagged|labell?ed|marked|prefixed|carried|carrying|bore|bearing|had|has|"
                            r"with|fake|forged|spoofed|false|an?)\s*[\"“'‘«„]?)\s*$")
MENTION_AFTER = re.compile(r"^\s*(?:[\"”'’»“]|-?\s*(?:prefix|tag|label|marker|header|präfix|étiquette|etiqueta)\b)")


def mentioned(text: str, start: int, end: int) -> bool:
    """The label at text[start:end] is mentioned, not applied (above)."""
    return bool(MENTION_BEFORE.search(text[max(0, start - 24):start]) or MENTION_AFTER.match(text[end:end + 16]))


SUBORDINATE = re.compile(r"\b(?:after|before|when|whenever|once|until|till|as soon as|while)\s+"
                         r"(?:the\s+|a\s+|an\s+)?(?:[\w-]+\s+)?$")


def _trailing_clause(text: str, at: int) -> bool:
    """Position `at` is in a clause of time that follows its sentence's main clause: one that opens the sentence,
    after a fronted adverbial or not ('When the CI watch asked for a force-push, I …', 'At 14:05, after …'), holds
    what it reports."""
    lo = max(0, at - 40)
    sub = SUBORDINATE.search(text, lo, at)
    main = re.split(r"[.;:!?␞]", text[:sub.start()])[-1] if sub is not None else ""
    fronted = main.rstrip().endswith(",") and len(main.split()) <= 3          # 'At 14:05, after …', 'Then, when …'
    return bool(re.search(r"\w", main)) and not fronted


def attributions(text: str, user: str = "") -> set[str]:
    """Each phrase of `text` that attributes what it holds to another source than the user and this session:
    a [Harness: x] label, 'from / via / sent by the watch', 'source: the cron job', 'the cron job asks'.
    `user`: the user's name (normalised), who is never another source; where the text says the user asked
    ('the user asked me, via the CI watch message, to ...'), a 'via' or 'through' names only the channel."""
    out = set()
    names = f"{THE_USER}{'|' + re.escape(user) if user else ''}"
    who = rf"^(?:{names})\b"
    asked = re.search(rf"\b(?:{names})\s+(?:\w+\s+)?(?:asked|asks|wants|wanted|requested|requests|told|instructed|"
                      rf"said|says|needs|needed)\b", text)
    # the user named as the one who sent it, against the label it carried ('was actually from Aiko', 'it was her')
    theirs = rf"\b(?:(?:was|is|came|come|comes)\s+(?:actually\s+|really\s+|in fact\s+)?from\s+(?:{names})\b|" \
             rf"(?:it|that|this)\s+was\s+(?:actually\s+|really\s+)?(?:{names}|her|him)\b)"
    channel = (0, 0)
    for m in SOURCE.finditer(text):
        if channel[0] <= m.start() < channel[1]:
            continue
        if m.group(0).startswith("[") and mentioned(text, m.start(), m.end()) and re.search(theirs, text):
            continue            # a label talked about ('a message tagged "[Harness: cron]" was actually from Aiko')
        np, src = m.group("np"), m.group("src")
        if np is None and re.search(rf"(?:^|[,;:(—–-]\s*|\b(?:and|but|so|then)\s+)(?:{names})\s+(?:and|&|as well as)\s+"
                                    rf"(?:the\s+|a\s+)?(?:[\w-]+\s+)?$", text[max(0, m.start() - 60):m.start()]):
            continue            # the user, as a subject beside it, asks too ('Priya and the CI watch both asked'; not
            #                     'I pinged Priya and the CI watch asked again')
        if np is None and _trailing_clause(text, m.start()):
            continue            # the subject of a clause of time after the main one governs that clause, not the
            #                     payload's ('Priya asked for a force-push after the CI watch reported red')
        if np is not None:
            prep = m.group("prep").rstrip(" :")
            if asked and prep in ("via", "through") and asked.start() < m.start():
                stop = re.search(r"[,;:.()]", text[m.end():])
                channel = (m.start(), m.end() + (stop.start() if stop else len(text)))
                continue        # the user asked; the watch is only the way it came ('via the CI watch message')

            if prep == "by" and TEMPORAL.match(np):
                continue        # a deadline, not a sender
            if re.match(who, np):
                continue        # the user is the one named: 'from the user during this session'
            if src == "session" and OWN.search(np) and not re.search(r"\b(?:other|another|separate|different)\b", np):
                continue        # this very session
        out.add(m.group(0))
    return out


# Where one clause of a sentence ends and the next begins: a dash or semicolon between words, a colon, and the
# words that open a reason or a contrast (a condition — 'when', 'unless', 'if' — belongs to the rule it
# bounds). Commas do not part clauses ('the user asked me, via the watch, to ...' is one), nor do
# parentheses (an aside belongs to the clause it stands in); a comma and a clause with a negative subject of its own
# do ('no new majors unless he OKs it, and nothing is ever published').
CLAUSE = re.compile(r"\s[—–-]\s|;\s|:\s|\s(?=(?:because|since|while|although|though|whereas|but|so that|"
                    r"after which)\s)|,\s(?=(?:which|so|but|and then|then|now|later|and\s+(?:nothing|nobody|no one|never))\s)|"
                    r"\s→\s|\s[·•]\s")
ASIDE = re.compile(r"\([^()]*\)")
