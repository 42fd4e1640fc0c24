"""The `curation-pipeline` command."""

from __future__ import annotations

import argparse
import sys
import uuid
from pathlib import Path

from curation_pipeline.config.settings import (
    Settings,
    SettingsError,
    check_all_settings,
    load_settings,
)


def _settings() -> Settings:
    return load_settings()


def _settings_for_runs() -> Settings:
    """The settings, after checking every one a run reads (the LLM's and the embedder's too):
    a command that launches runs refuses a bad value before anything is launched."""
    check_all_settings()
    return load_settings()


def cmd_init_db(args) -> int:
    from curation_pipeline.cli.dagster_home import prepare_dagster_home
    from curation_pipeline.service.memory_store import shown_url

    settings = _settings()
    home = prepare_dagster_home(settings)
    print(f"memory store ready: {shown_url(settings)}")
    print(f"Dagster home: {home}")
    return 0


PRINTED_PROBLEMS = 50
"""How many of an import's problems are printed (all are counted, and all bad lines skipped)."""


def cmd_import(args) -> int:
    from curation_pipeline.cli.progress import Progress
    from curation_pipeline.core.partition_keys import validate_name
    from curation_pipeline.service.memory_store import connect
    from curation_pipeline.service.node_import import import_jsonl_file

    settings = _settings()
    path = Path(args.file)
    if not path.exists() or path.is_dir():  # fail before starting the database
        reason = "it is a directory" if path.is_dir() else "no such file"
        print(f"error: cannot read {path}: {reason}", file=sys.stderr)
        return 2
    with connect(settings) as conn:
        try:
            report = import_jsonl_file(
                conn, path, dimension=settings.embedding_dim, validate_name=validate_name,
                skip_invalid=args.skip_invalid, keep_problems=PRINTED_PROBLEMS,
                progress=lambda label, total: Progress(label, total=total, unit="row"),
            )
        except OSError as error:
            print(f"error: cannot read {path}: {error}", file=sys.stderr)
            return 2
    problems, warnings = report.problems, report.warnings
    for error in problems.first():
        print(f"{path}:{error.line}: {error.message}", file=sys.stderr)
    if problems.not_shown:
        print(f"... and {problems.not_shown} more problem(s)", file=sys.stderr)
    for warning in warnings.first():
        print(f"{path}:{warning.line}: warning: {warning.message}", file=sys.stderr)
    if warnings:
        print(f"{'... and ' + str(warnings.not_shown) + ' more; ' if warnings.not_shown else ''}"
              f"{warnings.count} merge link(s) do not end at an active node of their namespace: "
              + ("they were imported as the file has them (the no_orphaned_archives check names them "
                 "after the namespace's next cycle)" if report.written else "they would be imported as they are"),
              file=sys.stderr)
    bad_lines = len(problems.bad_lines)
    if not report.written:
        print(
            f"error: {problems.count} problem(s) on {bad_lines} line(s) of {path}; nothing was imported "
            "(fix them, or pass --skip-invalid to import the valid lines only)",
            file=sys.stderr,
        )
        return 1
    print(f"imported {report.imported} memory node(s) from {path}"
          + (f"; skipped {bad_lines} invalid line(s)" if bad_lines else ""))
    return 0


