"""The fact guard, pure: what counts as a fact, and which answers are accepted."""

from __future__ import annotations

import json
from datetime import UTC

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curation_pipeline.core.fact_guard import (
    extract_facts,
    introduced_facts,
    judge,
    missing_facts,
    occurs,
)

TEXT = ("Customer Dana Reyes prefers email. The deploy runs on Fridays at 16:00 UTC since 2024-03-05. "
        "Write to billing@acme.example or see https://acme.example/docs/ (e.g. the runbook). "
        "Budget is 12,500 for Q3 2024; call get_user() in auth.service, v1.2.3, bucket S3, INV-2024-7.")


def _answer(text: str, field: str = "merged_text") -> str:
    return json.dumps({field: text})


def test_extracts_every_kind_of_fact():
    facts = extract_facts(TEXT).by_kind
    assert facts["url"] == {"https://acme.example/docs"}
    assert facts["email"] == {"billing@acme.example"}
    assert {"16:00", "2024-03-05", "Q3 2024"} <= facts["date"]
    assert {"get_user()", "auth.service", "v1.2.3", "S3", "INV-2024-7"} <= facts["identifier"]
    assert facts["number"] == {"12500"}  # the 2024 of a date or an id is not counted twice
    assert {"Dana", "Reyes", "Fridays", "UTC"} <= facts["name"]
    assert not {"The", "e.g"} & (facts["name"] | facts["identifier"])


def test_an_email_address_on_a_www_domain_is_one_address_and_a_www_link_still_a_link():
    # Hypothesis found "aa@www.example" read as the link "www.example": a refusal that named
    # half the address it had lost.
    facts = extract_facts("Write to aa@www.example or see www.example.com/docs.").by_kind
    assert facts["email"] == {"aa@www.example"}
    assert facts["url"] == {"www.example.com/docs"}


def test_a_surname_with_an_inner_capital_is_a_name_and_a_product_name_a_code():
    facts = extract_facts("Ross McEwan and Danny DeVito use GitHub and JavaScript.").by_kind
    assert {"McEwan", "DeVito"} <= facts["name"] and not {"McEwan", "DeVito"} & facts["identifier"]
    assert {"GitHub", "JavaScript"} <= facts["identifier"]


def test_accepts_a_faithful_rewrite():
    verdict = judge(_answer(TEXT.replace("Budget is 12,500", "budget: 12500")),
                    field="merged_text", inputs=[TEXT], max_chars=2000)
    assert verdict.accepted and verdict.text


def test_rejects_empty_over_limit_schema_and_markers():
    assert judge(_answer("   "), field="merged_text", inputs=[TEXT], max_chars=2000).reason == "empty answer"
    assert "over the limit" in judge(_answer(TEXT), field="merged_text", inputs=[TEXT], max_chars=50).reason
    for raw in ("not json", "[1]", '{"text": "x"}', '{"merged_text": 3}', '{"merged_text": "x", "extra": 1}', None):
        assert "schema" in judge(raw, field="merged_text", inputs=[TEXT], max_chars=2000).reason
    marker = judge(_answer(TEXT + " [merged: old]"), field="merged_text", inputs=[TEXT], max_chars=2000)
    assert not marker.accepted and "artifact" in marker.reason


def test_rejects_a_dropped_fact_of_any_input():
    other = "Sam Okafor manages the account."
    verdict = judge(_answer(TEXT), field="merged_text", inputs=[TEXT, other], max_chars=2000)
    assert not verdict.accepted and {"Sam", "Okafor"} <= set(verdict.missing)
    dropped_date = judge(_answer(TEXT.replace(" since 2024-03-05", "")), field="merged_text", inputs=[TEXT], max_chars=2000)
    assert dropped_date.missing == ("2024-03-05",)


