"""A realistic, deterministic demo corpus of agent memories that gives every curation step work.

``generate_seed_corpus(now=..., seed=...)`` returns memory nodes for three tenants and six
namespaces (an agent's support bot, sales assistant and research assistant memories: customer
preferences, facts, decisions, call notes, procedures, with names, dates, amounts, URLs and code
identifiers) plus one ``namespace_activity`` row per namespace.

Most nodes are "healthy" background memories drawn from templates. Planted among them, in every
namespace, are the situations each step exists for (docs/architecture.md lists the steps):

* near-duplicate clusters (pairs and triples, same memory_type) written as light rewordings,
  which the lexical embedder puts above cosine 0.92, including one with a pinned node and one
  with a verified node; a chain A~B, B~C with A!~C; and same-topic memories that state
  different facts and must stay below 0.92;
* updates: a memory and, weeks later, the new value of the same thing (a raised limit, a moved
  meeting, a new contact, a "no longer"), which step 2 supersedes;
* verbose nodes (> 500 characters) rarely recalled, and nodes carrying ``[merged: ...]``
  artifacts of earlier merges (some nested, some long and often recalled);
* never-recalled nodes far behind the namespace's epoch, nodes not recalled for 30+ days,
  verified and pinned nodes, nodes without an embedding, an already archived merge;
* traps that must NOT be acted on: an identical text under two memory types, the same text in
  two tenants, and boundary cases just inside each threshold (epoch lag exactly 100, recalled
  29 days ago, long but often recalled, ...).

Nodes carry the ``memory_nodes`` columns (``id`` as ``uuid.UUID``, aware datetimes) and never an
``embedding``: the caller embeds every node whose private ``_embed`` key is true with the
configured embedder (and sets ``embedding_model``), and strips ``_embed`` before inserting.
``build_seed_corpus`` additionally returns a ``SeedCorpus`` manifest of what was planted, which
the tests (and anyone curious about what the demo should do) use as the expected outcome.

Everything is a pure function of ``(now, seed)``: the same inputs give the same ids, texts and
timestamps in every process.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

__all__ = [
    "SEED_NAMESPACES",
    "SEED_TENANTS",
    "SeedCorpus",
    "SeedNamespace",
    "build_seed_corpus",
    "generate_seed_corpus",
]

SEED_TENANTS: tuple[str, ...] = ("acme", "globex", "initech")


@dataclass(frozen=True)
class SeedNamespace:
    """One demo namespace: whose it is, what its agent does, and how far its epochs have run."""

    tenant_id: str
    namespace: str
    domain: str  # "support" | "sales" | "research": which memory templates it is written from
    current_epoch: int
    idle_for: timedelta  # since the agent last touched the namespace (drives the idle sensor)

    @property
    def key(self) -> tuple[str, str]:
        return (self.tenant_id, self.namespace)


SEED_NAMESPACES: tuple[SeedNamespace, ...] = (
    SeedNamespace("acme", "support-bot", "support", 240, timedelta(hours=2)),
    SeedNamespace("acme", "sales-assistant", "sales", 180, timedelta(days=3)),
    SeedNamespace("globex", "support-bot", "support", 310, timedelta(minutes=20)),
    SeedNamespace("globex", "research", "research", 150, timedelta(days=9)),
    SeedNamespace("initech", "sales-assistant", "sales", 420, timedelta(hours=6)),
    SeedNamespace("initech", "research", "research", 205, timedelta(days=1)),
)

# Thresholds of the reference curator that the planted cases sit on either side of.
_STALE_EPOCH_LAG = 100
_STALE_AFTER = timedelta(days=30)
_VERBOSE_LENGTH = 500
_FREQUENT_RECALLS = 3

_BACKGROUND_NODES_PER_NAMESPACE = 42
# Slots naming what a memory is about; "related" memories share them and differ in the rest.
# Ordered: a memory is about its company before the person at that company.
_ENTITY_SLOTS: tuple[str, ...] = ("company", "dataset", "system", "person")


@dataclass(frozen=True)
class SeedCorpus:
    """The generated rows plus a manifest of the planted situations (ids refer to ``nodes``)."""

    nodes: list[dict[str, Any]]
    namespace_activity: list[dict[str, Any]]
    duplicate_groups: list[tuple[uuid.UUID, ...]] = field(default_factory=list)
    """Every pair inside a group is a near-duplicate (same tenant, namespace, memory_type)."""
    chains: list[tuple[uuid.UUID, uuid.UUID, uuid.UUID]] = field(default_factory=list)
    """(A, B, C): A~B and B~C are near-duplicates, A~C is not."""
    distinct_pairs: list[tuple[uuid.UUID, uuid.UUID]] = field(default_factory=list)
    """Same topic, same memory_type, different facts: must stay below the threshold."""
    cross_type_twins: list[tuple[uuid.UUID, uuid.UUID]] = field(default_factory=list)
    """Identical text under two memory types: must not be merged."""
    cross_tenant_twins: list[tuple[uuid.UUID, uuid.UUID]] = field(default_factory=list)
    """Identical text in two tenants: must never be merged."""
    updates: list[tuple[uuid.UUID, uuid.UUID]] = field(default_factory=list)
    """(older, newer): the newer memory gives a new value for what the older says, and
    supersedes it."""


# --------------------------------------------------------------------------------------------
# Vocabulary. Slots in templates are filled from these pools; a trailing digit in a slot name
# ("person2") asks for a second, different value from the same pool.
# --------------------------------------------------------------------------------------------

_FIRST_NAMES = (
    "Aisha Bruno Carmen Deepak Elena Farid Grace Hiro Ines Jonas Kemi Luca Maya Nikolai Olga "
    "Pedro Quinn Rosa Samir Tara Umar Vera Wen Ximena Yusuf Zoe Anders Bianca Chidi Dolores "
    "Emeka Fiona Gustavo Hana Ivan Julia Kofi Lars Mei Noor"
).split()
_LAST_NAMES = (
    "Okafor Lindqvist Haddad Varga Moreau Tanaka Schmidt Alvarez Novak Brennan Kowalski Osei "
    "Petrov Rossi Sato Mbeki Jensen Castillo Dubois Nakamura Fitzgerald Horvat Mensah Larsen "
    "Oyelaran Quint Ribeiro Salonen Takahashi Ueda Vasquez Weber Yilmaz Zielinski Abbott Boateng"
).split()

_COMMON_POOLS: dict[str, Sequence[str]] = {
    "language": ("German", "French", "Spanish", "Portuguese", "Japanese", "Dutch", "Polish", "English"),
    "channel": ("email", "Slack", "Microsoft Teams", "SMS", "the support portal", "WhatsApp"),
    "tz": ("CET", "EST", "PST", "JST", "IST", "BRT", "GMT"),
    "region": ("eu-central-1", "eu-west-2", "us-east-1", "ap-northeast-1", "ca-central-1", "sa-east-1"),
    "idp": ("Okta", "Azure AD", "Google Workspace", "OneLogin", "Ping Identity", "Keycloak"),
    "http_code": ("429", "502", "503", "409", "413"),
    "chat_channel": ("refunds", "billing-approvals", "sales-desk", "deal-desk", "ml-results", "perf-review"),
    "quarter": ("Q1", "Q2", "Q3", "Q4"),
    "stage": ("Discovery", "Technical Validation", "Proposal", "Negotiation", "Legal Review"),
    "meeting": ("pricing workshop", "security review", "executive sponsor call", "technical deep dive"),
    "doc_format": ("PDF", "Google Docs", "Markdown", "a Notion page", "LaTeX", "CSV"),
    "currency": ("EUR", "USD", "GBP", "CHF", "JPY", "CAD"),
    "event": ("fiscal year close", "ERP migration", "office move", "annual audit", "merger integration"),
    "title": ("VP Finance", "CFO", "Head of IT", "Director of Operations", "CTO", "Procurement Lead"),
    "weekday": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"),
    "palette": ("viridis", "colorblind-safe Okabe-Ito", "grayscale", "tab10"),
    "cadence": ("hour", "night", "week", "15 minutes", "month"),
    "loss_reason": (
        "price", "missing on-prem option", "procurement froze all new vendors",
        "they chose to build in-house", "no SAML support on the starter plan",
    ),
}


def _person(rng: random.Random, _: Mapping[str, str]) -> str:
    return f"{rng.choice(_FIRST_NAMES)} {rng.choice(_LAST_NAMES)}"


def _slug_of(text: str) -> str:
    return "".join(character if character.isalnum() else "-" for character in text.lower()).strip("-")


def _email(rng: random.Random, slots: Mapping[str, str]) -> str:
    # Use the company already named in the same memory, so the address is consistent with it.
    company = slots.get("company") or "example"
    mailbox = rng.choice(("billing", "ap", "it-admin", "ops", "finance", "accounts", "procurement"))
    return f"{mailbox}@{_slug_of(company).replace('--', '-')}.example"


def _number(low: int, high: int) -> Callable[[random.Random, Mapping[str, str]], str]:
    return lambda rng, _: str(rng.randint(low, high))


def _code(prefix: str, digits: int) -> Callable[[random.Random, Mapping[str, str]], str]:
    return lambda rng, _: f"{prefix}{rng.randint(10 ** (digits - 1), 10**digits - 1)}"


def _amount(rng: random.Random, _: Mapping[str, str]) -> str:
    return f"${rng.randrange(8_000, 600_000, 500):,}"


def _version(rng: random.Random, _: Mapping[str, str]) -> str:
    return f"{rng.randint(1, 9)}.{rng.randint(0, 24)}.{rng.randint(0, 12)}"


def _sha(rng: random.Random, _: Mapping[str, str]) -> str:
    return f"{rng.getrandbits(28):07x}"


def _metric_value(rng: random.Random, _: Mapping[str, str]) -> str:
    return f"{rng.uniform(0.05, 0.98):.3f}"


def _learning_rate(rng: random.Random, _: Mapping[str, str]) -> str:
    return rng.choice(("1e-3", "3e-4", "5e-4", "1e-4", "2e-5", "6e-4"))


def _dates(now: datetime) -> dict[str, Callable[[random.Random, Mapping[str, str]], str]]:
    """Past and future calendar dates relative to ``now``, so the corpus never looks outdated."""

    def past(rng: random.Random, _: Mapping[str, str]) -> str:
        return (now - timedelta(days=rng.randint(3, 300))).date().isoformat()

    def future(rng: random.Random, _: Mapping[str, str]) -> str:
        return (now + timedelta(days=rng.randint(10, 200))).date().isoformat()

    return {"date": past, "future_date": future}


_GENERATED_POOLS: dict[str, Callable[[random.Random, Mapping[str, str]], str]] = {
    "person": _person,
    "email": _email,
    "amount": _amount,
    "credit": lambda rng, _: f"${rng.randrange(50, 5_000, 50):,}",
    "version": _version,
    "api_version": lambda rng, _: f"v{rng.randint(2, 5)}",
    "sha": _sha,
    "seats": _number(15, 2400),
    "count": _number(3, 480),
    "minutes": _number(4, 190),
    "pct": _number(5, 95),
    "term": lambda rng, _: rng.choice(("12", "24", "36")),
    "pages": _number(2, 12),
    "hour": _number(7, 11),
    "digits": _number(2, 4),
    "rows": lambda rng, _: f"{rng.randint(1, 950)}.{rng.randint(0, 9)}M",
    "gpus": lambda rng, _: rng.choice(("4", "8", "16", "32", "64")),
    "hours": lambda rng, _: rng.choice(("6", "12", "24", "48", "72")),
    "qps": lambda rng, _: f"{rng.randrange(800, 95_000, 50):,}",
    "latency": _number(3, 480),
    "epochs": _number(3, 120),
    "batch": lambda rng, _: rng.choice(("32", "64", "128", "256", "512", "1024")),
    "step": lambda rng, _: f"{rng.randrange(1_000, 400_000, 250):,}",
    "threshold": lambda rng, _: rng.choice(("0.5", "1.0", "2.0", "8", "64", "0.1")),
    "value": _metric_value,
    "lr": _learning_rate,
    "seed_value": _number(0, 9999),
    "ticket": _code("SUP-", 5),
    "job_id": _code("job-", 6),
    "incident": _code("INC-", 4),
    "crm_id": _code("ACC-", 6),
    "po": _code("PO-", 7),
    "deal_id": _code("OPP-", 5),
    "template_id": _code("QT-", 3),
    "nda_id": _code("NDA-", 4),
    "exp_id": _code("exp-", 4),
    "profile_id": _code("prof-", 5),
    "slug": lambda rng, _: rng.choice(("alpha", "north", "ledger", "atlas", "orbit", "delta", "kilo", "nova"))
    + f"-{rng.randint(10, 99)}",
}

# Per-domain vocabulary: what the companies, products and tools of that line of work are called.
_DOMAIN_POOLS: dict[str, dict[str, Sequence[str]]] = {
    "support": {
        "flag": ("async_exports", "strict_tls", "legacy_renderer", "batch_webhooks", "fast_sync"),
        "cause": (
            "an expired TLS certificate on the EU load balancer", "a full disk on the queue broker",
            "a bad config push to the rate limiter", "a DNS change at the CDN",
            "a deadlock in a nightly batch job",
        ),
        "sdk": ("Python", "Node.js", "Java", "Go", "Ruby", ".NET"),
    },
    "sales": {
        "feature": (
            "SAP S/4HANA sync", "multi-entity consolidation", "SCIM provisioning", "audit trails",
            "EU data residency", "usage-based billing", "a Salesforce connector", "offline mode",
        ),
        "doc_name": ("security whitepaper", "DPA", "case study", "ROI calculator", "reference architecture"),
        "city": ("Rotterdam", "Austin", "Lyon", "Toronto", "Osaka", "Kraków", "Denver", "Porto"),
    },
    "research": {
        "metric": ("MAPE", "sMAPE", "RMSE", "F1", "AUROC", "P50 loss", "recall@10", "throughput"),
        "component": ("tokenizer", "feature store", "scheduler", "retrieval index", "loss function", "data loader"),
        "param": ("learning rate", "gradient clip", "warmup steps", "dropout", "queue depth", "batch size"),
        "purpose": ("experiment tracking", "feature storage", "data versioning", "load testing", "orchestration"),
        "reason": (
            "it handles 10x the rows without tuning", "the team already knows it",
            "its licence allows commercial use", "it runs offline on the cluster",
            "the old tool lost runs twice last quarter",
        ),
        "hardware": ("2x A100 80GB", "8x H100", "c7g.4xlarge", "m6i.8xlarge", "a 64-core EPYC 9554"),
        "config": ("configs/base.yaml", "configs/large.yaml", "configs/ablate_no_cov.yaml", "configs/sweep.yaml"),
    },
}

# Per-namespace vocabulary: the tenant's own customers, products, hosts and tools.
_NAMESPACE_POOLS: dict[tuple[str, str], dict[str, Sequence[str]]] = {
    ("acme", "support-bot"): {
        "company": (
            "Brightline Dental", "Northwind Traders", "Helix Robotics", "Pinecrest Credit Union",
            "Orbital Foods", "Bluefin Analytics", "Cedar & Co Legal", "Kestrel Aviation",
            "Lumen Schools", "Quarry Hill Brewing", "Sable Insurance", "Tidewater Clinics",
        ),
        "product": ("Acme Billing", "Acme Ledger", "Acme Payouts", "Acme Tax"),
        "plan": ("Starter", "Growth", "Enterprise", "Enterprise Plus"),
        "host": ("admin.acme.example", "status.acme.example", "docs.acme.example"),
        "tool": ("Zendesk", "the Acme back office", "Stripe", "NetSuite"),
        "cli": ("acmectl",),
        "bucket": ("acme-exports-eu", "acme-exports-us", "acme-archive-ca", "rl-enterprise", "rl-default"),
        "thing": ("invoice", "payout", "ledger", "tax report", "usage", "credit note"),
        "symptom": (
            "CSV exports time out", "webhooks arrive twice", "PDF invoices render blank",
            "the dashboard shows stale balances", "SSO logins loop", "tax totals are off by one cent",
        ),
        "endpoint": ("v2/invoices", "v3/payouts", "v1/exports", "v2/webhooks", "v3/credit-notes"),
    },
    ("globex", "support-bot"): {
        "company": (
            "Harbor & Vine", "Redwood Outfitters", "Polar Pharma", "Granite Tools", "Meridian Books",
            "Copperleaf Furniture", "Nimbus Electronics", "Saffron Kitchens", "Vantage Sports",
            "Willow Pet Supply", "Brightline Dental", "Atlas Auto Parts",
        ),
        "product": ("Globex Freight", "Globex Track", "Globex Customs", "Globex Labels"),
        "plan": ("Standard", "Priority", "Global", "Global Plus"),
        "host": ("ops.globex.example", "track.globex.example", "help.globex.example"),
        "tool": ("Freshdesk", "the Globex TMS", "SAP", "Shopify"),
        "cli": ("gbx",),
        "bucket": ("gbx-manifests-eu", "gbx-manifests-us", "gbx-labels", "rl-carrier", "rl-standard"),
        "thing": ("shipment", "customs declaration", "label", "manifest", "tracking event", "proof of delivery"),
        "symptom": (
            "tracking numbers are missing", "label printing fails with error E1142",
            "customs forms are rejected by the broker", "ETAs jump by a day", "SSO logins loop",
            "manifest uploads time out",
        ),
        "endpoint": ("v2/shipments", "v3/labels", "v1/manifests", "v2/tracking", "v2/webhooks"),
    },
    ("acme", "sales-assistant"): {
        "company": (
            "Orbital Foods", "Vertex Hospitality", "Cobalt Mining", "Fjord Energy", "Larkspur Health",
            "Monarch Retail", "Quantum Freightways", "Riverstone Bank", "Summit Media", "Trellis Farms",
            "Umbra Security", "Wavecrest Telecom",
        ),
        "product": ("Acme Billing Enterprise", "Acme Ledger", "Acme Revenue Cloud"),
        "plan": ("Finance Suite", "Revenue Suite", "Platform"),
        "competitor": ("Chargebee", "Zuora", "Maxio", "Recurly"),
        "host": ("demo.acme.example", "sales.acme.example"),
        "tool": ("Salesforce", "DealHub", "HubSpot"),
    },
    ("initech", "sales-assistant"): {
        "company": (
            "Orbital Foods", "Penrose Logistics", "Halcyon Hotels", "Ironbark Construction",
            "Jadeite Pharma", "Keystone Utilities", "Lodestar Airlines", "Marigold Retail",
            "Nautilus Shipping", "Oakmont University", "Prism Media", "Solstice Energy",
        ),
        "product": ("Initech TPS Suite", "Initech Reports", "Initech Workflow"),
        "plan": ("TPS Standard", "TPS Professional", "TPS Unlimited"),
        "competitor": ("Intertrode", "Vandelay Software", "Globochem Systems"),
        "host": ("demo.initech.example", "partners.initech.example"),
        "tool": ("Salesforce", "PandaDoc", "Pipedrive"),
    },
    ("globex", "research"): {
        "dataset": ("M5", "shipments-2024", "hub-dwell-times", "carrier-eta-v3", "weather-joined-v2"),
        "model": ("TFT", "N-BEATS", "DeepAR", "LightGBM", "PatchTST", "Prophet"),
        "tool": ("MLflow", "Weights & Biases", "DVC", "Airflow", "Feast", "Dagster"),
        "system": ("the ETA service", "the route optimiser", "the demand API"),
        "cluster": ("gbx-gpu-eu", "gbx-gpu-us"),
        "gpu": ("A100", "H100", "L4"),
        "gh_org": ("globex-research", "forecasting-lab"),
        "bucket": ("gbx-research", "gbx-datasets"),
        "cli": ("gbx-ml",),
        "paper_ref": (
            '"Temporal Fusion Transformers" (Lim et al., 2021)',
            '"N-BEATS: Neural basis expansion" (Oreshkin et al., 2020)',
            '"DeepAR" (Salinas et al., 2020)',
            '"A Time Series is Worth 64 Words" (Nie et al., 2023)',
            '"Attention, Learn to Solve Routing Problems!" (Kool et al., 2019)',
        ),
        "func": ("build_features", "haversine_matrix", "join_weather", "compute_dwell"),
        "module": ("gbx/features/eta.py", "gbx/routing/solver.py", "gbx/data/loaders.py"),
    },
    ("initech", "research"): {
        "dataset": ("tps-traces-2024", "ycsb-a", "tpc-c-100w", "prod-query-log-q2", "synthetic-zipf-1.1"),
        "model": ("the baseline B-tree", "the LSM prototype", "learned index v2", "the RocksDB config"),
        "tool": ("Grafana", "pprof", "perf", "k6", "Locust", "Jupyter"),
        "system": ("the TPS report service", "the ingestion gateway", "the query planner", "tpsd"),
        "cluster": ("itc-perf-1", "itc-perf-2"),
        "gpu": ("A10G", "L40S"),
        "gh_org": ("initech-labs", "initech-perf"),
        "bucket": ("itc-bench", "itc-traces"),
        "cli": ("itc-bench",),
        "paper_ref": (
            '"The Case for Learned Index Structures" (Kraska et al., 2018)',
            '"Dostoevsky" (Dayan et al., 2018)',
            '"WiscKey" (Lu et al., 2016)',
            '"ALEX: An Updatable Adaptive Learned Index" (Ding et al., 2020)',
            '"Monkey: Optimal Navigable Key-Value Store" (Dayan et al., 2017)',
        ),
        "func": ("merge_runs", "compact_level", "parse_tps_header", "route_query"),
        "module": ("tpsd/storage/compaction.rs", "tpsd/ingest/parser.rs", "planner/cost.py"),
    },
}

# Background memory templates: (memory_type, text). Each has several slots so that two
# memories from one template state clearly different facts (and stay below the duplicate
# threshold): a template with one slot would make the lexical embedder see duplicates.
_TEMPLATES: dict[str, tuple[tuple[str, str], ...]] = {
    "support": (
        ("semantic", "{company} is on the {plan} plan with {seats} seats; renewal is due {future_date} and the account owner is {person}."),
        ("semantic", "{person} is the primary admin for {company}; write to {email} and escalate outages to {person2}."),
        ("semantic", "{company} calls the {product} API {api_version} from the {sdk} SDK {version}; webhooks go to https://{host}/hooks/{slug}."),
        ("semantic", "{company} requires data residency in {region} under contract {crm_id}; their {thing} exports stay in bucket {bucket} for {count} days."),
        ("semantic", "{company}'s billing contact changed from {person} to {person2} on {date}; CRM record {crm_id} is updated."),
        ("semantic", "{company} runs {count} nightly {thing} jobs against {product}; the largest takes about {minutes} minutes."),
        ("episodic", "Ticket {ticket} from {company}: {symptom} after upgrading to {version}; the workaround was setting {flag}=false."),
        ("episodic", "On {date} {person} from {company} called about {count} failed {thing} exports; we re-ran {job_id} and it succeeded."),
        ("episodic", "Outage {incident} on {date} affected {company} for {minutes} minutes; root cause: {cause}."),
        ("episodic", "{person} ({company}) escalated {ticket} on {date} because {symptom}; {person2} took ownership."),
        ("preference", "{person} at {company} wants replies in {language}, prefers {channel} over phone calls and is never to be called before {hour}:00 {tz}."),
        ("preference", "{company} asks that every invoice quotes purchase order {po} and is emailed to {email}."),
        ("preference", "{person} ({company}) likes step-by-step answers with screenshots and a link to https://{host}/docs/{slug}."),
        ("procedural", "To reset SSO for {company}, rotate the {idp} signing certificate at https://{host}/sso/{slug} and ask {person} to test a login."),
        ("procedural", "When {company} gets HTTP {http_code} on /{endpoint}, check rate-limit bucket {bucket} first; raising it needs {person}'s approval."),
        ("procedural", "Refunds above {amount} for {company} need sign-off from {person} in #{chat_channel} before they are issued in {tool}."),
        ("procedural", "To export {thing} history for {company}, run `{cli} export --account {slug} --since {date}` and attach the file to {ticket}."),
    ),
    "sales": (
        ("semantic", "{company} is evaluating {product} for {seats} seats; the budget is about {amount} and a decision is expected by {future_date}."),
        ("semantic", "{person} ({title} at {company}) is the economic buyer on {deal_id}; {person2} is the technical champion."),
        ("semantic", "We agreed a {pct}% discount for {company} if they sign a {term}-month contract before {future_date}."),
        ("semantic", "{competitor} quoted {company} {amount} per year; our counter-offer is the {plan} bundle at {amount2}."),
        ("semantic", "{company} moved its headquarters to {city}; invoices now go to {email} with {po}."),
        ("semantic", "Renewal {deal_id} for {company}: they use {pct}% of licensed seats, and the upsell target is {seats} seats."),
        ("episodic", "{deal_id} with {company} moved to {stage} on {date}; the next step is a {meeting} with {person}."),
        ("episodic", "Call on {date} with {person} from {company}: they need {feature} by {quarter} and asked for the {doc_name}."),
        ("episodic", "Demo for {company} on {date} used https://{host}/sandbox/{slug}; they liked {feature} and asked about {feature2}."),
        ("episodic", "Lost {deal_id} ({company}, {amount}) to {competitor} on {date}; stated reason: {loss_reason}."),
        ("episodic", "{person} from {company} introduced us to {person2} at {company2} on {date} as a referral."),
        ("preference", "{person} at {company} prefers {channel} and wants proposals in {doc_format}, at most {pages} pages."),
        ("preference", "Do not contact {company} before {future_date}: {person} asked for a pause during their {event}."),
        ("preference", "{person} ({company}) wants prices in {currency}, with {term}-month and annual options side by side."),
        ("procedural", "Quotes above {amount} need approval from {person} in {tool} before they go to {company}."),
        ("procedural", "To quote {company}, use template {template_id} in {tool}, set the currency to {currency} and attach the {doc_name}."),
        ("procedural", "Before a security review with {company}, share https://{host}/trust and get {nda_id} signed by {person}."),
    ),
    "research": (
        ("semantic", "{paper_ref} reports {metric} {value} on {dataset}; our reimplementation is at https://github.com/{gh_org}/{slug}."),
        ("semantic", "Dataset {dataset} lives at s3://{bucket}/{slug}/ with {rows} rows, is refreshed every {cadence} and owned by {person}."),
        ("semantic", "`{func}` in `{module}` takes {pct}% of CPU time in {profile_id}; it is the current bottleneck of {system}."),
        ("semantic", "Decision {date}: use {tool} for {purpose} instead of {tool2} because {reason}."),
        ("semantic", "GPU quota is {gpus}x {gpu} on {cluster} until {future_date}; {person} approves extra capacity."),
        ("episodic", "{exp_id}: {model} with lr={lr} and batch size {batch} reached {metric} {value} on {dataset} after {epochs} epochs."),
        ("episodic", "Benchmark {date}: {system} served {qps} requests/s at p99 {latency} ms on {hardware}."),
        ("episodic", "Ablation {exp_id}: removing the {component} moved {metric} from {value} to {value2} on {dataset}."),
        ("episodic", "Meeting {date} with {person} and {person2}: the {component} interface is frozen until {future_date}."),
        ("episodic", "Run {exp_id} diverged at step {step} after the {param} went above {threshold}; reverted in {sha}."),
        ("preference", "{person} wants result tables as {doc_format} with {digits} decimals and 95% intervals, sorted by {metric}."),
        ("preference", "{person} prefers plots with a log-scale y axis, the {palette} palette and {model} drawn dashed as the baseline."),
        ("preference", "{person} reviews write-ups on {weekday}s only; post them to #{chat_channel} before {hour}:00."),
        ("procedural", "To reproduce {exp_id}, check out {sha} and run `{cli} train --config {config} --seed {seed_value}`."),
        ("procedural", "Before sweep {exp_id} on {cluster}, reserve {gpus} GPUs for {hours} hours with `{cli} reserve`, tag it {slug} and log it in {tool}."),
        ("procedural", "New datasets need a datasheet in {tool} and a licence check by {person} before landing in s3://{bucket}/{slug}/."),
    ),
}

# Sentences of long, rambling notes (call notes, meeting minutes, lab notebooks): the verbose
# memories the summarize step exists for.
_NOTE_HEADERS: dict[str, str] = {
    "support": "Call notes {date}, {company} ({person}): ",
    "sales": "Meeting notes {date} with {person} ({title}, {company}): ",
    "research": "Lab notebook {date}, {exp_id} ({person}): ",
}
_NOTE_SENTENCES: dict[str, tuple[str, ...]] = {
    "support": (
        "They reported that {symptom} since release {version}.",
        "We checked the logs in {tool} and found {count} errors with HTTP {http_code} on /{endpoint}.",
        "{person2} suggested setting {flag}=false as a temporary workaround until the fix ships.",
        "The customer wants a follow-up by {weekday} and a written incident summary for their management.",
        "Their admin mentioned they plan to add {seats} seats next quarter if the issue is resolved.",
        "We linked ticket {ticket} and the internal incident {incident} so that engineering sees the impact.",
        "Escalation path agreed: first {person2}, then the on-call lead via {channel}.",
        "They also asked whether {region} supports the same export format and retention of {count} days.",
        "They were frustrated that the previous agent closed the ticket without confirming the fix.",
        "We promised a credit of {credit} if the SLA breach is confirmed by the status page history.",
    ),
    "sales": (
        "They are comparing us with {competitor}, who quoted {amount} for a {term}-month term.",
        "Main pain points: manual reconciliation, {feature}, and month-end close taking {count} hours.",
        "{person2} from their IT team will join the next {meeting} to go through {feature2}.",
        "Budget approval sits with the board, which meets on {future_date}.",
        "They asked for the {doc_name} and two customer references in {city}.",
        "Procurement needs vendor onboarding forms and the {nda_id} signed before any pilot.",
        "We floated a {pct}% discount for a multi-year commitment, no decision yet.",
        "Next step: send the proposal in {doc_format} by {weekday} and book the {meeting}.",
        "They currently run {seats} users on a legacy tool that goes end-of-life in {quarter}.",
        "Risk: their champion may move to another team after the {event}.",
    ),
    "research": (
        "Trained {model} with lr={lr} and batch size {batch} for {epochs} epochs on {dataset}.",
        "Validation {metric} plateaued at {value} after epoch {epochs2}, which is worse than the baseline.",
        "Suspect the {component} leaks future information; need to re-check the split dates.",
        "GPU utilisation on {cluster} was only {pct}% because the data loader is the bottleneck.",
        "{person2} suggested lowering the {param} to {threshold} and re-running with seed {seed_value}.",
        "Profiling showed `{func}` in `{module}` dominating the step time.",
        "Logged everything in {tool}; the config is {config} at commit {sha}.",
        "Open question: does {dataset} need de-duplication before the next refresh?",
        "Compared against {paper_ref}, our numbers are within noise.",
        "Next: run the ablation without the {component2} and write up the results by {weekday}.",
    ),
}


# --------------------------------------------------------------------------------------------
# Planted, hand-written texts: near-duplicate clusters (light rewordings), chains, same-topic
# memories that differ in facts, and identical texts under two memory types.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _DuplicateCluster:
    memory_type: str
    texts: tuple[str, ...]
    flag_first: str | None = None  # "pinned" or "verified": the first member carries it


@dataclass(frozen=True)
class _PlantedTexts:
    clusters: tuple[_DuplicateCluster, ...]
    # (memory_type, text, text): different facts on the topic of the cluster of that memory_type,
    # so each is checked against the other and against that cluster's first member.
    distinct: tuple[tuple[str, str, str], ...]
    chain: tuple[str, tuple[str, str, str]] | None = None  # (memory_type, (A, B, C))
    cross_type_text: tuple[str, str, str] | None = None  # (text, memory_type, other memory_type)


_PLANTED: dict[tuple[str, str], _PlantedTexts] = {
    ("acme", "support-bot"): _PlantedTexts(
        clusters=(
            _DuplicateCluster(
                "preference",
                (
                    "Dana Whitfield (Brightline Dental) prefers email over phone calls and wants invoices sent to billing@brightline-dental.example before the 5th of each month.",
                    "Dana Whitfield at Brightline Dental prefers email to phone calls; she wants invoices sent to billing@brightline-dental.example by the 5th of every month.",
                ),
                flag_first="pinned",
            ),
            _DuplicateCluster(
                "semantic",
                (
                    "Northwind Traders calls the Acme Billing API v3 and receives webhooks at https://hooks.northwind.example/acme with retries disabled.",
                    "Northwind Traders calls the Acme Billing API v3 and gets its webhooks at https://hooks.northwind.example/acme, with retries disabled.",
                    "Northwind Traders calls Acme Billing API v3; it receives webhooks at https://hooks.northwind.example/acme and has retries disabled.",
                ),
            ),
            _DuplicateCluster(
                "procedural",
                (
                    "To reset SSO for Helix Robotics, rotate the Okta signing certificate at https://admin.acme.example/sso/helix and ask Priya Raman to test the login.",
                    "To reset SSO for Helix Robotics: rotate the Okta signing certificate at https://admin.acme.example/sso/helix, then ask Priya Raman to test the login again.",
                ),
            ),
        ),
        distinct=(
            (
                "preference",
                "Dana Whitfield (Brightline Dental) wants support calls moved to Tuesday mornings and asks us to cc office@brightline-dental.example on every ticket.",
                "Dana Whitfield (Brightline Dental) wants invoices as PDF/A with the practice's VAT number GB 284 1190 57 printed on every page.",
            ),
            (
                "semantic",
                "Northwind Traders upgraded from Billing API v2 to v3 on 2025-02-11 after ticket SUP-40211 about duplicate invoice webhooks.",
                "Northwind Traders has 14 sub-accounts in Acme Billing; consolidated invoices roll up to the parent account NWT-0001.",
            ),
        ),
        cross_type_text=(
            "Pinecrest Credit Union requires every support reply to quote the ticket number in the subject line.",
            "semantic",
            "preference",
        ),
    ),
    ("acme", "sales-assistant"): _PlantedTexts(
        clusters=(
            _DuplicateCluster(
                "semantic",
                (
                    "Orbital Foods is evaluating Acme Billing Enterprise for 450 seats; the budget is about $180,000 and the decision is due by the end of Q3.",
                    "Orbital Foods is evaluating Acme Billing Enterprise for 450 seats, with a budget of roughly $180,000 and a decision expected by the end of Q3.",
                ),
                flag_first="verified",
            ),
            _DuplicateCluster(
                "episodic",
                (
                    "Call with Marta Klein from Orbital Foods on 2025-06-03: they need SAP S/4HANA sync and asked for our SOC 2 Type II report.",
                    "Call on 2025-06-03 with Marta Klein from Orbital Foods: they need SAP S/4HANA sync and asked for the SOC 2 Type II report.",
                    "Call with Marta Klein (Orbital Foods) on 2025-06-03: they need the SAP S/4HANA sync and they asked for our SOC 2 Type II report.",
                ),
            ),
            _DuplicateCluster(
                "procedural",
                (
                    "Deals above $250,000 need approval from Keith Moreno in Salesforce before the quote is sent to the customer.",
                    "Deals above $250,000 require approval from Keith Moreno in Salesforce before a quote is sent to the customer.",
                ),
            ),
        ),
        distinct=(
            (
                "semantic",
                "Orbital Foods signed a 12-month pilot for 40 seats in the Benelux region at $22,000, starting 2025-04-01.",
                "Orbital Foods' procurement runs through Coupa; every quote needs supplier ID OF-99812 and a signed MSA v4.",
            ),
            (
                "procedural",
                "To quote a public-sector customer, use template QT-GOV-2 in Salesforce and attach the accessibility statement.",
                "Deals above $250,000 with a discount over 20% also need a margin review by Lena Fischer from finance.",
            ),
        ),
        chain=(
            "preference",
            (
                "Marta Klein at Orbital Foods prefers short emails with a one-line summary and wants proposals as PDF without any slides.",
                "Marta Klein at Orbital Foods prefers short emails with a one-line summary and wants proposals as PDF without any slides and with a pricing appendix.",
                "Marta Klein at Orbital Foods prefers short emails with a one-line summary and wants proposals as PDF with a pricing appendix.",
            ),
        ),
        cross_type_text=(
            "Keith Moreno must be copied on every quote sent to a Fortune 500 prospect.",
            "semantic",
            "procedural",
        ),
    ),
    ("globex", "support-bot"): _PlantedTexts(
        clusters=(
            _DuplicateCluster(
                "semantic",
                (
                    "Harbor & Vine ships from warehouse HV-ATL-02 in Atlanta; pallets over 900 kg must be booked as LTL freight.",
                    "Harbor & Vine ships out of its Atlanta warehouse HV-ATL-02, and any pallet over 900 kg has to be booked as LTL freight.",
                ),
                flag_first="pinned",
            ),
            _DuplicateCluster(
                "procedural",
                (
                    "To reroute a delayed shipment, open https://ops.globex.example/reroute, pick the new hub and notify the consignee by SMS.",
                    "To reroute a delayed shipment: open https://ops.globex.example/reroute, pick the new hub, then notify the consignee by SMS.",
                    "To reroute a delayed shipment, go to https://ops.globex.example/reroute, pick the new hub and notify the consignee by SMS.",
                ),
            ),
            _DuplicateCluster(
                "episodic",
                (
                    "On 2025-05-19 Tomasz Nowak from Harbor & Vine reported 37 parcels stuck at the Memphis hub; we re-scanned batch MEM-5521 and they moved.",
                    "On 2025-05-19 Tomasz Nowak of Harbor & Vine reported 37 parcels stuck at the Memphis hub; re-scanning batch MEM-5521 got them moving.",
                ),
            ),
        ),
        distinct=(
            (
                "semantic",
                "Harbor & Vine opened a second warehouse, HV-DAL-01 in Dallas, for West Coast orders in March 2025.",
                "Harbor & Vine's customs broker is Castillo Trade Partners; HS codes for wine start with 2204.",
            ),
            (
                "procedural",
                "To reprint a damaged label, open https://ops.globex.example/labels, search the tracking number and print on the Zebra ZT410.",
                "To cancel a shipment before pickup, void the label in the Globex TMS and email the carrier booking reference to dispatch.",
            ),
        ),
        chain=(
            "procedural",
            (
                "For hazmat shipments, attach the UN3480 lithium battery declaration and book the carrier at least 48 hours ahead in the carrier portal.",
                "For hazmat shipments, attach the UN3480 lithium battery declaration and book the carrier at least 48 hours ahead in the carrier portal and print orange placards.",
                "For hazmat shipments, attach the UN3480 lithium battery declaration and book the carrier at least 48 hours ahead and print orange placards.",
            ),
        ),
    ),
    ("globex", "research"): _PlantedTexts(
        clusters=(
            _DuplicateCluster(
                "semantic",
                (
                    "Temporal Fusion Transformers (Lim et al., 2021) report a P50 loss of 0.069 on the electricity benchmark; the code is at https://github.com/google-research/google-research.",
                    "Temporal Fusion Transformers (Lim et al., 2021) reports a P50 loss of 0.069 on the electricity benchmark, and the code is at https://github.com/google-research/google-research.",
                ),
                flag_first="verified",
            ),
            _DuplicateCluster(
                "episodic",
                (
                    "exp-0412: LightGBM with 400 leaves and learning rate 0.05 reached MAPE 11.8% on shipments-2024 hub volumes.",
                    "exp-0412: LightGBM with 400 leaves and a learning rate of 0.05 reached a MAPE of 11.8% on the shipments-2024 hub volumes.",
                    "In exp-0412, LightGBM with 400 leaves and learning rate 0.05 reached MAPE 11.8% on shipments-2024 hub volumes.",
                ),
            ),
            _DuplicateCluster(
                "preference",
                (
                    "Ingrid Solberg wants every forecast chart to show the 80% prediction interval and last year's actuals as a grey line.",
                    "Ingrid Solberg wants each forecast chart to show the 80% prediction interval, with last year's actuals as a grey line.",
                ),
            ),
        ),
        distinct=(
            (
                "episodic",
                "exp-0413: LightGBM with 800 leaves and learning rate 0.02 overfit, MAPE 14.1% on shipments-2024 hub volumes.",
                "exp-0419: DeepAR with 3 layers and 40 hidden units reached MAPE 12.6% on carrier-eta-v3 but took 5 hours to train.",
            ),
            (
                "semantic",
                "Temporal Fusion Transformers need static covariates per series; our hub metadata table hub_static_v2 provides them.",
                "N-BEATS (Oreshkin et al., 2020) has no covariates at all, so it cannot use weather or holiday features.",
            ),
        ),
        chain=(
            "semantic",
            (
                "The weather-joined-v2 dataset joins NOAA daily weather to hub volumes by hub_id and date and forward-fills gaps.",
                "The weather-joined-v2 dataset joins NOAA daily weather to hub volumes by hub_id and date and forward-fills gaps and is refreshed nightly.",
                "The weather-joined-v2 dataset joins NOAA daily weather to hub volumes by hub_id and date and is refreshed nightly.",
            ),
        ),
        cross_type_text=(
            "Never evaluate forecasts on the Christmas weeks; they are excluded from every benchmark split.",
            "semantic",
            "procedural",
        ),
    ),
    ("initech", "sales-assistant"): _PlantedTexts(
        clusters=(
            _DuplicateCluster(
                "semantic",
                (
                    "Penrose Logistics runs Initech TPS Suite 7.2 on-prem for 1,200 users and renews on 2026-01-31.",
                    "Penrose Logistics runs Initech TPS Suite 7.2 on-prem for 1,200 users; their renewal is on 2026-01-31.",
                ),
                flag_first="pinned",
            ),
            _DuplicateCluster(
                "preference",
                (
                    "Bill Lumbergh wants every TPS proposal to include the new cover sheet and a summary of the cover sheet changes.",
                    "Bill Lumbergh wants every TPS proposal to include the new cover sheet plus a summary of the cover sheet changes.",
                    "Bill Lumbergh wants each TPS proposal to include the new cover sheet and a summary of all cover sheet changes.",
                ),
            ),
            _DuplicateCluster(
                "episodic",
                (
                    "Demo for Halcyon Hotels on 2025-04-22 went well; Nina Park asked about SAML SSO and the audit log export to Splunk.",
                    "The Halcyon Hotels demo on 2025-04-22 went well, and Nina Park asked about SAML SSO and exporting the audit log to Splunk.",
                ),
            ),
        ),
        distinct=(
            (
                "semantic",
                "Penrose Logistics wants to move from on-prem TPS Suite 7.2 to the cloud edition once their data-centre lease ends in 2027.",
                "Penrose Logistics pays $96,000 per year; their finance contact Oleg Brandt approves anything above $10,000.",
            ),
            (
                "episodic",
                "Demo for Halcyon Hotels on 2025-05-06 covered the mobile approval app; Nina Park wants a pilot at the Lisbon property.",
                "Halcyon Hotels' security review on 2025-05-20 flagged missing SCIM support; engineering promised it for release 8.0.",
            ),
        ),
        cross_type_text=(
            "Penrose Logistics only accepts quotes that are valid for at least 90 days.",
            "semantic",
            "preference",
        ),
    ),
    ("initech", "research"): _PlantedTexts(
        clusters=(
            _DuplicateCluster(
                "episodic",
                (
                    "Benchmark 2025-03-02: tpsd 4.1 served 41,000 requests/s at p99 18 ms on c7g.4xlarge with the LSM storage engine.",
                    "Benchmark 2025-03-02: tpsd 4.1 served 41,000 requests/s with p99 at 18 ms on c7g.4xlarge using the LSM storage engine.",
                ),
                flag_first="verified",
            ),
            _DuplicateCluster(
                "procedural",
                (
                    "To profile tpsd, run `itc-bench profile --duration 60s --out prof.pb.gz` and open the result with `go tool pprof -http :8080 prof.pb.gz`.",
                    "To profile tpsd: run `itc-bench profile --duration 60s --out prof.pb.gz`, then open the result with `go tool pprof -http :8080 prof.pb.gz`.",
                    "To profile tpsd, run `itc-bench profile --duration 60s --out prof.pb.gz` and then open it with `go tool pprof -http :8080 prof.pb.gz`.",
                ),
            ),
            _DuplicateCluster(
                "semantic",
                (
                    "compact_level in tpsd/storage/compaction.rs holds the write lock during the whole merge, which causes the p99 spikes under YCSB-A.",
                    "compact_level in tpsd/storage/compaction.rs holds the write lock for the whole merge, which is what causes the p99 spikes under YCSB-A.",
                ),
            ),
        ),
        distinct=(
            (
                "episodic",
                "Benchmark 2025-03-09: tpsd 4.2 served 52,500 requests/s at p99 11 ms on c7g.4xlarge after the lock-free memtable change.",
                "Benchmark 2025-03-16: tpsd 4.2 with the B-tree engine served 23,000 requests/s at p99 45 ms on m6i.8xlarge.",
            ),
            (
                "semantic",
                "merge_runs in tpsd/storage/compaction.rs allocates a new buffer per run; pooling them saved 9% CPU in prof-20911.",
                "parse_tps_header in tpsd/ingest/parser.rs rejects cover sheets older than format version 3 with error TPS-E17.",
            ),
        ),
        chain=(
            "semantic",
            (
                "Learned index v2 answers point lookups 2.3x faster than the B-tree on tpc-c-100w but must be retrained after bulk loads.",
                "Learned index v2 answers point lookups 2.3x faster than the B-tree on tpc-c-100w but must be retrained after bulk loads, while range scans are much slower.",
                "Learned index v2 answers point lookups 2.3x faster than the B-tree on tpc-c-100w, while range scans are much slower.",
            ),
        ),
        cross_type_text=(
            "Always warm the page cache for 5 minutes before recording a benchmark on the perf cluster.",
            "semantic",
            "procedural",
        ),
    ),
}

# (source namespace, cluster index, target namespace): the first text of that cluster is also
# stored, verbatim, in another tenant's namespace. A customer of two vendors really does end up
# in both memories, and the pipeline must never merge across that boundary.
_CROSS_TENANT_COPIES: tuple[tuple[tuple[str, str], int, tuple[str, str]], ...] = (
    (("acme", "support-bot"), 0, ("globex", "support-bot")),
    (("acme", "sales-assistant"), 0, ("initech", "sales-assistant")),
)


# --------------------------------------------------------------------------------------------
# Writing one namespace: texts from templates, and metadata profiles saying which curation rule
# a node should (or should just not) trigger.
# --------------------------------------------------------------------------------------------


class _NamespaceWriter:
    """Generates the nodes of one namespace with its own random stream."""

    def __init__(self, spec: SeedNamespace, now: datetime, seed: int, corpus: _CorpusDraft) -> None:
        self.spec = spec
        self.now = now
        # A string seed is hashed deterministically (not with the salted hash()), and one stream
        # per namespace keeps a change in one namespace from reshuffling all the others.
        self.rng = random.Random(f"seed-corpus:{seed}:{spec.tenant_id}/{spec.namespace}")
        self.corpus = corpus
        self.templates = list(_TEMPLATES[spec.domain])
        self.template_deck: list[tuple[str, str]] = []
        self.used_subjects: set[tuple[str, str | None]] = set()
        self.pools: dict[str, Any] = {
            **_COMMON_POOLS,
            **_GENERATED_POOLS,
            **_dates(now),
            **_DOMAIN_POOLS[spec.domain],
            **_NAMESPACE_POOLS[spec.key],
        }

    # ---- ids and times ----------------------------------------------------------------

    def new_id(self) -> uuid.UUID:
        return uuid.UUID(int=self.rng.getrandbits(128), version=4)

    def days_ago(self, low: float, high: float) -> datetime:
        return self.now - timedelta(seconds=round(self.rng.uniform(low, high) * 86_400))

    # ---- texts ------------------------------------------------------------------------

    def fill(self, template: str, slots: dict[str, str] | None = None) -> str:
        return template.format_map(_Slots(self.pools, self.rng, slots or {}))

    def background_text(self) -> tuple[str, str]:
        """(memory_type, text) from the next template of a shuffled deck.

        Dealing templates like cards spreads them evenly, so no template is repeated often
        enough inside one namespace to produce accidental near-duplicates.
        """
        if not self.template_deck:
            self.template_deck = self.rng.sample(self.templates, len(self.templates))
        memory_type, template = self.template_deck.pop()
        # Two memories from one template about the same customer or person read like versions
        # of one fact; redraw so that background memories stay clearly distinct.
        for _ in range(20):
            slots = _Slots(self.pools, self.rng, {})
            text = template.format_map(slots)
            subject = (template, next((slots[key] for key in _ENTITY_SLOTS if key in slots), None))
            if subject not in self.used_subjects:
                break
        self.used_subjects.add(subject)
        return memory_type, text

    def verbose_text(self, minimum_length: int = _VERBOSE_LENGTH + 40) -> str:
        slots = _Slots(self.pools, self.rng, {})
        text = _NOTE_HEADERS[self.spec.domain].format_map(slots)
        sentences = self.rng.sample(_NOTE_SENTENCES[self.spec.domain], len(_NOTE_SENTENCES[self.spec.domain]))
        for sentence in sentences:
            text += sentence.format_map(slots) + " "
            if len(text) > minimum_length:
                break
        return text.strip()

    def related_texts(self, count: int) -> list[str]:
        """Texts from one template about one entity, as successive versions of a memory are."""
        _, template = self.rng.choice(self.templates)
        shared = _Slots(self.pools, self.rng, {})
        template.format_map(shared)  # draw every slot once, then keep only the entity
        entity = {key: value for key, value in shared.items() if key in _ENTITY_SLOTS}
        return [self.fill(template, entity) for _ in range(count)]

    def merged_text(self, *, long: bool, nested: bool) -> str:
        """A text carrying ``[merged: ...]`` artifacts left by earlier offline merges.

        Merging an already merged node nests the artifact ("A [merged: B [merged: C]]");
        merging several nodes into one in turn appends them ("A [merged: B] [merged: C]").
        """
        count = 2
        while True:
            parts = self.related_texts(count)
            if nested:
                text = parts[-1]
                for part in reversed(parts[:-1]):
                    text = f"{part} [merged: {text}]"
            else:
                text = parts[0] + "".join(f" [merged: {part}]" for part in parts[1:])
            if not long or len(text) > _VERBOSE_LENGTH + 40:
                return text
            count += 1

    # ---- nodes ------------------------------------------------------------------------

    def add(self, text: str, memory_type: str, *, embed: bool = True, **metadata: Any) -> uuid.UUID:
        node = {
            "id": self.new_id(),
            "tenant_id": self.spec.tenant_id,
            "namespace": self.spec.namespace,
            "memory_type": memory_type,
            "pointer_summary": text,
            **self.healthy_metadata(),
            **metadata,
        }
        if node["recall_count"] == 0:
            node["last_recalled_at"] = None  # never recalled means no recall time either
        node["updated_at"] = max(
            moment
            for moment in (node["created_at"], node["last_recalled_at"], node["archived_at"])
            if moment is not None
        )
        node["_embed"] = embed
        self.corpus.nodes.append(node)
        return node["id"]

    def healthy_metadata(self) -> dict[str, Any]:
        """A memory in good standing: recalled recently, close to the current epoch."""
        created_at = self.days_ago(15, 400)
        return {
            "base_utility": round(self.rng.uniform(0.2, 0.95), 2),
            "heat": round(self.rng.uniform(0.05, 1.0), 3),
            "pinned": False,
            "recall_count": self.rng.randint(1, 40),
            "last_recalled_at": max(created_at, self.days_ago(0.02, 20)),
            "epoch": self.spec.current_epoch - self.rng.randint(0, 80),
            "confidence": "verified" if self.rng.random() < 0.15 else "default",
            "archived_at": None,
            "merged_into": None,
            "created_at": created_at,
            "superseded_by": None,
            "valid_until": None,
        }

    def never_recalled_old(self) -> dict[str, Any]:
        """Step 1 material: never recalled, and more than 100 epochs behind."""
        lag = self.rng.randint(_STALE_EPOCH_LAG + 1, self.spec.current_epoch)
        return {
            "recall_count": 0,
            "last_recalled_at": None,
            "epoch": self.spec.current_epoch - lag,
            "created_at": self.days_ago(60, 400),
            "heat": round(self.rng.uniform(0.0, 0.08), 3),
            "confidence": "default",
        }

    def not_recalled_for(self, low_days: float, high_days: float, confidence: str = "default") -> dict[str, Any]:
        """Recalled long ago (step 5 material when older than 30 days and confidence default)."""
        last_recalled_at = self.days_ago(low_days, high_days)
        return {
            "recall_count": self.rng.randint(1, 12),
            "last_recalled_at": last_recalled_at,
            "created_at": last_recalled_at - timedelta(days=self.rng.randint(5, 300)),
            "confidence": confidence,
        }


class _Slots(dict[str, str]):
    """format_map mapping that draws each slot from its pool on first use.

    ``person`` and ``person2`` come from the same pool but are drawn to differ, so a template
    never says "escalate from Ana to Ana".
    """

    def __init__(self, pools: Mapping[str, Any], rng: random.Random, preset: Mapping[str, str]) -> None:
        super().__init__(preset)
        self.pools = pools
        self.rng = rng

    def __missing__(self, key: str) -> str:
        pool = self.pools[key.rstrip("0123456789")]
        value = ""
        for _ in range(20):
            value = pool(self.rng, self) if callable(pool) else self.rng.choice(pool)
            if value not in self.values():
                break
        self[key] = value
        return value


@dataclass
class _CorpusDraft:
    nodes: list[dict[str, Any]] = field(default_factory=list)
    duplicate_groups: list[tuple[uuid.UUID, ...]] = field(default_factory=list)
    chains: list[tuple[uuid.UUID, uuid.UUID, uuid.UUID]] = field(default_factory=list)
    distinct_pairs: list[tuple[uuid.UUID, uuid.UUID]] = field(default_factory=list)
    cross_type_twins: list[tuple[uuid.UUID, uuid.UUID]] = field(default_factory=list)
    cross_tenant_twins: list[tuple[uuid.UUID, uuid.UUID]] = field(default_factory=list)
    updates: list[tuple[uuid.UUID, uuid.UUID]] = field(default_factory=list)


# (memory_type, older text, newer text): an agent wrote a memory, and weeks later wrote the new
# value of the same thing. Step 2 marks the older one superseded by the newer one.
_PLANTED_UPDATES: dict[tuple[str, str], tuple[tuple[str, str, str], ...]] = {
    ("acme", "support-bot"): (
        ("semantic", "The Brightline Dental support plan includes 40 tickets per month.",
         "The Brightline Dental support plan now includes 60 tickets per month."),
        ("procedural", "The weekly support sync with Harbor & Vine is on Tuesdays at 15:00 CET.",
         "The weekly support sync with Harbor & Vine moved to Thursdays at 15:00 CET."),
        # An event, not the old sentence with a new value: the stop "left" ends the employment.
        ("semantic", "Tomasz Nowak works at Harbor & Vine.",
         "Tomasz Nowak left Harbor & Vine and joined Orbital Foods."),
    ),
    ("acme", "sales-assistant"): (
        ("semantic", "The Orbital Foods renewal call is scheduled for 2025-03-14.",
         "The Orbital Foods renewal call is now scheduled for 2025-03-21."),
        ("semantic", "Kestrel Aviation's procurement contact is Hiro Tanaka.",
         "Kestrel Aviation's procurement contact is now Mei Sato."),
    ),
    ("globex", "support-bot"): (
        ("semantic", "The Globex status page is hosted at https://status.globex.example/v1.",
         "The Globex status page is now hosted at https://status.globex.example/v2."),
        ("procedural", "Globex support uses Zendesk for ticket routing.",
         "Globex support no longer uses Zendesk for ticket routing."),
    ),
    ("globex", "research"): (
        ("semantic", "The churn model retrains every Monday at 02:00 UTC.",
         "The churn model now retrains every Wednesday at 02:00 UTC."),
        ("semantic", "The feature store runs on Postgres 15.", "The feature store runs on Postgres 16."),
    ),
    ("initech", "sales-assistant"): (
        ("semantic", "The Initech discount ceiling for renewals is 12% of the list price.",
         "The Initech discount ceiling for renewals is now 15% of the list price."),
        ("semantic", "Dana Reyes at Initech is on the evaluation committee.",
         "Dana Reyes at Initech is no longer on the evaluation committee."),
    ),
    ("initech", "research"): (
        ("semantic", "The TPS benchmark cluster has 8 nodes.", "The TPS benchmark cluster has 12 nodes."),
        ("semantic", "The TPS project tracks experiments in MLflow.",
         "The TPS project now tracks experiments in Weights & Biases."),
    ),
}


# --------------------------------------------------------------------------------------------
# What each namespace gets
# --------------------------------------------------------------------------------------------


def _plant_duplicates(writer: _NamespaceWriter, planted: _PlantedTexts) -> dict[int, uuid.UUID]:
    """Near-duplicate clusters, chain and same-topic distinct memories; returns first ids."""
    first_ids: dict[int, uuid.UUID] = {}
    first_id_of_type: dict[str, uuid.UUID] = {}
    for index, cluster in enumerate(planted.clusters):
        ids = []
        for position, text in enumerate(cluster.texts):
            flags: dict[str, Any] = {}
            if position == 0 and cluster.flag_first == "pinned":
                flags["pinned"] = True
            if position == 0 and cluster.flag_first == "verified":
                flags["confidence"] = "verified"
            if position > 0:
                flags["confidence"] = "default"  # the flagged one must be the odd one out
            ids.append(writer.add(text, cluster.memory_type, **flags))
        writer.corpus.duplicate_groups.append(tuple(ids))
        first_ids[index] = ids[0]
        first_id_of_type[cluster.memory_type] = ids[0]

    for memory_type, first, second in planted.distinct:
        pair = (writer.add(first, memory_type), writer.add(second, memory_type))
        writer.corpus.distinct_pairs.append(pair)
        cluster_id = first_id_of_type[memory_type]
        writer.corpus.distinct_pairs.extend((cluster_id, node_id) for node_id in pair)

    if planted.chain is not None:
        memory_type, texts = planted.chain
        a, b, c = (writer.add(text, memory_type) for text in texts)
        writer.corpus.chains.append((a, b, c))

    if planted.cross_type_text is not None:
        text, first_type, second_type = planted.cross_type_text
        twins = (writer.add(text, first_type), writer.add(text, second_type))
        writer.corpus.cross_type_twins.append(twins)
    return first_ids


def _plant_updates(writer: _NamespaceWriter) -> None:
    """Step 2's supersession material: a memory, and weeks later its new value."""
    for memory_type, older_text, newer_text in _PLANTED_UPDATES[writer.spec.key]:
        # Both recalled lately (neither goes stale in step 5): only step 2 acts on them.
        older = writer.add(older_text, memory_type, created_at=writer.days_ago(40, 90),
                           last_recalled_at=writer.days_ago(0.5, 1.5), recall_count=3, confidence="default")
        newer = writer.add(newer_text, memory_type, created_at=writer.days_ago(2, 10),
                           last_recalled_at=writer.days_ago(0.1, 0.4), recall_count=1, confidence="default")
        writer.corpus.updates.append((older, newer))