def cmd_export(args) -> int:
    import os
    import tempfile
    from contextlib import nullcontext

    from curation_pipeline.cli.progress import Progress
    from curation_pipeline.core.jsonl_rows import format_node_jsonl
    from curation_pipeline.service.inspection import nodes_to_export

    settings = _settings()
    target = Path(args.output) if args.output else None
    if target is not None and target.is_dir():  # before the database starts, and no temporary file
        print(f"error: cannot write {target}: it is a directory", file=sys.stderr)
        return 2
    try:
        # A file is written under a temporary name and renamed when complete: a failed export
        # never leaves a half-written file behind, nor half overwrites an earlier export.
        out = (tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=target.parent,
                                           prefix=f".{target.name}.", suffix=".tmp", delete=False)
               if target else sys.stdout)
    except OSError as error:
        print(f"error: cannot write {target}: {error}", file=sys.stderr)
        return 2
    # On a terminal the exported lines themselves show the progress; a bar would garble them.
    quiet = out is sys.stdout and sys.stdout.isatty()
    refused = UnexportableRows()
    try:
        with nodes_to_export(settings, tenant_id=args.tenant, namespace=args.namespace) as (total, rows), \
                open(os.devnull, "w") if quiet else nullcontext() as silenced:
            with Progress("exporting", total=total, unit="row", stream=silenced) as progress:
                for row in rows:
                    if row["unexportable"]:
                        # Named, every one of them; nothing more is written, the rest is read
                        # only to name the others too.
                        refused.add(row["id"], row["unexportable"])
                    elif not refused:
                        out.write(format_node_jsonl(row) + "\n")
                    progress.advance()
        if refused:
            refused.report(target)
            if target:
                out.close()
                Path(out.name).unlink(missing_ok=True)
            return 2
        if target:
            out.close()
            os.replace(out.name, target)
    except BrokenPipeError:
        raise  # the reader left (`export | head`): main() ends quietly
    except BaseException as error:
        if target:
            out.close()
            Path(out.name).unlink(missing_ok=True)
        if isinstance(error, (ValueError, OSError)):  # a value JSON cannot carry; a file not writable
            print(f"error: {error}; " + (f"{target} was not written" if target else "the export is incomplete"),
                  file=sys.stderr)
            return 2
        raise
    print(f"exported {progress.done} memory node(s)" + (f" to {target}" if target else ""), file=sys.stderr)
    return 0


class UnexportableRows:
    """The rows an export cannot carry: every one counted, the first PRINTED_PROBLEMS values named."""

    def __init__(self) -> None:
        self.rows = 0
        self.lines: list[str] = []

    def __bool__(self) -> bool:
        return self.rows > 0

    def add(self, node_id, values: list[str]) -> None:
        self.rows += 1
        for value in values:
            if len(self.lines) < PRINTED_PROBLEMS:
                self.lines.append(f"node {node_id}: {value}, which the JSONL format cannot carry "
                                  "(JSON has no NaN or infinity; timestamps fall in the years 1 to 9999)")

    def report(self, target: Path | None) -> None:
        for line in self.lines:
            print(line, file=sys.stderr)
        print(f"error: {self.rows} node(s) cannot be exported; "
              + (f"{target} was not written" if target else "the export is incomplete"), file=sys.stderr)


def cmd_seed(args) -> int:
    from curation_pipeline.cli.progress import Progress
    from curation_pipeline.demo.seeding import seed_store

    count = seed_store(_settings(), progress=lambda label, total: Progress(label, total=total, unit="row"))
    print(f"seeded {count} memory node(s)" if count else "the demo corpus is already seeded")
    return 0


def cmd_namespaces(args) -> int:
    from curation_pipeline.service.namespaces import discover_partition_keys

    settings = _settings()
    if args.action in ("enable", "disable"):
        return _switch_namespace(settings, args.key, enabled=args.action == "enable")
    if args.action == "remove":
        return _remove_namespace(settings, args.key)
    keys, problems = discover_partition_keys(settings)
    for problem in problems:
        print(problem, file=sys.stderr)
    if args.action == "sync":
        import dagster as dg

        from curation_pipeline.cli.dagster_home import prepare_dagster_home
        from curation_pipeline.defs.partitions import register_partitions

        prepare_dagster_home(settings)
        with dg.DagsterInstance.get() as instance:
            new = register_partitions(instance, keys)
        print(f"registered {len(new)} new namespace partition(s); {len(keys)} in all")
    else:
        print("\n".join(keys))
    return 0


def _registered_partitions(settings: Settings) -> set[str]:
    import dagster as dg

    from curation_pipeline.cli.dagster_home import prepare_dagster_home
    from curation_pipeline.defs.partitions import registered_partitions

    prepare_dagster_home(settings)
    with dg.DagsterInstance.get() as instance:
        return registered_partitions(instance)


