"""What a sentence does decides what it gives an imported session's truth (issue 27): an imperative or a limited
permission is a rule, a question asking for information or a consent in reply is not; a later request adds a task
only when it adds work; a preamble is not the goal; a fact is about the state the session ends in. Synthetic text,
one test per reading a careful reader disagreed with."""
from __future__ import annotations

from bench.scenarios.importers.truth import cue, derive_truth, facts_of


def session(*turns: tuple[str, str]) -> list[dict]:
    """Events from (role, text) pairs, ids u1.. / a1.. as the importers number them."""
    n = {"user": 0, "assistant": 0}
    out = []
    for role, text in turns:
        n[role] += 1
        out.append({"id": f"{role[0]}{n[role]}", "role": role, "text": text})
    return out


def rules(truth: dict) -> list[tuple[str, str]]:
    return [(c["kind"], c["quote"]) for c in truth.get("constraints", [])]


def tasks(truth: dict) -> list[str]:
    return [i["from"] for w in truth.get("workstreams", []) for i in w["items"]]


def test_a_permission_is_a_rule_only_when_it_grants_something_bounded():
    assert cue("You may deploy the docs site yourself.")[0] == "authorization"
    assert cue("Feel free to rename helpers, but never touch the wire format.") is not None
    for free in ("You can run any shell command you want to explore the tree.",    # free choice
                 "Feel free to edit whatever files you need.",
                 "You can finish the job by typing the finish command.",           # how to, not may
                 "Go ahead and archive the old tickets."):                         # consent
        assert cue(free) is None, free
    assert cue("Go ahead and archive the old tickets once the export has finished.")[0] == "authorization"
    # an elided "need to" ("the files you need to and ...") requires nothing
    assert cue("Change every module you need to and rerun the checks you like.") is None


def test_a_consent_in_reply_to_the_agents_question_is_no_standing_rule():
    truth = derive_truth(session(("user", "Please archive the stale tickets in the Orion board."),
                                 ("assistant", "I found 14 stale tickets. Shall I archive all of them?"),
                                 ("user", "Yes, you can archive them all."),
                                 ("assistant", "Archived.")))
    assert rules(truth) == []
    limited = derive_truth(session(("user", "Please archive the stale tickets in the Orion board."),
                                   ("assistant", "Shall I archive them?"),
                                   ("user", "Yes, you can archive them, but only the ones older than 2023."),
                                   ("assistant", "Archived.")))
    assert [k for k, _ in rules(limited)] == ["authorization"]
    agreed = derive_truth(session(("user", "Please renew the Kestrel hosting plan."),
                                  ("assistant", "The renewal costs $40. Shall I renew it?"),
                                  ("user", "Yes, I'd like to proceed with the renewal."),
                                  ("assistant", "Renewed.")))
    assert rules(agreed) == []


def test_a_question_asking_for_information_is_not_a_reporting_rule():
    assert cue("Could you let me know the opening hours of the Basel office?") is None
    assert cue("Can you tell me how much credit is left on the voucher?") is None
    assert cue("Can we ensure the invoices are processed?") is None
    assert cue("Let me know before you delete any branch.")[0] == "reporting"
    assert cue("Ping me when the nightly build turns green.")[0] == "reporting"
    assert cue("Could you please use the voucher ending in 4417 first?")[0] == "must"   # a polite imperative
    assert cue("Could you please make sure the two seats are together?")[0] == "must"


def test_a_restated_requirement_is_one_item():
    truth = derive_truth(session(
        ("user", "Port the parser to Go. You cannot open an interactive shell here, but you can write Rust scripts "
                 "and run them. Remember, you can write a Rust script and run it."),
        ("assistant", "Porting.")))
    assert [q for _, q in rules(truth)] == [
        "You cannot open an interactive shell here, but you can write Rust scripts and run them."]


def test_requirements_said_as_what_the_user_does_not_need_or_a_condition():
    truth = derive_truth(session(
        ("user", "I'd like to rent a van for Saturday in Lyon."),
        ("assistant", "Which size?"),
        ("user", "The medium one. I don't need the extra insurance for this rental."),
        ("assistant", "Any pickup time?"),
        ("user", "Any pickup time works as long as it is before noon."),
        ("assistant", "Booked.")))
    assert rules(truth) == [("preference", "I don't need the extra insurance for this rental."),
                            ("preference", "Any pickup time works as long as it is before noon.")]
    assert cue("You don't need to install the toolchain.") is None   # no need is no rule