def _plant_verbose_and_merged(writer: _NamespaceWriter) -> None:
    """Step 3 material, and its boundary cases."""
    for _ in range(3):  # long and rarely recalled: summarize
        writer.add(writer.verbose_text(), "episodic", recall_count=writer.rng.randint(0, _FREQUENT_RECALLS - 1))
    # Long but often recalled and without merge artifacts: leave alone.
    writer.add(writer.verbose_text(), "episodic", recall_count=writer.rng.randint(_FREQUENT_RECALLS, 20))
    # Long merge artifacts, often recalled: summarize because of the artifacts.
    for nested in (True, False):
        writer.add(
            writer.merged_text(long=True, nested=nested),
            "semantic",
            recall_count=writer.rng.randint(_FREQUENT_RECALLS, 30),
        )
    # A short merged text: nothing to condense.
    writer.add(writer.merged_text(long=False, nested=False), "semantic", recall_count=writer.rng.randint(3, 15))


def _plant_stale(writer: _NamespaceWriter) -> None:
    """Steps 1 and 5 material, and their boundary cases."""
    for _ in range(4):  # never recalled, > 100 epochs behind: reclassify
        memory_type, text = writer.background_text()
        writer.add(text, memory_type, **writer.never_recalled_old())
    # Never recalled but exactly 100 epochs behind, and a brand-new one: not yet stale.
    memory_type, text = writer.background_text()
    writer.add(
        text, memory_type, recall_count=0, last_recalled_at=None,
        epoch=writer.spec.current_epoch - _STALE_EPOCH_LAG, created_at=writer.days_ago(5, 20),
    )
    memory_type, text = writer.background_text()
    writer.add(
        text, memory_type, recall_count=0, last_recalled_at=None,
        epoch=writer.spec.current_epoch - writer.rng.randint(0, 5), created_at=writer.days_ago(0.1, 3),
    )

    for _ in range(4):  # not recalled for 30+ days, default confidence: mark stale
        memory_type, text = writer.background_text()
        writer.add(text, memory_type, **writer.not_recalled_for(31, 240))
    memory_type, text = writer.background_text()  # old but verified: keep
    writer.add(text, memory_type, **writer.not_recalled_for(45, 200, confidence="verified"))
    memory_type, text = writer.background_text()  # already stale: nothing to do
    writer.add(text, memory_type, **writer.not_recalled_for(60, 300, confidence="stale"))
    memory_type, text = writer.background_text()  # 29 days: not yet
    writer.add(text, memory_type, **writer.not_recalled_for(28.5, 29.5))


