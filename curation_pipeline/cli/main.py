"""The `curation-pipeline` command."""

from __future__ import annotations

import argparse
import shutil
import sys
import time
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
    if warnings.not_shown:
        print(f"... and {warnings.not_shown} more warning(s)", file=sys.stderr)
    as_they_are = "they were imported as the file has them" if report.written else "they would be imported as they are"
    if warnings.by_column["merged_into"]:
        print(f"{warnings.by_column['merged_into']} merge link(s) do not end at an active node of their namespace: "
              + as_they_are + (" (the no_orphaned_archives check names them after the namespace's next cycle)"
                               if report.written else ""), file=sys.stderr)
    if warnings.by_column["superseded_by"]:
        print(f"{warnings.by_column['superseded_by']} supersession(s) point at a successor in another namespace: "
              + as_they_are + (" (the namespace's next cycle puts each older memory back into current memory)"
                               if report.written else ""), file=sys.stderr)
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
    from curation_pipeline.core.jsonl_rows import export_line
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
    written = 0
    try:
        with nodes_to_export(settings, tenant_id=args.tenant, namespace=args.namespace) as (total, rows), \
                open(os.devnull, "w") if quiet else nullcontext() as silenced:
            with Progress("exporting", total=total, unit="row", stream=silenced) as progress:
                for row in rows:
                    line, import_refuses = (None, []) if row["unexportable"] else export_line(row)
                    if row["unexportable"] or import_refuses:
                        # Named, every one of them; unless --skip-invalid, nothing more is
                        # written, and the rest is read only to name the others too.
                        refused.add(row["id"], row["unexportable"], import_refuses)
                    elif args.skip_invalid or not refused:
                        out.write(line + "\n")
                        written += 1
                    progress.advance()
        if refused and args.skip_invalid:
            refused.report_left_out()
        elif refused:
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
    print(f"exported {written} memory node(s)" + (f" to {target}" if target else "")
          + (f"; left out {refused.rows} node(s) listed above (--skip-invalid)" if refused else ""), file=sys.stderr)
    return 0