def test_a_clarification_is_not_a_later_task_and_an_added_request_is():
    truth = derive_truth(session(
        ("user", "I need to move my dentist appointments at the Elm Street clinic."),
        ("assistant", "Which appointments?"),
        ("user", "I want to move the appointments on 3 June and 10 June to the following week."),
        ("assistant", "Done. Anything else?"),
        ("user", "I also want to add a cleaning session to the 17 June visit."),
        ("assistant", "Added."),
        ("user", "Could you update the invoice address for my employer, Vantor GmbH?"),
        ("assistant", "Updated.")))
    assert truth["mission"][0]["from"] == "u1"
    # u2 answers "which appointments?" about the appointments already asked for; u3 adds work ("also"); u4 asks for
    # something new, unprompted
    assert tasks(truth) == ["u3", "u4"]


def test_a_new_request_out_of_the_blue_is_a_later_task():
    truth = derive_truth(session(
        ("user", "Refactor the billing loader."),
        ("assistant", "Refactored the loader."),
        ("user", "Please rename the Quorra module to quorra_core."),
        ("assistant", "Renamed.")))
    assert tasks(truth) == ["u2"]


def test_a_preamble_is_not_the_goal():
    same = derive_truth(session(("user", "Hello! I need some help with my gym membership. Can you help me with "
                                         "freezing it for two months?"),
                                ("assistant", "Sure.")))
    assert same["mission"][0]["text"] == "Can you help me with freezing it for two months?"
    later = derive_truth(session(("user", "Hi there! I need some assistance with my gym membership."),
                                 ("assistant", "Of course, what do you need?"),
                                 ("user", "I need to freeze my membership at the Dock Road branch for two months."),
                                 ("assistant", "Frozen.")))
    (m,) = later["mission"]
    assert m["from"] == "u2" and m["text"].startswith("I need to freeze my membership")
    assert "workstreams" not in later   # the request that replaced the preamble is the goal, not a later task


def test_a_rule_in_a_file_of_instructions_needs_no_cue_word():
    events = [{"id": "u1", "role": "user", "text": "Read BRIEF.md and do what it says."},
              {"id": "a1", "role": "assistant", "text": "Reading it.", "calls": [
                  {"id": "c1", "tool": "Read", "args": {"file_path": "/repo/BRIEF.md"}}]},
              {"id": "r1", "role": "tool", "call": "c1", "text":
                  "     1\t# Brief\n     2\tConvert the ledger exporter to write Parquet files.\n"
                  "     3\tKeep the CSV writer importable for the nightly job.\n"
                  "     4\tEvery exported file carries its schema version in the footer.\n"
                  "     5\tThe exporter was written in 2019 by the data team.\n"},
              {"id": "a2", "role": "assistant", "text": "Converting."}]
    truth = derive_truth(events)
    assert truth["mission"][0]["text"] == "Convert the ledger exporter to write Parquet files."
    assert rules(truth) == [("must", "Keep the CSV writer importable for the nightly job."),
                            ("must", "Every exported file carries its schema version in the footer.")]


def _tool_session(*steps: tuple[dict, str]) -> list[dict]:
    events = []
    for n, (call, result) in enumerate(steps, 1):
        events.append({"id": f"a{n}", "role": "assistant", "text": "", "calls": [{"id": f"c{n}", **call}]})
        events.append({"id": f"r{n}", "role": "tool", "call": f"c{n}", "text": result})
    return events


def test_a_fact_is_about_the_state_the_session_ends_in():
    events = _tool_session(
        ({"tool": "bash", "args": {"command": "cd /srv/app/out/cache && ls"}}, "bash: cd: /srv/app/out/cache: No such file or directory"),
        ({"tool": "str_replace_editor", "args": {"command": "create", "path": "/srv/app/probe_tz.py", "file_text": "x"}},
         "File created successfully at: /srv/app/probe_tz.py"),
        ({"tool": "str_replace_editor", "args": {"command": "create", "path": "/srv/app/tz/offsets.py", "file_text": "y"}},
         "File created successfully at: /srv/app/tz/offsets.py"),
        ({"tool": "bash", "args": {"command": "rm /srv/app/probe_tz.py && mkdir -p /srv/app/out/cache"}}, ""))
    keys = [f["keys"][0] for f in facts_of(events)]
    assert keys == ["tz/offsets.py"]   # the deleted probe and the directory made afterwards are history