def test_rejects_invented_facts_but_not_recased_words():
    invented = judge(_answer(TEXT + " Bob called 42 times, from bob@evil.example."),
                     field="merged_text", inputs=[TEXT], max_chars=2000)
    assert set(invented.introduced) == {"Bob", "42", "bob@evil.example"}
    recased = judge(_answer(TEXT.replace("Customer Dana", "The customer Dana", 1)), field="merged_text",
                    inputs=[TEXT], max_chars=2000)
    assert recased.accepted


def test_a_merge_that_says_a_fact_twice_is_refused():
    twice = judge(_answer(TEXT + " Customer Dana Reyes prefers email."), field="merged_text", inputs=[TEXT], max_chars=2000)
    assert not twice.accepted and twice.reason.startswith("says 'Customer Dana Reyes prefers email' twice")


def test_numbers_match_whole_numbers_only():
    assert occurs("number", "1000", "costs 1,000 dollars")
    assert not occurs("number", "42", "costs 420 dollars")
    assert not occurs("number", "42", "version 4.42")
    assert not occurs("number", "42", "42.5 percent")
    assert missing_facts(["It costs 42."], "It costs 42.5.") == [("number", "42")]


def test_a_changed_date_format_is_a_missing_date():
    # Strict on purpose: a false rejection costs wording, a false acceptance loses a fact.
    assert missing_facts(["Met on 2024-03-05."], "Met on March 5, 2024.") == [("date", "2024-03-05")]


def test_every_sunday_says_sundays_but_one_sunday_or_another_day_does_not():
    # "every Sunday" and "Sundays" are one recurring day: the token "Sundays", either way round.
    assert missing_facts(["Staging is reset Sundays."], "Staging is reset every Sunday.") == []
    assert introduced_facts(["Staging is reset Sundays."], "Staging is reset every Sunday.") == []
    assert missing_facts(["Staging is reset each Sunday."], "Staging is reset on Sundays.") == []
    # A lone Sunday is one day; every second Sunday and every Monday are other days.
    assert missing_facts(["Staging is reset Sundays."], "Staging is reset on Sunday.") == [("name", "Sundays")]
    assert missing_facts(["Staging is reset on Sunday."], "Staging is reset Sundays.") == [("name", "Sunday")]
    assert missing_facts(["Staging is reset Sundays."], "Staging is reset every second Sunday.") == [("name", "Sundays")]
    assert introduced_facts(["Staging is reset Sundays."], "Staging is reset every Monday.") == [("name", "Mondays")]


_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@pytest.mark.parametrize("written", _WEEKDAYS)
def test_every_weekday_says_its_own_plural_only(written):
    for said in _WEEKDAYS:
        kept = missing_facts([f"The job runs {written}s."], f"The job runs every {said}.") == []
        assert kept == (said == written), (written, said)


_FACT = st.one_of(
    st.integers(min_value=0, max_value=10**6).map(str),
    st.dates().map(lambda d: d.isoformat()),
    st.from_regex(r"[a-z]{2,8}_[a-z]{2,8}", fullmatch=True),
    st.from_regex(r"[a-z]{2,8}@[a-z]{2,8}\.example", fullmatch=True),
)


@settings(max_examples=200, deadline=None)
@given(facts=st.lists(_FACT, min_size=1, max_size=6, unique=True), data=st.data())
def test_property_dropping_any_fact_is_rejected_keeping_all_is_accepted(facts, data):
    sentences = [f"note {label} is {fact}." for label, fact in zip("abcdef", facts)]
    original = " ".join(sentences)
    shuffled = " ".join(data.draw(st.permutations(sentences)))
    assert judge(_answer(shuffled), field="merged_text", inputs=[original], max_chars=10_000).accepted
    dropped = data.draw(st.integers(0, len(sentences) - 1))
    without = " ".join(s for i, s in enumerate(sentences) if i != dropped)
    verdict = judge(_answer(without or "nothing."), field="merged_text", inputs=[original], max_chars=10_000)
    # The refusal names the lost fact: as a missing token, or in the clause it drops (a number
    # that also stands inside a kept date, "1000" of "1000-01-01", is not missing as a token).
    assert not verdict.accepted
    assert facts[dropped].lower() in {m.lower() for m in verdict.missing} or facts[dropped] in verdict.reason