def _remove_namespace(settings: Settings, key: str | None) -> int:
    """Retire a namespace's Dagster partition; its memory stays (see service/namespaces.py)."""
    import dagster as dg

    from curation_pipeline.defs.partitions import remove_partition
    from curation_pipeline.service.namespaces import retire_namespace

    if key is None:
        print("error: name the namespace: curation-pipeline namespaces remove TENANT:NAMESPACE", file=sys.stderr)
        return 2
    kept = retire_namespace(settings, key, _registered_partitions(settings))
    with dg.DagsterInstance.get() as instance:
        remove_partition(instance, key)
    print(f"removed {key} from Dagster's partitions; its {kept} memory node(s) kept, untouched. "
          "It comes back with `run --partition KEY --create`, an import into it, or when its "
          "memory is written again")
    return 0


def _switch_namespace(settings: Settings, key: str | None, *, enabled: bool) -> int:
    """The per-namespace off switch: the triggers request no runs for a disabled namespace."""
    from curation_pipeline.service.inspection import set_curation_enabled

    if key is None:
        print("error: name the namespace: curation-pipeline namespaces enable|disable TENANT:NAMESPACE",
              file=sys.stderr)
        return 2
    set_curation_enabled(settings, key, enabled=enabled)
    print(f"curation {'enabled' if enabled else 'disabled'} for {key}")
    return 0


MAX_PARALLEL_RUNS = 4  # run processes at once (cli/runner.py: a large --all forks no more)


def _run_and_report(
    settings: Settings, keys: list[str], *, verbose: bool = False, dry_run: bool = False,
    workers_checked: bool = False,
) -> int:
    from curation_pipeline.cli.progress import Progress
    from curation_pipeline.cli.runner import (
        RunsStopped,
        require_workers,
        run_partitions,
        unique_keys,
    )
    from curation_pipeline.core.render.tables import cycle_table, failures
    from curation_pipeline.service.steps.registry import STEPS

    keys = unique_keys(keys)  # a namespace named twice is curated (and counted) once
    if not keys:
        print("no namespaces to curate (import or seed some memories first)")
        return 0
    if not workers_checked:
        require_workers(settings)
    stopped = None
    label = "previewing" if dry_run else "curating"
    # Dagster's code server and the first run processes take seconds to start (tens on a busy
    # machine): say so at once, then a line per run started, so the wait is never silent.
    print(f"{label} {len(keys)} namespace(s), up to {MAX_PARALLEL_RUNS} at a time: starting Dagster's "
          "code server, then one run process per namespace", file=sys.stderr, flush=True)
    # Runs take seconds each: a plain line per finished run, not every few seconds.
    with Progress(label, total=len(keys), unit="namespace", every_secs=0) as progress:
        try:
            results = run_partitions(
                settings, keys, verbose=verbose, dry_run=dry_run, max_parallel=MAX_PARALLEL_RUNS,
                on_started=lambda key, run_id: progress.note(f"started {key} (run {run_id})"),
                on_finished=lambda result: progress.advance(failed=0 if result.succeeded else 1),
            )
        except RunsStopped as stop:
            stopped, results = stop, stop.finished
    cycles = [(r.partition_key, r.run_id, r.run_status, r.metadata) for r in results]
    if dry_run:
        from curation_pipeline.core.render.changes import preview_text

        print("DRY RUN: nothing was written; this is what a real run would do now.\n")
        for result in results:
            print(preview_text(result.partition_key, result.metadata or {}, STEPS) + "\n")
    print(cycle_table(cycles, STEPS))
    for line in failures(cycles):
        print(f"failed: {line}", file=sys.stderr)
    print(f"\nruns are recorded in Dagster ({settings.dagster_home}); `curation-pipeline ui` shows them"
          + ("" if dry_run else "; undo one with `curation-pipeline undo --run RUN_ID`"))
    if stopped is not None:
        print(f"stopped by the operator: {len(results)} run(s) finished or canceled (above); "
              f"not started: {len(stopped.not_started)} namespace(s)"
              + (f": {', '.join(stopped.not_started)}" if stopped.not_started else ""), file=sys.stderr)
        return INTERRUPTED
    return 0 if all(r.succeeded for r in results) else 1