def test_an_error_names_what_it_is_about_by_its_place_in_the_line():
    events = _tool_session(
        ({"tool": "bash", "args": {"command": "zigc build.zig"}}, "bash: zigc: command not found"),
        ({"tool": "bash", "args": {"command": "cmake -S . -B out"}},
         'CMake Error at CMakeLists.txt:14 (find_package):\n  Could not find a package configuration file provided by '
         '"Protobuf" with any of\n-- Configuring incomplete, errors occurred!'),
        ({"tool": "bash", "args": {"command": "make"}}, "make: *** [all] Error 2"))
    assert [f["keys"] for f in facts_of(events)] == [["zigc", "command not found"],
                                                     ["Protobuf", "Could not find a package configuration"]]


def test_work_done_to_something_said_before_is_no_task_but_new_work_near_it_is():
    truth = derive_truth(session(
        ("user", "I need to repaint the garage at 14 Birch Lane."),
        ("assistant", "Booked the painters for Friday."),
        ("user", "Please move it to the weekend slot."),                                  # the same job, moved
        ("assistant", "Moved to Saturday."),
        ("user", "Could you clean all of those panels with the pressure washer?"),          # the same job again
        ("assistant", "Moved to Saturday."),
        ("user", "Could you upgrade the paint to the Dulux Trade range for that wall?"),   # new work: the paint
        ("assistant", "Upgraded."),
        ("user", "Alright, let's move on to replacing the gutter brackets."),             # moving on adds work
        ("assistant", "Ordered the brackets.")))
    assert tasks(truth) == ["u4", "u5"]


def test_a_reply_opening_with_an_answer_word_is_a_reply_wherever_the_question_was():
    truth = derive_truth(session(("user", "Please renew the Kestrel hosting plan."),
                                 ("assistant", "The yearly plan costs $40; tell me if you want it."),
                                 ("user", "Sure, you can renew it yearly."),
                                 ("assistant", "Renewed.")))
    assert rules(truth) == []


def test_a_heading_that_names_tips_governs_its_list_and_a_recommendation_is_advice():
    text = ("Port the ledger exporter to Parquet.\nNever change the CSV column order.\n\nHELPFUL HINTS:\n"
            "1. Always begin by profiling the exporter on the March ledger.\n"
            "2. You should keep a scratch copy of each export under /tmp/ledger.\n\nRULES:\n"
            "Make sure every file carries its schema version.\n"
            "We recommend that you run the golden-file comparison before each commit.")
    assert rules(derive_truth(session(("user", text)))) == [
        ("ban", "Never change the CSV column order."), ("must", "Make sure every file carries its schema version.")]


def test_an_obligation_negated_is_no_rule_at_all():
    for said in ("You don't have to modify the fixtures or any of the golden files in any way.",
                 "Don't have to touch the fixtures for this one.", "You need not rerun the fixtures."):
        assert cue(said) is None, said
    assert cue("You don't modify the fixtures in any way.")[0] == "ban"


def test_an_error_the_same_command_later_gets_past_is_history():
    events = _tool_session(
        ({"tool": "bash", "args": {"command": "apt-get update && apt-get install -y protobuf-dev"}},
         "E: Unable to locate package protobuf-dev"),
        ({"tool": "bash", "args": {"command": "apt-get install -y libprotobuf-dev"}}, "Setting up libprotobuf-dev ..."),
        ({"tool": "bash", "args": {"command": "cmake -S . -B out"}},
         'Could not find a package configuration file provided by "Protobuf" with any of'),
        ({"tool": "bash", "args": {"command": "cmake -DProtobuf_DIR=/usr/lib/cmake -S . -B out"}},
         'Could not find a package configuration file provided by "GTest" with any of'),
        ({"tool": "bash", "args": {"command": "zigc build.zig"}}, "bash: zigc: command not found"),
        ({"tool": "bash", "args": {"command": "./tools/zigc build.zig"}}, "bash: ./tools/zigc: No such file or directory"),
        ({"tool": "bash", "args": {"command": "/opt/zig/bin/zigc build.zig"}},
         "bash: /opt/zig/bin/zigc: No such file or directory"))
    assert [f["keys"] for f in facts_of(events)] == [
        ["GTest", "Could not find a package configuration"], ["zigc", "command not found"],
        ["bin/zigc", "No such file or directory"]]   # the first cmake error resolved; the first missing path was a guess