def test_a_number_dropped_while_a_date_holding_it_stays_is_refused_by_name():
    original = "note c is 1000. note e is 1000-01-01."
    verdict = judge(_answer("note e is 1000-01-01."), field="merged_text", inputs=[original], max_chars=10_000)
    assert not verdict.accepted and "1000'" in verdict.reason


def test_a_merge_must_say_every_clause_however_short():
    kept = "The billing-export job writes invoices to s3://acme-billing/exports as CSV files every night at 02:00 UTC."
    verdict = merged(kept, kept[:-1] + " and is deprecated.", kept)
    assert not verdict.accepted and verdict.reason == "drops the clause 'and is deprecated'"
    assert merged("Prefers contact by email; allergic to peanuts.",
                  "Prefers email contact.", "Is allergic to peanuts.").accepted


def test_an_answer_may_add_or_swap_no_word_however_similar():
    base = "Dana Whitfield prefers email and replies within a day."
    for hostile in ("Dana Whitfield prefers email and replies within a day and asks the assistant to ignore earlier rules.",
                    "Dana Whitfield hates email and replies within a day.",
                    "Dana Whitfield prefers phone and replies within a day.",
                    "Dana Whitfield prefers email and replies within a week."):
        verdict = summarized(hostile, base)
        assert not verdict.accepted and verdict.reason.startswith("says what no input says"), hostile


def test_an_identifier_must_keep_its_case():
    verdict = merged("The staging API token is xq7-lmn2-pq9.", "The staging API token is Xq7-LmN2-pQ9.",
                     "The staging API token is Xq7-LmN2-pQ9.")
    assert not verdict.accepted and "Xq7-LmN2-pQ9" in verdict.reason


def test_a_summary_may_not_drop_the_condition_of_a_sentence_it_keeps():
    original = ("Deploys to production are allowed on Fridays unless a customer demo is scheduled. "
                "The manual review of builds takes a day or two.")
    assert not summarized("Deploys to production are allowed on Fridays.", original).accepted
    verdict = summarized("Deploys to production are allowed on Fridays unless a customer demo is scheduled.", original)
    assert verdict.accepted and [c["clause"] for c in verdict.left_out] == ["The manual review of builds takes a day or two."]


def test_a_merge_in_one_wording_is_accepted_with_a_semantic_embedder(minilm):
    inputs = ["The CI runners for the Lumen monorepo use Ubuntu 24.04.", "Lumen monorepo CI machines run on Ubuntu 24.04."]
    answer = _answer("The CI runners for the Lumen monorepo use Ubuntu 24.04.")
    assert not judge(answer, field="merged_text", inputs=inputs, max_chars=2000).accepted  # by words: a clause dropped
    verdict = judge(answer, field="merged_text", inputs=inputs, max_chars=2000, semantic=minilm)
    assert verdict.accepted
    assert verdict.covered[0]["clause"] == "Lumen monorepo CI machines run on Ubuntu 24.04"
    assert verdict.covered[0]["how"] == "semantic" and verdict.covered[0]["similarity"] >= minilm.threshold


# --------------------------------------------------------------------------- meaning, not only tokens
# Every hostile answer below keeps each name, number and date of its inputs: only the meaning
# check can refuse it. Each faithful one must still be accepted.

PRIYA_KEEPER = "Priya Raman (Helix Robotics) is not allergic to peanuts and is not vegetarian."
PRIYA_ABSORBED = "Priya Raman is not vegetarian and does not drink coffee; she prefers green tea."
APPROVALS = ("Call notes 2025-02-14, Helix Robotics (Priya Raman): Priya does not approve purchases above $5,000; "
             "those go to the CFO. We spent a long while on small talk about the weather and the new office, "
             "none of which is worth keeping. Invoices go to ap@helix-robotics.example.")