def _plant_missing_embeddings_and_history(writer: _NamespaceWriter) -> None:
    """Step 4 material, pinned and verified background, and one already archived merge."""
    for _ in range(3):
        memory_type, text = writer.background_text()
        writer.add(text, memory_type, embed=False)
    memory_type, text = writer.background_text()
    writer.add(text, memory_type, pinned=True, base_utility=0.95)
    memory_type, text = writer.background_text()
    writer.add(text, memory_type, confidence="verified")

    # An earlier cycle merged `older` into `survivor`: the survivor carries the artifact and
    # the archived node points to it. Archived nodes are no candidates for any step.
    older, base = writer.related_texts(2)
    survivor = writer.add(f"{base} [merged: {older}]", "semantic", recall_count=writer.rng.randint(3, 20))
    archived_at = writer.days_ago(2, 25)
    writer.add(
        older, "semantic", archived_at=archived_at, merged_into=survivor,
        created_at=archived_at - timedelta(days=writer.rng.randint(10, 200)),
        last_recalled_at=archived_at - timedelta(days=writer.rng.randint(1, 9)),
    )


def _write_background(writer: _NamespaceWriter) -> None:
    for _ in range(_BACKGROUND_NODES_PER_NAMESPACE):
        memory_type, text = writer.background_text()
        writer.add(text, memory_type)