def cmd_run(args) -> int:
    from curation_pipeline.cli.runner import require_workers
    from curation_pipeline.service.namespaces import discover_partition_keys

    settings = _settings_for_runs()
    if args.all:
        keys, problems = discover_partition_keys(settings)
        for problem in problems:
            print(problem, file=sys.stderr)
    else:
        from curation_pipeline.core.partition_keys import parse_partition_key
        from curation_pipeline.service.namespaces import check_requested

        keys = list(args.partition)
        for key in keys:
            parse_partition_key(key)  # a malformed key says so before anything else
        require_workers(settings)  # before anything is prepared: no worker is the first thing to say
        # A typo must not become a partition for good: only known namespaces run, unless --create.
        check_requested(settings, keys, lambda: _registered_partitions(settings), create=args.create)
    return _run_and_report(settings, keys, verbose=args.verbose, dry_run=args.dry_run,
                           workers_checked=not args.all)


def cmd_demo(args) -> int:
    from curation_pipeline.demo.seeding import seed_store
    from curation_pipeline.service.memory_store import shown_url
    from curation_pipeline.service.namespaces import discover_partition_keys

    settings = _settings_for_runs()
    count = seed_store(settings)
    print(f"memory store: {shown_url(settings)}")
    print(f"seeded {count} memory node(s)" if count else "demo corpus already seeded")
    keys, _ = discover_partition_keys(settings)
    return _run_and_report(settings, keys)


def cmd_health(args) -> int:
    from curation_pipeline.core.partition_keys import parse_partition_key, partition_key
    from curation_pipeline.core.render.tables import health_table
    from curation_pipeline.service.inspection import recorded_cycles
    from curation_pipeline.service.steps.registry import STEPS

    tenant_id, namespace = parse_partition_key(args.partition) if args.partition else (None, None)
    cycles = recorded_cycles(_settings(), tenant_id=tenant_id, namespace=namespace, last=args.last)
    if not cycles:
        print("no curation cycle recorded yet" + (f" for {args.partition}" if args.partition else ""))
        return 0
    print(health_table(cycles, STEPS))
    # The latest cycle of each namespace decides the exit code: a failed check is worth an alert.
    latest = {(c["tenant_id"], c["namespace"]): c for c in cycles}
    failing = [(c, check) for c in latest.values() for check in c["checks"] if not check.get("passed")]
    for cycle, check in failing:
        key = partition_key(cycle["tenant_id"], cycle["namespace"])  # as --partition takes it
        print(f"failed check: {key} {check['name']}: "
              f"{check['description']}", file=sys.stderr)
    return 1 if failing else 0


def cmd_runs(args) -> int:
    from curation_pipeline.cli.run_history import recent_runs
    from curation_pipeline.core.render.tables import runs_table

    runs = recent_runs(_settings(), partition=args.partition, limit=args.limit)
    if not runs:
        print("no curation or undo run recorded yet" + (f" for {args.partition}" if args.partition else ""))
        return 0
    print(runs_table(runs))
    return 0


def _node_id(raw: str) -> str | None:
    """The node id `raw` spells (a UUID), or None after saying how to find one."""
    try:
        return str(uuid.UUID(raw))
    except ValueError:
        print(f"error: {raw!r} is not a node id (a UUID); find one with "
              "`curation-pipeline history --search TEXT`", file=sys.stderr)
        return None


def cmd_history(args) -> int:
    from curation_pipeline.core.render.history import format_history, format_search
    from curation_pipeline.service import history
    from curation_pipeline.service.memory_store import store_url

    if args.search is not None:
        url = store_url(_settings())
        print(format_search(args.search, history.search_nodes(url, args.search, args.partition)))
        return 0
    if args.node_id is None:
        print("error: name a node id, or find one with: curation-pipeline history --search TEXT",
              file=sys.stderr)
        return 2
    node_id = _node_id(args.node_id)
    if node_id is None:
        return 2
    found = history.node_history(store_url(_settings()), node_id)
    if found is None:
        print(f"error: no memory node {node_id}", file=sys.stderr)
        return 2
    print(format_history(node_id, found.revisions, found.merged, found.recall))
    return 0