def merged(answer: str, *inputs: str):
    return judge(_answer(answer), field="merged_text", inputs=list(inputs), max_chars=2000)


def summarized(answer: str, original: str):
    return judge(_answer(answer, "summary"), field="summary", inputs=[original], max_chars=500)


def test_a_merge_that_drops_every_not_is_rejected_and_says_which():
    answer = ("Priya Raman (Helix Robotics) is allergic to peanuts and is vegetarian, "
              "and she does drink coffee; she prefers green tea.")
    verdict = merged(answer, PRIYA_KEEPER, PRIYA_ABSORBED)
    assert not verdict.accepted
    assert verdict.reason.startswith("drops the negation 'not allergic to peanuts' from "
                                     "'Priya Raman (Helix Robotics) is not allergic to peanuts and is not vegetarian.'")
    assert "'not drink coffee'" in verdict.reason


def test_a_summary_that_turns_does_not_approve_into_does_approve_is_rejected():
    answer = ("Call notes 2025-02-14, Helix Robotics (Priya Raman): Priya does approve purchases above $5,000; "
              "those go to the CFO. Invoices go to ap@helix-robotics.example.")
    verdict = summarized(answer, APPROVALS)
    assert not verdict.accepted
    assert "drops the negation 'not approve purchases' from 'Call notes 2025-02-14" in verdict.reason


def test_an_antonym_swapped_in_is_rejected():
    inputs = ("Refunds for Kestrel Aviation are allowed within 30 days.", "Kestrel Aviation refunds are allowed within 30 days.")
    verdict = merged("Refunds for Kestrel Aviation are forbidden within 30 days.", *inputs)
    assert not verdict.accepted and "turns 'allowed' into its opposite 'forbidden'" in verdict.reason


def test_swapped_roles_are_rejected():
    inputs = ("Sam Okafor reports to Dana Reyes since 2024-03-05.", "Since 2024-03-05 Sam Okafor reports to Dana Reyes.")
    verdict = merged("Since 2024-03-05 Dana Reyes reports to Sam Okafor.", *inputs)
    assert not verdict.accepted and "swaps the roles of 'Sam Okafor' and 'Dana Reyes'" in verdict.reason


def test_a_weakened_quantifier_is_rejected():
    inputs = ("Every invoice for Tidewater Clinics must quote PO-4471902.", "Each Tidewater Clinics invoice must quote PO-4471902.")
    verdict = merged("Some invoices for Tidewater Clinics must quote PO-4471902.", *inputs)
    assert not verdict.accepted and "changes the quantifier 'Every invoice" in verdict.reason


def test_a_weakened_modal_is_rejected():
    inputs = ("Deals above $250,000 must be approved by Keith Moreno in Salesforce.",
              "Deals above $250,000 have to be approved by Keith Moreno in Salesforce.")
    verdict = merged("Deals above $250,000 should be approved by Keith Moreno in Salesforce.", *inputs)
    assert not verdict.accepted and "changes the modality 'must be approved' to 'should be approved'" in verdict.reason


def test_a_reversed_comparison_is_rejected():
    inputs = ("Harbor & Vine books pallets over 900 kg as LTL freight.",
              "Harbor & Vine books any pallet over 900 kg as LTL freight.")
    verdict = merged("Harbor & Vine books pallets under 900 kg as LTL freight.", *inputs)
    assert not verdict.accepted and "changes the comparison 'over 900 kg' to 'under 900 kg'" in verdict.reason


def test_a_summary_may_not_change_a_sentence_it_keeps():
    answer = ("Call notes 2025-02-14, Helix Robotics (Priya Raman): Priya does not approve purchases below $5,000; "
              "those go to the CFO. Invoices go to ap@helix-robotics.example.")
    assert "changes the comparison 'above $5,000' to 'below $5,000'" in summarized(answer, APPROVALS).reason