class UnexportableRows:
    """The rows an export cannot carry: every one counted, the first PRINTED_PROBLEMS values named."""

    def __init__(self) -> None:
        self.rows = 0
        self.lines: list[str] = []
        self.import_refuses = False  # some of them only because the import would refuse them

    def __bool__(self) -> bool:
        return self.rows > 0

    def add(self, node_id, values: list[str], import_refuses: list[str] = ()) -> None:
        """`values` JSON cannot carry; `import_refuses`: why the import would refuse the row's line
        (core/jsonl_rows.export_line: one rule for both)."""
        self.rows += 1
        self.import_refuses = self.import_refuses or bool(import_refuses)
        named = [f"node {node_id}: {value}, which the JSONL format cannot carry "
                 "(JSON has no NaN or infinity; timestamps fall in the years 1 to 9999)" for value in values]
        named += [f"node {node_id}: {reason} (the import refuses such a line)" for reason in import_refuses]
        self.lines.extend(named[:max(0, PRINTED_PROBLEMS - len(self.lines))])

    def report(self, target: Path | None) -> None:
        for line in self.lines:
            print(line, file=sys.stderr)
        print(f"error: {self.rows} node(s) cannot be exported; "
              + (f"{target} was not written" if target else "the export is incomplete")
              + " (fix them, or pass --skip-invalid to export the other nodes)", file=sys.stderr)

    def report_left_out(self) -> None:
        """--skip-invalid: what the export left out, the rest being written."""
        for line in self.lines:  # the first PRINTED_PROBLEMS; the closing line counts them all
            print(f"left out: {line}", file=sys.stderr)


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
        from curation_pipeline.service.inspection import disabled_keys

        disabled = disabled_keys(settings)
        width = max((len(key) for key in keys), default=0)
        for key in keys:  # the schedule and the sensors skip a disabled one
            print(f"{key:<{width}}  {'disabled' if key in disabled else 'enabled'}")
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

    from curation_pipeline.defs.job import JOB_NAME
    from curation_pipeline.defs.partitions import PARTITION_TAG, remove_partition
    from curation_pipeline.defs.trigger_runs import UNFINISHED_STATUSES
    from curation_pipeline.service.errors import NamespaceBusyError
    from curation_pipeline.service.namespaces import retire_namespace

    if key is None:
        print("error: name the namespace: curation-pipeline namespaces remove TENANT:NAMESPACE", file=sys.stderr)
        return 2
    registered = _registered_partitions(settings)  # (prepares DAGSTER_HOME)
    with dg.DagsterInstance.get() as instance:
        # A run queued or in flight (not holding the namespace yet) would fail on the missing
        # partition; one that holds it is refused by retire_namespace, under the lease.
        unfinished = instance.get_runs(dg.RunsFilter(job_name=JOB_NAME, statuses=UNFINISHED_STATUSES,
                                                     tags={PARTITION_TAG: key}), limit=1)
        if unfinished:
            raise NamespaceBusyError(f"namespace {key} is being curated by run {unfinished[0].run_id} "
                                     f"({unfinished[0].status.value.lower()}); remove it when the run has ended")
        try:
            retired = retire_namespace(settings, key, registered,
                                       remove_partition=lambda: remove_partition(instance, key))
        except NamespaceBusyError as error:
            raise NamespaceBusyError(f"{error}; remove it when the run has ended") from None
    if retired.already:
        print(f"{key} is already removed; its {retired.kept} memory node(s) kept, untouched. "
              "It comes back with `run --partition KEY --create`, an import into it, or when its "
              "memory is written again")
        return 0
    print(f"removed {key} from Dagster's partitions; its {retired.kept} memory node(s) kept, untouched. "
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
    from curation_pipeline.core.render.tables import cycle_table, failures, run_end_line
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
    began = time.monotonic()
    with Progress(label, total=len(keys), unit="namespace", every_secs=0) as progress:
        try:
            results = run_partitions(
                settings, keys, verbose=verbose, dry_run=dry_run, max_parallel=MAX_PARALLEL_RUNS,
                on_ready=lambda: progress.note(
                    f"Dagster's code server is up ({time.monotonic() - began:.1f} s); launching the runs"),
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
    for result in results:  # a run that ended without its steps saying why: its process killed, say
        line = run_end_line(result.partition_key, result.run_id, result.run_status, result.metadata,
                            result.failure, result.will_retry)
        if line:
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


def _check_readable(key: str | None) -> None:
    """A --partition of a read-only command must name a namespace (UnknownNamespaceError)."""
    if key is None:
        return
    from curation_pipeline.service.namespaces import check_readable

    settings = _settings()
    check_readable(settings, key, lambda: _registered_partitions(settings))


def cmd_health(args) -> int:
    from curation_pipeline.core.partition_keys import parse_partition_key, partition_key
    from curation_pipeline.core.render.tables import DEFAULT_WIDTH, health_table
    from curation_pipeline.service.inspection import recorded_cycles
    from curation_pipeline.service.steps.registry import STEPS

    tenant_id, namespace = parse_partition_key(args.partition) if args.partition else (None, None)
    _check_readable(args.partition)
    cycles = recorded_cycles(_settings(), tenant_id=tenant_id, namespace=namespace, last=args.last)
    if not cycles:
        print("no curation cycle recorded yet" + (f" for {args.partition}" if args.partition else ""))
        return 0
    print(health_table(cycles, STEPS, width=shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns))
    # The latest cycle of each namespace decides the exit code: a failed check is worth an alert
    # (an undo records the namespace's numbers, but no checks: the next cycle evaluates them).
    latest = {(c["tenant_id"], c["namespace"]): c for c in cycles if c.get("kind", "cycle") == "cycle"}
    failing = [(c, check) for c in latest.values() for check in c["checks"] if not check.get("passed")]
    for cycle, check in failing:
        key = partition_key(cycle["tenant_id"], cycle["namespace"])  # as --partition takes it
        print(f"failed check: {key} {check['name']}: "
              f"{check['description']}", file=sys.stderr)
    return 1 if failing else 0


def cmd_runs(args) -> int:
    from curation_pipeline.cli.run_history import recent_runs
    from curation_pipeline.core.render.tables import runs_table

    _check_readable(args.partition)
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
    print(format_history(node_id, found.revisions, found.merged, found.now, found.recall))
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
    from curation_pipeline.service.undo import (
        namespaces_to_undo,
        resolve_run_id,
        undo_would_change_nothing,
        undone_by,
    )

    settings = _settings_for_runs()
    url = store_url(settings)
    run_id = resolve_run_id(url, args.run)  # a unique prefix (the UI's 8 characters) will do
    if run_id != args.run:
        print(f"run {args.run} is {run_id}", file=sys.stderr)
    namespaces_to_undo(url, run_id, partition_key=args.namespace)  # refused before anything starts
    earlier = undone_by(url, run_id)
    if earlier and undo_would_change_nothing(url, run_id, partition_key=args.namespace, force=args.force):
        # Nothing to do, and nothing recorded: no Dagster run launched just to say so.
        print(nothing_to_undo(run_id, earlier))
        return NOTHING_TO_UNDO
    require_workers(settings)  # the undo is a run too: on Celery, a worker must take it
    # The code server takes seconds to start (tens on a busy machine): say so at once.
    print(f"undoing run {run_id}: starting Dagster's code server, then the undo's run", file=sys.stderr, flush=True)
    outcome = undo_through_dagster(
        settings, run_id, partition_key=args.namespace, force=args.force, verbose=args.verbose,
        on_started=lambda undo_run_id: print(f"started undo run {undo_run_id}", file=sys.stderr, flush=True))
    reports = outcome.reports
    if all(report.status == "nothing" for report in reports):
        # Nothing was recorded (no empty undo to list or undo later): say who did it before.
        print(nothing_to_undo(run_id, undone_by(url, run_id)))
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


def _queue(raw: str) -> str:
    """A queue name by the rule CURATION_CELERY_QUEUE obeys (an empty one started a worker on no queue)."""
    from curation_pipeline.config.runs import queue_name

    try:
        return queue_name(raw)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{raw!r} {error}") from None


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
    exporter.add_argument("--skip-invalid", action="store_true",
                          help="write every node JSON can carry and list the others (default: write nothing if one cannot be)")
    exporter.add_argument("--tenant", metavar="T", help="only this tenant's nodes (default: every tenant)")
    exporter.add_argument("--namespace", metavar="N", help="only the nodes of namespaces named N (default: every namespace)")
    exporter.set_defaults(func=cmd_export)

    commands.add_parser("seed", help="load the demo corpus").set_defaults(func=cmd_seed)

    namespaces = commands.add_parser(
        "namespaces", help="list the namespaces, register them in Dagster, switch one off or on, retire one",
        description="The namespaces of the memory store, each a Dagster partition TENANT:NAMESPACE.",
        epilog=("actions:\n"
                "  list       every namespace's partition key and whether curation is enabled (the default)\n"
                "  sync       register every namespace of the store as a Dagster partition (as the discovery sensor does)\n"
                "  enable     let the schedule and the sensors curate TENANT:NAMESPACE again\n"
                "  disable    the schedule and the sensors leave TENANT:NAMESPACE alone\n"
                "  remove     retire TENANT:NAMESPACE's Dagster partition; its memory is kept, untouched"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    namespaces.add_argument("action", nargs="?", choices=["list", "sync", "enable", "disable", "remove"],
                            default="list", help="what to do (default: list; each is described below)")
    namespaces.add_argument("key", nargs="?", metavar="TENANT:NAMESPACE", help="the namespace, for enable, disable and remove")
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
    undo.add_argument("--run", required=True, metavar="RUN_ID",
                      help="a curation run id or an undo id, or the start of one (as the UI shows it) that no other run shares")
    undo.add_argument("--namespace", metavar="KEY", help="only this partition TENANT:NAMESPACE")
    undo.add_argument("--force", action="store_true", help="also restore rows changed since by someone else")
    undo.add_argument("-v", "--verbose", action="store_true", help="show the undo run's Dagster logs here too")
    undo.set_defaults(func=cmd_undo)

    ui = commands.add_parser("ui", help="start the Dagster UI and daemon on this memory store")
    ui.add_argument("--host", default="127.0.0.1",
                    help="address the UI listens on (default: 127.0.0.1, this machine only; 0.0.0.0: every interface)")
    ui.add_argument("--port", type=int, default=3000, help="port the UI listens on (default: 3000)")
    ui.add_argument("--workers", type=_positive, default=0, metavar="N",
                    help="also start N Celery workers here, and run on them (CURATION_RUN_LAUNCHER=celery)")
    ui.set_defaults(func=cmd_ui)

    worker = commands.add_parser("worker", help="a Celery worker that executes curation runs (CURATION_RUN_LAUNCHER=celery)")
    worker.add_argument("--concurrency", type=_positive, metavar="N",
                        help="runs at once, one process each (default CURATION_WORKER_CONCURRENCY, 1)")
    worker.add_argument("--queue", action="append", metavar="Q", type=_queue,
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
    from curation_pipeline.service.undo import AmbiguousRunError, NoSuchRunError, NothingToUndoError

    return (SettingsError, InvalidNameError, DatabaseError, MigrationError, ImportConflictError,
            EmbeddingError, NothingToUndoError, NamespaceBusyError, BrokerError, UnknownNamespaceError,
            UndoRunFailed, EmptySearchError, NoSuchRunError, AmbiguousRunError, MemoryInputError)


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
