"""What one step of one run may touch: a single tenant's namespace.

Every load and every write of a step is filtered by its scope; nothing crosses a tenant or
namespace boundary.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Scope:
    run_id: str
    tenant_id: str
    namespace: str
    step: str