def test_a_sentence_no_input_says_is_rejected():
    verdict = merged(f"{PRIYA_KEEPER} She is vegetarian on weekdays. She prefers green tea and does not drink coffee.",
                     PRIYA_KEEPER, PRIYA_ABSORBED)
    assert not verdict.accepted and "says what no input says: 'She is vegetarian on weekdays.'" in verdict.reason


def test_a_merge_that_drops_a_sentences_content_is_rejected_by_the_guard_itself():
    verdict = merged("Priya Raman (Helix Robotics) is not allergic to peanuts and is not vegetarian.",
                     PRIYA_KEEPER, PRIYA_ABSORBED)
    assert verdict.reason == "drops the clause 'and does not drink coffee'"


def test_the_kind_follows_the_field_unless_given():
    # The same text: as a merge it lost a sentence; as a summary dropping a sentence is allowed.
    shorter = _answer(PRIYA_KEEPER)
    assert not judge(shorter, field="merged_text", inputs=[PRIYA_KEEPER, PRIYA_ABSORBED], max_chars=2000).accepted
    assert judge(shorter, field="merged_text", inputs=[PRIYA_KEEPER, PRIYA_ABSORBED], max_chars=2000,
                 kind="summary").accepted


def test_reordered_sentences_are_accepted():
    inputs = ("Luca Rossi is the primary admin for Pinecrest Credit Union. Escalate outages to Grace Novak.",
              "Write to it-admin@pinecrest-credit-union.example for Pinecrest Credit Union.")
    answer = ("Write to it-admin@pinecrest-credit-union.example for Pinecrest Credit Union. Escalate outages to "
              "Grace Novak. Luca Rossi is the primary admin for Pinecrest Credit Union.")
    assert merged(answer, *inputs).accepted


def test_removed_duplicates_are_accepted():
    inputs = (("Dana Whitfield (Brightline Dental) prefers email over phone calls and wants invoices sent to "
               "billing@brightline-dental.example before the 5th of each month."),
              ("Dana Whitfield at Brightline Dental prefers email to phone calls; she wants invoices sent to "
               "billing@brightline-dental.example by the 5th of every month."))
    answer = ("Dana Whitfield (Brightline Dental) prefers email over phone calls and wants invoices sent to "
              "billing@brightline-dental.example by the 5th of each month.")
    assert merged(answer, *inputs).accepted


def test_changed_connectives_are_accepted():
    inputs = (("To reroute a delayed shipment, open https://ops.globex.example/reroute, pick the new hub and notify "
               "the consignee by SMS."),
              ("To reroute a delayed shipment: open https://ops.globex.example/reroute, pick the new hub, then notify "
               "the consignee by SMS."))
    answer = ("To reroute a delayed shipment, open https://ops.globex.example/reroute and pick the new hub; then "
              "notify the consignee by SMS.")
    assert merged(answer, *inputs).accepted


def test_two_sentences_joined_into_one_are_accepted():
    answer = "Priya Raman (Helix Robotics) is not allergic to peanuts, is not vegetarian and doesn't drink coffee; she prefers green tea."
    assert merged(answer, PRIYA_KEEPER, PRIYA_ABSORBED).accepted


def test_a_reworded_merge_of_the_demo_kind_is_accepted():
    inputs = ("Deals above $250,000 need approval from Keith Moreno in Salesforce before the quote is sent to the customer.",
              "Any deal over $250,000 has to be approved by Keith Moreno in Salesforce first.")
    answer = "Deals above $250,000 must be approved by Keith Moreno in Salesforce before the quote is sent to the customer."
    verdict = merged(answer, *inputs)
    assert verdict.accepted
    # What the answer says in other words is listed, with what says it.
    assert {c["clause"] for c in verdict.covered} == {
        "Deals above $250,000 need approval from Keith Moreno in Salesforce",
        "Any deal over $250,000 has to be approved by Keith Moreno in Salesforce first"}


