"""Units of meaning: where a check looks for a truth item's keys (DESIGN §6).

Keys only count together when they sit in one unit — a sentence, a line, or a bullet
together with the heading it sits under — so a bag of identifiers pulled from dropped
text, or words spread over a whole context, is not knowledge. The same segmentation
serves the scorers and the validator (a fact's keys must co-occur in one unit of its
own source event, or the oracle itself could not keep it).

Markers read a unit's wording around a hit: an item marked withdrawn or done is not
active, a paraphrase whose polarity contradicts the quote is not the constraint, an
attribution to the user that is negated is not a leak, and a workstream's position is
read from the statements that say which item is finished and which comes next.
Everything is matched on `normalize`d text (case-folded, whitespace collapsed).

One module a concern, each built on those before it: `grammar` (the closed classes a reading is
said with), `ids` (identifiers, an id as a whole token), `options` (what sets an option aside), `keys`
(a truth item's keys read as a reader reads them), `sentences` (units and their clauses), `sources`
(attribution), `rules` (what a unit says of a rule or a goal), `position` (where the work stands). Two names
go the other way in annotations only (`Key` in options, `Unit` in keys, under TYPE_CHECKING). This face
re-exports what the scorers, the validator and the strategies use.
"""
from __future__ import annotations

from bench.text import normalize
from bench.units.grammar import (SEP, MARKER_LEAD, SENTENCE, ENDED_OBJECT, HEDGE, DONE, NEXT, NOT_YET, NEGATION,
                                 NEAR_NEGATION, DOUBT, LABEL, attributions)
from bench.units.ids import (IDENTIFIER, WORD, tokens, identifier, descriptive, ordinary, mention, spans, names)
from bench.units.options import (REOPENED, set_against, contrast_out, option_asides_out, keys_of)
from bench.units.keys import (LOOSE, PHRASE, stem, FUNCTION, anchors_of, object_of, CHOSEN, Key, elided, probes, held,
                              together, without)
from bench.units.sentences import (Unit, units, LABEL_WORDS, status_after, clause_of, clauses_of)
from bench.units.sources import (restated, excuses, OWN_ASIDE, asides_out, reasons_out, neighbours, sourced)
from bench.units.rules import (cooccur, ended, nothing_left, goal_done, RULE, loosened_around, RULE_HEAD, SOFTENED,
                               same_rule, imperative, polarity)
from bench.units.position import (Mention, mentions, words_of, KeyIndex, Items, misclaimed, verdict, Position,
                                  advance, latest_claims, claims)


__all__ = ["normalize", "SEP", "MARKER_LEAD", "SENTENCE", "ENDED_OBJECT", "HEDGE", "DONE", "NEXT", "NOT_YET",
           "NEGATION", "NEAR_NEGATION", "DOUBT", "LABEL", "attributions", "IDENTIFIER", "WORD", "tokens",
           "identifier", "descriptive", "ordinary", "mention", "spans", "names", "REOPENED", "set_against",
           "contrast_out", "option_asides_out", "keys_of", "LOOSE", "PHRASE", "stem", "FUNCTION", "anchors_of",
           "object_of", "CHOSEN", "Key", "elided", "probes", "held", "together", "without", "Unit", "units",
           "LABEL_WORDS", "status_after", "clause_of", "clauses_of", "restated", "excuses", "OWN_ASIDE",
           "asides_out", "reasons_out", "neighbours", "sourced", "cooccur", "ended", "nothing_left", "goal_done",
           "RULE", "loosened_around", "RULE_HEAD", "SOFTENED", "same_rule", "imperative", "polarity", "Mention",
           "mentions", "words_of", "KeyIndex", "Items", "misclaimed", "verdict", "Position", "advance",
           "latest_claims", "claims"]