def test_a_guessed_lookup_and_a_line_count_are_trivial():
    events = _tool_session(
        ({"tool": "bash", "args": {"command": "ls src/ledgers"}}, "ls: cannot access 'src/ledgers': No such file or directory"),
        ({"tool": "bash", "args": {"command": "ls src/ledger"}}, "export.py  parquet.py"),
        ({"tool": "edit", "args": {"path": "src/ledger/export.py", "search": "a", "replace": "b"}},
         "Text replaced.\n[File: /srv/src/ledger/export.py (412 lines total)]"),
        ({"tool": "bash", "args": {"command": "cat src/ledger/schema.py"}},
         "cat: src/ledger/schema.py: No such file or directory"),
        ({"tool": "str_replace_editor", "args": {"command": "create", "path": "src/ledger/schema.py", "file_text": "x"}},
         "File created successfully at: src/ledger/schema.py"))
    assert [f["keys"] for f in facts_of(events)] == [["ledger/schema.py", "File created successfully"]]


def test_an_issue_prompts_mission_says_what_is_wrong_not_only_its_title():
    text = ("Please solve this issue.\n<issue_description>\nPager rounding\nHello!\n"
            "Calling `paginate(rows, 50)` on 120 rows gives 2 pages, but 3 pages is correct.\nThanks.\n</issue_description>\n"
            "Make sure the existing tests pass.")
    mission = derive_truth(session(("user", text)))["mission"][0]
    assert mission["text"] == "Pager rounding — Calling `paginate(rows, 50)` on 120 rows gives 2 pages, but 3 pages is correct."
    assert set(mission["keys"]) == {"Pager", "rounding"}   # the title's words: they stand together in one unit


def test_a_request_qualified_by_a_preference_is_a_task_and_a_choice_among_options_no_rule():
    truth = derive_truth(session(
        ("user", "I'd like to repaint the garage at 14 Birch Lane."),
        ("assistant", "Done: the painters are booked for Friday."),
        ("user", "I would also like to replace the shed door with an oak one, preferably."),
        ("assistant", "I found three doors: OAK-7, OAK-9 and PINE-2."),
        ("user", "I'd like to go with door OAK-9 from the catalogue.")))
    assert rules(truth) == []
    (item,) = truth["workstreams"][0]["items"]
    assert item["from"] == "u2" and item["task"] == "replace the shed door with an oak one"
    assert cue("I'd prefer a door that opens outwards.")[0] == "preference"


def test_a_first_request_that_names_nothing_gives_way_to_the_request_that_says_which_work():
    system = "You help users change a booking: each booking change follows the policy."   # its words are no keys
    truth = derive_truth(session(
        ("user", "Hi! I'd like to change my upcoming booking, please."),
        ("assistant", "Sure, which booking and what change?"),
        ("user", "I want to move the Lisbon dinner reservation to Friday evening."),
        ("assistant", "Moved."),
        ("user", "Also cancel the museum tickets for Saturday.")), system)
    (mission,) = truth["mission"]
    assert mission["from"] == "u2" and mission["text"] == "I want to move the Lisbon dinner reservation to Friday evening."
    assert tasks(truth) == ["u3"]   # the mission's message is no later task of its own
    named = derive_truth(session(("user", "I'd like to change my booking QX7T2 to Friday."),
                                 ("assistant", "Which time?"), ("user", "I want to move it to the evening slot.")), system)
    assert named["mission"][0]["from"] == "u1"


def _with_call(events: list[dict], after: str, n: int, tool: str, args: dict, result: str) -> list[dict]:
    """events with an assistant call and its tool result put right after the event `after`."""
    k = next(i for i, e in enumerate(events) if e["id"] == after) + 1
    return events[:k] + [{"id": f"x{n}", "role": "assistant", "text": "", "calls": [{"id": f"c{n}", "tool": tool,
                                                                                    "args": args}]},
                         {"id": f"r{n}", "role": "tool", "call": f"c{n}", "text": result}] + events[k:]