def _namespace_activity(spec: SeedNamespace, now: datetime) -> dict[str, Any]:
    return {
        "tenant_id": spec.tenant_id,
        "namespace": spec.namespace,
        "current_epoch": spec.current_epoch,
        "last_interaction_at": now - spec.idle_for,
    }


def _copy_across_tenants(draft: _CorpusDraft, first_ids: dict[tuple[str, str], dict[int, uuid.UUID]], writers: dict[tuple[str, str], _NamespaceWriter]) -> None:
    nodes_by_id = {node["id"]: node for node in draft.nodes}
    for source_key, cluster_index, target_key in _CROSS_TENANT_COPIES:
        source = nodes_by_id[first_ids[source_key][cluster_index]]
        copy_id = writers[target_key].add(source["pointer_summary"], source["memory_type"])
        draft.cross_tenant_twins.append((source["id"], copy_id))


def build_seed_corpus(*, now: datetime, seed: int = 7) -> SeedCorpus:
    """The demo corpus and its manifest of planted situations (see the module docstring)."""
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be a timezone-aware datetime")
    draft = _CorpusDraft()
    writers = {spec.key: _NamespaceWriter(spec, now, seed, draft) for spec in SEED_NAMESPACES}
    first_ids: dict[tuple[str, str], dict[int, uuid.UUID]] = {}
    for spec in SEED_NAMESPACES:
        writer = writers[spec.key]
        first_ids[spec.key] = _plant_duplicates(writer, _PLANTED[spec.key])
        _plant_updates(writer)
        _plant_verbose_and_merged(writer)
        _plant_stale(writer)
        _plant_missing_embeddings_and_history(writer)
        _write_background(writer)
    _copy_across_tenants(draft, first_ids, writers)

    # Rows in creation order, as an agent would have written them.
    nodes = sorted(draft.nodes, key=lambda node: (node["created_at"], str(node["id"])))
    return SeedCorpus(
        nodes=nodes,
        namespace_activity=[_namespace_activity(spec, now) for spec in SEED_NAMESPACES],
        duplicate_groups=draft.duplicate_groups,
        chains=draft.chains,
        distinct_pairs=draft.distinct_pairs,
        cross_type_twins=draft.cross_type_twins,
        cross_tenant_twins=draft.cross_tenant_twins,
        updates=draft.updates,
    )


def generate_seed_corpus(*, now: datetime, seed: int = 7) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(nodes, namespace_activity)`` of the demo corpus.

    Nodes have no ``embedding``; embed those whose ``_embed`` is true and drop ``_embed``
    before inserting. ``namespace_activity`` rows are ``{tenant_id, namespace, current_epoch,
    last_interaction_at}``.
    """
    corpus = build_seed_corpus(now=now, seed=seed)
    return corpus.nodes, corpus.namespace_activity