def cmd_recall(args) -> int:
    from curation_pipeline.core.partition_keys import parse_partition_key
    from curation_pipeline.core.render.recall import format_recall
    from curation_pipeline.service.memory_client import MemoryClient

    tenant_id, namespace = parse_partition_key(args.partition)
    # An operator's look: no access recorded, no clock moved (an agent's recall does both).
    with MemoryClient(tenant_id, namespace, settings=_settings(), create=False) as client:
        found = client.recall(args.question, args.k, record=False)
        print(format_recall(args.partition, args.question, found, embedder=client.embedder_name))
    return 0


def cmd_mcp(args) -> int:
    from curation_pipeline.cli.mcp_server import serve
    from curation_pipeline.core.partition_keys import parse_partition_key

    tenant_id, namespace = parse_partition_key(args.namespace)
    serve(_settings(), tenant_id, namespace, create=args.create)
    return 0


def cmd_graph(args) -> int:
    from curation_pipeline.core.render.graph import format_neighbourhood
    from curation_pipeline.service.inspection import NoSuchNodeError, graph_neighbourhood

    node_id = _node_id(args.node_id)
    if node_id is None:
        return 2
    try:
        view = graph_neighbourhood(_settings(), node_id)
    except NoSuchNodeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if view is None:
        print(f"node {node_id} is not in the graph yet (step 6 syncs it on the next cycle)")
        return 0
    print(format_neighbourhood(node_id, view))
    return 0


def cmd_undo(args) -> int:
    from curation_pipeline.cli.runner import require_workers
    from curation_pipeline.cli.undo_runner import undo_through_dagster
    from curation_pipeline.core.render.tables import undo_table
    from curation_pipeline.core.render.undo import (
        forced_lines,
        left_alone_lines,
        nothing_to_undo,
        status_line,
    )
    from curation_pipeline.service.memory_store import store_url
    from curation_pipeline.service.undo import undone_by

    settings = _settings_for_runs()
    url = store_url(settings)
    require_workers(settings)  # the undo is a run too: on Celery, a worker must take it
    outcome = undo_through_dagster(settings, args.run, partition_key=args.namespace, force=args.force)
    reports = outcome.reports
    if all(report.status == "nothing" for report in reports):
        # Nothing was recorded (no empty undo to list or undo later): say who did it before.
        print(nothing_to_undo(args.run, undone_by(url, args.run)))
        return NOTHING_TO_UNDO
    reports = [report for report in reports if report.status != "nothing"]
    print(undo_table(reports))
    for line in forced_lines(reports):
        print(line)
    left_alone = left_alone_lines(reports)
    for line in left_alone:
        print(line, file=sys.stderr)
    print(status_line(reports))
    print(f"undo id: {reports[0].undo_id} (undo it with `curation-pipeline undo --run {reports[0].undo_id}`)")
    return 1 if left_alone else 0


def cmd_ui(args) -> int:
    from curation_pipeline.cli.ui import serve_ui

    return serve_ui(_settings_for_runs(), host=args.host, port=args.port, workers=args.workers)


def cmd_worker(args) -> int:
    from curation_pipeline.cli.worker import serve_worker

    return serve_worker(_settings_for_runs(), concurrency=args.concurrency, queues=args.queue)


def cmd_prune_runs(args) -> int:
    import dagster as dg

    from curation_pipeline.cli.dagster_home import prepare_dagster_home
    from curation_pipeline.defs.run_retention import prune_run_history

    settings = _settings()
    days = settings.run_retention_days if args.days is None else args.days
    if days == 0:
        print("run retention is off (CURATION_RUN_RETENTION_DAYS=0): nothing deleted")
        return 0
    prepare_dagster_home(settings)
    with dg.DagsterInstance.get() as instance:
        report = prune_run_history(instance, days=days, dry_run=args.dry_run)
    print(report.summary(dry_run=args.dry_run))
    return 0


