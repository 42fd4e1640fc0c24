"""Which input sentences each answer sentence comes from."""

from __future__ import annotations

from curation_pipeline.core.sentence_alignment import align, sentence


def links(inputs: list[str], outputs: list[str], *, share: float = 0.75):
    alignment = align([sentence(s) for s in inputs], [sentence(s) for s in outputs], input_share=share)
    return alignment


def test_a_joined_sentence_comes_from_both_inputs():
    alignment = links(["Priya is not vegetarian.", "Priya does not drink coffee."],
                      ["Priya is not vegetarian and does not drink coffee."])
    assert alignment.links == {(0, 0), (1, 0)} and alignment.unsourced == ()


def test_a_shortened_sentence_comes_from_the_long_one():
    alignment = links(["The quarterly review with Globex happened on 2024-06-14 and lasted about 90 minutes.",
                       "It was a long and friendly conversation."],
                      ["Quarterly review with Globex on 2024-06-14, 90 minutes."])
    assert alignment.links == {(0, 0)}


def test_a_sentence_that_only_shares_a_name_is_not_a_source():
    alignment = links(["Priya does not drink coffee.", "Priya drinks green tea."], ["Priya drinks green tea."])
    assert alignment.links == {(1, 0)}


def test_an_answer_sentence_with_no_source_is_reported():
    alignment = links(["Priya drinks green tea."], ["Priya drinks green tea.", "She is allergic to peanuts."])
    assert alignment.unsourced == (1,)


def test_an_input_sentence_partly_kept_goes_where_its_words_went_in_a_merge_only():
    # The second input shares 3 of its 5 keys with the answer: for a merge that says where it
    # went (its markers will be checked there); a summary may have dropped it.
    inputs = ["Dana prefers email to phone calls and writes in German on Mondays.",
              "Dana prefers email and travels to Spain."]
    outputs = ["Dana prefers email to phone calls and writes in German on Mondays."]
    assert links(inputs, outputs, share=0.5).links == {(0, 0), (1, 0)}
    assert links(inputs, outputs, share=0.75).links == {(0, 0)}


def test_groups_join_everything_linked():
    alignment = links(["A quote needs approval.", "Keith approves quotes.", "Invoices go to billing."],
                      ["A quote needs approval, and Keith approves quotes.", "Invoices go to billing."])
    groups = alignment.groups()
    assert [(g.inputs, g.outputs) for g in groups] == [((0, 1), (0,)), ((2,), (1,))]
