"""The sample corpus's labeled conversations (`data/sample/chat.jsonl`), written by `data.sample_corpus`.

Each line is a conversation: {"id", "turns": [...]}; a turn is what the user types ("text") and
its gold: the standalone question it should be read as ("question"), the words that question must
hold ("mentions": the company, document, metric, year a follow-up leaves out) and must not ("absent":
a topic left behind), the expected outcome ("expected_status": answer or clarify; "kind": question,
show_more or export) and, for answers, "answer" and "evidence" as in qa.jsonl. Golds are taken from
the generated questions (by id), so they change with the corpus.
"""
from __future__ import annotations


def _turn(text: str, mentions: list[str], gold: dict | None = None, question: str = "", absent: tuple = (),
          kind: str = "question", status: str = "answer", new_topic: bool = False, **override) -> dict:
    gold = gold or {}
    return {"text": text, "question": question or gold.get("question", text), "mentions": mentions,
            "absent": list(absent), "new_topic": new_topic, "kind": kind,
            "expected_status": override.get("expected_status", gold.get("expected_status", status)),
            "answer": override.get("answer", gold.get("answer", "")),
            "evidence": override.get("evidence", gold.get("evidence", []))}


def conversations(questions: list[dict], invoices: list) -> list[dict]:
    """At least 8 conversations, 30 turns: pronoun follow-ups, year switches, clarify-then-answer,
    new-topic resets, "show the rest" and export."""
    q = {question["id"]: question for question in questions}
    redline = {inv.number: inv for inv in invoices if inv.vendor.prefix == "RTW"}

    def invoice_total(number: str) -> dict:
        from ferret.data.sample_corpus import money

        inv = redline[number]
        return {"answer": money(inv.total_cents), "evidence": [{"doc_id": inv.doc_id, "page": 1}],
                "expected_status": "answer"}

    later, earlier = sorted(redline)[-1], sorted(redline)[0]
    return [
        {"id": "chat-northwind-pronouns", "turns": [
            _turn("What was Northwind's net income for 2023?", ["Northwind", "net income", "2023"],
                  q["rep-net-income-2023"], new_topic=True),
            _turn("And its total assets at the end of that year?", ["Northwind", "total assets", "2023"],
                  q["rep-total-assets-2023"]),
            _turn("How many employees did it have then?", ["Northwind", "employees", "2023"], q["rep-employees-2023"]),
            _turn("What was its order backlog at that date?", ["Northwind", "backlog", "2023"], q["rep-backlog-2023"]),
        ]},
        {"id": "chat-segments-year-switch", "turns": [
            _turn("What was Consumer segment revenue in 2022?", ["Consumer", "revenue", "2022"],
                  q["rep-consumer-revenue-2022"], new_topic=True),
            _turn("And the Utility segment's operating income in 2023?", ["Utility", "operating income", "2023"],
                  q["rep-utility-oi-2023"], absent=("2022",)),
            _turn("What was the Consumer segment's operating margin that year?", ["Consumer", "operating margin", "2023"],
                  q["rep-consumer-margin-2023"]),
        ]},
        {"id": "chat-redline-clarify", "turns": [
            _turn("What was the total of the Redline Tire & Wheel invoice?", ["Redline", "total"],
                  q["inv-ambiguous-redline"], new_topic=True),
            _turn(f"The one numbered {later}.", ["Redline", later, "total"], invoice_total(later),
                  question=f"What was the total of the Redline Tire & Wheel invoice {later}?"),
            _turn(f"And invoice {earlier}?", ["Redline", earlier, "total"], invoice_total(earlier),
                  question=f"What was the total of the Redline Tire & Wheel invoice {earlier}?", absent=(later,)),
        ]},
        {"id": "chat-notice-clarify", "turns": [
            _turn("What is the termination notice period?", ["termination", "notice"], q["ctr-ambiguous-notice"],
                  new_topic=True),
            _turn("In ACME's 2023 service contract, for convenience.", ["ACME", "2023", "service", "notice"],
                  q["ctr-notice-acme-2023-service"]),
            _turn("And in its 2023 equipment supply agreement?", ["ACME", "2023", "equipment supply", "notice"],
                  q["ctr-notice-sunfield"], absent=("service contract",)),
        ]},
        {"id": "chat-tires-rows", "turns": [
            _turn("Which receipts contain tires?", ["tires"], q["inv-list-tires"], new_topic=True),
            _turn("show the rest", ["tires"], question=q["inv-list-tires"]["question"], kind="show_more",
                  answer="", evidence=[]),
            _turn("export that table to tires.csv", ["tires"], question=q["inv-list-tires"]["question"], kind="export",
                  answer="", evidence=[]),
            _turn("And from which vendors did we buy batteries in 2023?", ["vendors", "batteries", "2023"],
                  q["inv-list-battery-vendors-2023"], absent=("tires",)),
        ]},
        {"id": "chat-spend-year-switch", "turns": [
            _turn("What was the total amount spent on tires in 2022?", ["tires", "2022"], q["inv-sum-tires-2022"],
                  new_topic=True),
            _turn("And how many tires did we buy in 2023?", ["tires", "2023"], q["inv-qty-tires-2023"], absent=("2022",)),
            _turn("What about batteries that year, in total spend?", ["batteries", "2023"], q["inv-sum-batteries-2023"],
                  absent=("tires",)),
        ]},
        {"id": "chat-datasheets-new-topic", "turns": [
            _turn("What is the Voc of the SP-410?", ["SP-410", "Voc"], q["ds-voc-sp410"], new_topic=True),
            _turn("How wide is the SP-540?", ["SP-540", "wide"], q["ds-width-sp540"], absent=("SP-410",)),
            _turn("New question: what is the maximum continuous collector current of the NXD882?",
                  ["NXD882", "collector current"], q["ds-ic-nxd882"], absent=("SP-540",), new_topic=True),
        ]},
        {"id": "chat-acme-contracts", "turns": [
            _turn("How much notice must a party give to terminate the 2021 agreement between ACME Corp and Borealis "
                  "Logistics for convenience?", ["ACME", "Borealis", "2021", "notice"],
                  q["ctr-notice-acme-borealis-2021"], new_topic=True),
            _turn("Which state's law governs ACME's 2023 equipment supply agreement?", ["ACME", "2023", "law"],
                  q["ctr-law-acme-supply-2023"]),
            _turn("And how long is the initial term of its facilities maintenance agreement?",
                  ["ACME", "facilities maintenance", "initial term"], q["ctr-term-keystone"]),
            _turn("Different topic: when did the distribution agreement between Northwind and Meridian take effect?",
                  ["Northwind", "Meridian", "distribution"], q["ctr-effective-meridian"], absent=("ACME",),
                  new_topic=True),
        ]},
        {"id": "chat-northwind-cash", "turns": [
            _turn("How much cash did Northwind's operating activities provide in 2023?",
                  ["Northwind", "operating activities", "2023"], q["rep-cfo-2023"], new_topic=True),
            _turn("And what were its capital expenditures that year?", ["Northwind", "capital expenditures", "2023"],
                  q["rep-capex-2023"]),
            _turn("What is that as a percentage of revenue?", ["Northwind", "capital expenditures", "revenue", "2023"],
                  q["rep-capex-intensity-2023"]),
            _turn("What dividends per share did it pay for that year?", ["Northwind", "dividends", "2023"],
                  q["rep-dividend-2023"]),
        ]},
    ]