MAX_LISTED = 1_000_000  # rows a listing may ask for: beyond it, a number is a typo (and overflows SQL)


def _positive(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    if value > MAX_LISTED:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_LISTED:,}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="curation-pipeline",
        description="Curate AI agents' long-term memory (Postgres + pgvector) with Dagster.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("init-db", help="create or migrate the memory store and Dagster home").set_defaults(func=cmd_init_db)

    importer = commands.add_parser("import", help="import memory nodes from a JSONL file")
    importer.add_argument("file")
    importer.add_argument("--skip-invalid", action="store_true", help="import the valid lines even if some are invalid")
    importer.set_defaults(func=cmd_import)

    exporter = commands.add_parser("export", help="write every memory node (archived ones too) as JSONL")
    exporter.add_argument("-o", "--output", help="file to write (default: standard output)")
    exporter.add_argument("--tenant")
    exporter.add_argument("--namespace")
    exporter.set_defaults(func=cmd_export)

    commands.add_parser("seed", help="load the demo corpus").set_defaults(func=cmd_seed)

    namespaces = commands.add_parser("namespaces", help="list namespace partition keys, or register them in Dagster")
    namespaces.add_argument("action", nargs="?", choices=["list", "sync", "enable", "disable", "remove"],
                            default="list")
    namespaces.add_argument("key", nargs="?", metavar="TENANT:NAMESPACE", help="for enable/disable/remove")
    namespaces.set_defaults(func=cmd_namespaces)

    runner = commands.add_parser("run", help="run the curation job through Dagster")
    target = runner.add_mutually_exclusive_group(required=True)
    target.add_argument("--all", action="store_true", help="every namespace in the store")
    target.add_argument("--partition", action="append", metavar="KEY", help="a partition key TENANT:NAMESPACE (repeatable)")
    runner.add_argument("-v", "--verbose", action="store_true", help="show the runs' Dagster logs here too")
    runner.add_argument("--dry-run", action="store_true", help="plan every step and show it; write nothing")
    runner.add_argument("--create", action="store_true",
                        help="curate a --partition the store does not know yet (else an error: a typo)")
    runner.set_defaults(func=cmd_run)

    commands.add_parser("demo", help="init, seed, curate every namespace, print the counts").set_defaults(func=cmd_demo)

    health = commands.add_parser("health", help="each namespace's health over its last cycles, and failed checks")
    health.add_argument("--partition", metavar="KEY", help="only this partition TENANT:NAMESPACE")
    health.add_argument("--last", type=_positive, default=5, metavar="N", help="cycles per namespace (default 5)")
    health.set_defaults(func=cmd_health)

    runs = commands.add_parser("runs", help="recent curation, preview and undo runs with their key counts")
    runs.add_argument("--partition", metavar="KEY", help="only this partition TENANT:NAMESPACE")
    runs.add_argument("--limit", type=_positive, default=20, metavar="N", help="how many (default 20)")
    runs.set_defaults(func=cmd_runs)

    history = commands.add_parser("history", help="every change the curator made to a node, and why")
    history.add_argument("node_id", nargs="?", help="the node's id (find one with --search)")
    history.add_argument("--search", metavar="TEXT", help="list the nodes whose text contains TEXT, with their ids")
    history.add_argument("--partition", metavar="TENANT:NAMESPACE", help="search only this namespace")
    history.set_defaults(func=cmd_history)

    recall = commands.add_parser("recall", help="what an agent's recall would get: ids, confidence, what superseded what")
    recall.add_argument("partition", metavar="TENANT:NAMESPACE")
    recall.add_argument("question")
    recall.add_argument("-k", type=int, default=5, help="how many memories (default 5)")
    recall.set_defaults(func=cmd_recall)

    mcp = commands.add_parser("mcp", help="serve a namespace's memory to agents over MCP (stdio): tools remember, recall")
    mcp.add_argument("--namespace", required=True, metavar="TENANT:NAMESPACE")
    mcp.add_argument("--create", action="store_true", help="make the namespace if the store does not know it")
    mcp.set_defaults(func=cmd_mcp)

    graph = commands.add_parser("graph", help="a node's graph neighbourhood: keeper, merged nodes, associations")
    graph.add_argument("node_id")
    graph.set_defaults(func=cmd_graph)

    undo = commands.add_parser("undo", help="restore every row a run changed to its prior state")
    undo.add_argument("--run", required=True, metavar="RUN_ID", help="a curation run id, or an undo id")
    undo.add_argument("--namespace", metavar="KEY", help="only this partition TENANT:NAMESPACE")
    undo.add_argument("--force", action="store_true", help="also restore rows changed since by someone else")
    undo.set_defaults(func=cmd_undo)

    ui = commands.add_parser("ui", help="start the Dagster UI and daemon on this memory store")
    ui.add_argument("--host", default="127.0.0.1")
    ui.add_argument("--port", type=int, default=3000)
    ui.add_argument("--workers", type=_positive, default=0, metavar="N",
                    help="also start N Celery workers here, and run on them (CURATION_RUN_LAUNCHER=celery)")
    ui.set_defaults(func=cmd_ui)

    worker = commands.add_parser("worker", help="a Celery worker that executes curation runs (CURATION_RUN_LAUNCHER=celery)")
    worker.add_argument("--concurrency", type=_positive, metavar="N",
                        help="runs at once, one process each (default CURATION_WORKER_CONCURRENCY, 1)")
    worker.add_argument("--queue", action="append", metavar="Q",
                        help="a queue to take runs from (repeatable; default CURATION_CELERY_QUEUE, dagster)")
    worker.set_defaults(func=cmd_worker)

    prune = commands.add_parser("prune-runs", help="delete Dagster runs older than the retention (memory revisions stay)")
    prune.add_argument("--days", type=_positive, metavar="N", help="older than N days (default CURATION_RUN_RETENTION_DAYS, 30)")
    prune.add_argument("--dry-run", action="store_true", help="say what would be deleted; delete nothing")
    prune.set_defaults(func=cmd_prune_runs)
    return parser