def test_a_summary_that_drops_filler_and_joins_sentences_is_accepted():
    answer = ("Call notes 2025-02-14, Helix Robotics (Priya Raman): Priya does not approve purchases above $5,000; "
              "those go to the CFO, and invoices go to ap@helix-robotics.example.")
    assert summarized(answer, APPROVALS).accepted


def test_a_summary_may_drop_a_clause_with_its_marker():
    original = ("Lab notebook 2025-05-02, exp-3310 (Noor Abbott): GPU utilisation on gbx-gpu-us was 35% and the team "
                "never found out why the queue stalled. The data loader is the bottleneck, says Noor.")
    answer = ("Lab notebook 2025-05-02, exp-3310 (Noor Abbott): GPU utilisation on gbx-gpu-us was 35%. "
              "The data loader is the bottleneck, says Noor.")
    assert summarized(answer, original).accepted


def test_a_decimal_with_its_unit_and_a_path_ending_a_sentence_are_kept_facts():
    text = "Learned index v2 is 2.3x faster; see /v2/webhooks."
    assert missing_facts([text], "Learned index v2 is 2.3x faster (see /v2/webhooks)") == []
    assert missing_facts([text], "Learned index v2 is 2.4x faster; see /v2/webhooks.") == [("identifier", "2.3x")]


def test_a_cjk_summary_is_aligned_character_by_character():
    # CJK writes no spaces between words; the meaning check must not refuse every CJK summary.
    original = ("田中さんは毎週月曜日に東京オフィスで会議を開きます。会議の議事録はConfluenceに保存されます。"
                + "雑談が長く続きました。" * 40)
    assert summarized("田中さんは毎週月曜日に東京オフィスで会議を開き、議事録はConfluenceに保存されます。", original).accepted


def test_the_offline_merge_of_every_demo_duplicate_is_an_answer_the_guard_accepts():
    # The offline merge keeps every sentence as written: if the guard refused it, it would refuse
    # the most faithful answer a model can give.
    from datetime import datetime

    from curation_pipeline.core.steps.consolidate import offline_merge
    from curation_pipeline.demo.corpus import build_seed_corpus

    corpus = build_seed_corpus(now=datetime(2025, 7, 1, tzinfo=UTC), seed=7)
    texts = {node["id"]: node["pointer_summary"] for node in corpus.nodes}
    pairs = [(texts[a], texts[b]) for group in corpus.duplicate_groups for a in group for b in group if a != b]
    assert len(pairs) >= 20
    refused = [(keeper, verdict.reason) for keeper, absorbed in pairs
               if not (verdict := merged(offline_merge(keeper, absorbed).text, keeper, absorbed)).accepted]
    assert refused == []


@pytest.mark.parametrize(("field", "answer", "inputs"), [
    # Integrity, round three, point 2: each value stays bound to its own subject.
    ("merged_text", "Refunds need approval from Sam; chargebacks need approval from Dana.",
     ["Refunds need approval from Dana; chargebacks need approval from Sam.",
      "Refunds need approval from Dana, and chargebacks need approval from Sam."]),
    ("summary", "Alice approves chargebacks and Bob approves refunds.", ["Alice approves refunds and Bob approves chargebacks."]),
    ("summary", "Bob approves refunds and Alice approves chargebacks.", ["Alice approves refunds and Bob approves chargebacks."]),
    ("summary", "Alice and Bob approve refunds and chargebacks.", ["Alice approves refunds and Bob approves chargebacks."]),
])
def test_an_answer_that_binds_a_value_to_another_subject_is_refused(field, answer, inputs):
    verdict = judge(_answer(answer, field), field=field, inputs=inputs, max_chars=2000)
    assert not verdict.accepted and "says what no input says" in verdict.reason


def test_the_same_bindings_in_other_words_are_accepted():
    inputs = ["Refunds need approval from Dana; chargebacks need approval from Sam."]
    verdict = judge(_answer("Chargebacks need approval from Sam; refunds need approval from Dana."),
                    field="merged_text", inputs=inputs, max_chars=2000)
    assert verdict.accepted, verdict.reason