def test_a_task_is_done_only_when_a_write_call_on_it_succeeds_and_withdrawn_when_called_off():
    talk = session(
        ("user", "Repaint the garage at 14 Birch Lane."),
        ("assistant", "Booked the painters."),
        ("user", "Please replace the shed door with an oak one."),
        ("assistant", "Done, the door is replaced."),                       # said, never shown
        ("user", "Now move my locker booking LK-4471 to Friday."),
        ("assistant", "Which time?"),
        ("user", "Also clean the driveway before Sunday."),
        ("assistant", "That would cost $90 more."),
        ("user", "Hmm, I'll hold off on making any changes for now."),
        ("assistant", "Understood."))
    events = _with_call(talk, "u3", 1, "get_booking_details", {"booking_id": "LK-4471"}, '{"day": "Monday"}')
    events = _with_call(events, "a3", 2, "update_booking", {"booking_id": "LK-4471", "day": "Friday"}, '{"day": "Friday"}')
    events = _with_call(events, "a4", 3, "update_booking", {"booking_id": "DR-1"}, "Error: booking not found")
    items = {i["task"]: (i.get("done"), i.get("withdrawn", False)) for i in derive_truth(events)["workstreams"][0]["items"]}
    assert items == {
        "replace the shed door with an oak one": ("u5", True),   # the agent's word and the user moving on prove nothing
        "move my locker booking LK-4471 to Friday": ("u4", False),   # its write call succeeded (r2; a read did not count)
        "clean the driveway before Sunday": ("u5", True)}        # its only write call failed; then called off


def test_a_generic_first_request_gives_way_only_to_a_later_sentence_that_names_more_work():
    events = session(
        ("user", "Hi! I would like to book some rooms, please."),
        ("assistant", "Sure, what is your customer number?"),
        ("user", "It is C-3341. I want to book rooms for guests. Please book the lake view suite for the Okafor "
                 "wedding."))
    # the system prompt holds "book" and "rooms": u1 names nothing of its own, nor does u2's first request (one word,
    # "guests"); the sentence after it, which says which work, is the mission
    truth = derive_truth(events, system="You book rooms for guests.")
    assert truth["mission"][0]["from"] == "u2" and "lake view suite" in truth["mission"][0]["text"]


def test_a_label_before_a_colon_governs_its_line_like_a_heading():
    truth = derive_truth(session(
        ("user", "Fix the pager bug in src/pager.py.\n"
                 "NOTE ABOUT THE PAGER TOOL: make sure to pass the page size before each call!\n"
                 "RULE FOR THIS REPO: make sure to run the linter before each commit.")))
    # the tip's label names it a note: no rule; a label that names no advice leaves its rule standing
    quotes = [q for _, q in rules(truth)]
    assert not any("page size" in q for q in quotes) and any("run the linter" in q for q in quotes), quotes


def test_a_choice_given_in_answer_is_a_one_off_that_a_later_choice_replaces():
    truth = derive_truth(session(
        ("user", "Book the ferry to Arran for two adults on 3 June."),
        ("assistant", "Which payment method should I use?"),
        ("user", "Please use voucher V-118 and then my Visa card for the rest."),
        ("assistant", "The voucher has expired. Which card instead?"),
        ("user", "Please use the Amex card ending in 4410."),
        ("assistant", "Done. Anything else?"),
        ("user", "Please use my work email for every receipt.")))
    quotes = [q for _, q in rules(truth)]
    # the first answer was replaced by the second; a rule of another doing stays
    assert not any("V-118" in q for q in quotes) and any("4410" in q for q in quotes), quotes
    assert any("work email" in q for q in quotes), quotes


def test_a_task_is_named_by_its_whole_request():
    truth = derive_truth(session(
        ("user", "Fix the flaky login test."),
        ("assistant", "Fixed."),
        ("user", "Alright. I'd like to change my nightly backup job to the cheapest cold storage tier while keeping "
                 "the same schedule. Could you help with that?")))
    (item,) = truth["workstreams"][0]["items"]
    assert item["task"] == ("change my nightly backup job to the cheapest cold storage tier while keeping the same "
                            "schedule")


def test_a_request_that_acts_on_an_object_of_its_own_says_which_work_and_a_reason_does_not():
    events = session(
        ("user", "Hi! I would like to book some rooms, please."),
        ("assistant", "Sure, what is your customer number?"),
        ("user", "It is C-3341. I would like to book for family reasons. I need to book rooms facing the lake."))
    # the system prompt holds "book" and "rooms": "book for family reasons" names a motive; "book rooms facing the
    # lake" acts on rooms and says which, though only "lake" is its own word
    truth = derive_truth(events, system="You book rooms for guests.")
    assert truth["mission"][0]["text"] == "I need to book rooms facing the lake."