def _user_errors() -> tuple[type[Exception], ...]:
    """Errors caused by input or setup, reported as one clear line instead of a traceback."""
    from curation_pipeline.cli.undo_runner import UndoRunFailed
    from curation_pipeline.core.known_namespaces import UnknownNamespaceError
    from curation_pipeline.core.partition_keys import InvalidNameError
    from curation_pipeline.core.vectors import EmbeddingError
    from curation_pipeline.instance.embedded_broker import BrokerError
    from curation_pipeline.service.errors import (
        DatabaseError,
        ImportConflictError,
        MigrationError,
        NamespaceBusyError,
    )
    from curation_pipeline.service.history import EmptySearchError
    from curation_pipeline.service.memory_client import MemoryInputError
    from curation_pipeline.service.undo import NothingToUndoError

    return (SettingsError, InvalidNameError, DatabaseError, MigrationError, ImportConflictError,
            EmbeddingError, NothingToUndoError, NamespaceBusyError, BrokerError, UnknownNamespaceError,
            UndoRunFailed, EmptySearchError, MemoryInputError)


NOTHING_TO_UNDO = 3  # `undo` of a run already undone: nothing done, no undo recorded in the store
INTERRUPTED = 128 + 2  # what a shell reports for a command stopped by Ctrl-C (SIGINT)
BROKEN_PIPE = 128 + 13  # ... and for one whose reader went away (SIGPIPE), as `export | head`


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except _user_errors() as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        _silence_stdout()
        return BROKEN_PIPE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return INTERRUPTED


def _silence_stdout() -> None:
    """The reader of standard output is gone: point it at /dev/null, so that flushing it at exit
    does not fail a second time (the recipe of Python's signal documentation)."""
    import os

    try:
        fileno = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # replaced by something without a descriptor
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fileno)
    os.close(devnull)


if __name__ == "__main__":  # spawned Dagster processes re-import the launching script
    sys.exit(main())
