"""curation-pipeline: the sleep cycle for AI agents' long-term memory."""

import warnings

# platformdirs warns when XDG_RUNTIME_DIR is unset (containers, cron, CI, `su`), which the
# embedded Postgres's runtime lookup triggers in every process (the CLI, the code server, every
# run); its fallback under the temporary directory is what those machines want, so the warning
# says nothing an operator can act on. Set here, in every process that imports the package.
warnings.filterwarnings("ignore", message=r"XDG_RUNTIME_DIR .*falling back to")
