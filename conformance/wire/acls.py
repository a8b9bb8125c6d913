"""ACL actions on a secured broker kgc started: deny the run's principal one operation on the
example's group or the run's topic, and allow it again, as the super user.

A deny is a literal DENY binding for the run's principal and any host (CreateAcls); an allow
deletes exactly that binding (DeleteAcls with the same filter). The broker's authorizer learns
ACLs from the metadata log, after the controller committed them and after it answered: so each
action then asks every broker (DescribeAcls) until the binding is there, or gone, and only then
returns. The engine records the action at the moment it began and sends nothing while it runs
(``Engine.inject``), so the model applies it before every later request
(``model/classic/authorization.py``).
"""

from __future__ import annotations

import time
from typing import Any

from kafka.protocol.admin.acl import CreateAclsRequest, DeleteAclsRequest, DescribeAclsRequest
from kgc.conformance.wire.client import ClientError, Cluster, Poller
from kgc.conformance.wire.security import ClientSecurity
from kgc.model.classic.authorization import GROUP, TOPIC, AclChange, acl_change

# ResourceType, PatternType, AclOperation, AclPermissionType codes (clients/.../resource/,
# .../acl/): literal bindings on a topic or a group
_RESOURCE = {TOPIC: 2, GROUP: 3}
_LITERAL = 3
_OPERATION = {"READ": 3, "DELETE": 6, "DESCRIBE": 8}
_DENY = 2
_EFFECT_TIMEOUT_S = 10.0


class AclActionFailed(ClientError):
    """The broker refused an ACL action, or did not apply it in time."""


class AclAdmin:
    """Changes the ACLs of ``principal`` (``User:kgc-user``) as ``admin`` (a super user), on the
    broker at ``bootstrap_servers``; ``topic`` is the run's topic. Shares ``poller`` with the run's
    own connections, so their answers keep arriving (and keep their times) meanwhile."""

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        admin: ClientSecurity,
        principal: str,
        topic: str,
        poller: Poller | None = None,
    ) -> None:
        self.principal = principal
        self.topic = topic
        self._cluster = Cluster(
            bootstrap_servers, client_id="kgc-acls", security=admin, poller=poller
        )
        self._applied: set[tuple[str, str, str]] = set()  # (resource type, name, operation)

    def _binding(self, group_id: str, change: AclChange) -> dict[str, Any]:
        name = group_id if change.resource == GROUP else self.topic
        return {
            "resource_type": _RESOURCE[change.resource],
            "resource_name": name,
            "resource_pattern_type": _LITERAL,
            "principal": self.principal,
            "host": "*",
            "operation": _OPERATION[change.operation],
            "permission_type": _DENY,
        }

    def perform(self, group_id: str, action: str) -> None:
        """Carry out ``action`` (``acl-deny:group:READ`` …) for ``group_id``; returns once every
        broker's authorizer has it."""
        change = acl_change(action)
        if change is None:
            raise AclActionFailed(f"{action!r} is not an ACL action")
        binding = self._binding(group_id, change)
        conn = self._cluster.connection(min(self._cluster.brokers))
        key = (change.resource, binding["resource_name"], change.operation)
        if change.deny:
            creation = CreateAclsRequest.AclCreation(**binding)
            resp = conn.request(CreateAclsRequest(creations=[creation]))
            errors = [r.error_code for r in resp.results if r.error_code]
            self._applied.add(key)
        else:
            resp = conn.request(DeleteAclsRequest(filters=[_filter(DeleteAclsRequest, binding)]))
            errors = [r.error_code for r in resp.filter_results if r.error_code]
            self._applied.discard(key)
        if errors:
            raise AclActionFailed(f"{action} on {binding['resource_name']}: error {errors[0]}")
        self._await(binding, present=change.deny)

    def _await(self, binding: dict[str, Any], *, present: bool) -> None:
        deadline = time.monotonic() + _EFFECT_TIMEOUT_S
        pending = set(self._cluster.brokers)
        while pending:
            for node in sorted(pending):
                conn = self._cluster.connection(node)
                resp = conn.request(DescribeAclsRequest(**_describe_filter(binding)))
                found = any(r.acls for r in resp.resources) if resp.error_code == 0 else None
                if found is present:
                    pending.discard(node)
            if pending and time.monotonic() > deadline:
                raise AclActionFailed(
                    f"brokers {sorted(pending)} did not apply the ACL change on "
                    f"{binding['resource_name']} within {_EFFECT_TIMEOUT_S:.0f} s"
                )
            if pending:
                time.sleep(0.005)

    def clear(self) -> None:
        """Allow again everything denied through this admin (an example's end)."""
        for resource, name, operation in sorted(self._applied):
            binding = self._binding(
                name, AclChange(deny=False, resource=resource, operation=operation)
            )
            conn = self._cluster.connection(min(self._cluster.brokers))
            conn.request(DeleteAclsRequest(filters=[_filter(DeleteAclsRequest, binding)]))
            self._await(binding, present=False)
        self._applied.clear()

    def close(self) -> None:
        self._cluster.close()


def _filter(request_class: Any, binding: dict[str, Any]) -> Any:
    return request_class.DeleteAclsFilter(
        resource_type_filter=binding["resource_type"],
        resource_name_filter=binding["resource_name"],
        pattern_type_filter=binding["resource_pattern_type"],
        principal_filter=binding["principal"],
        host_filter=binding["host"],
        operation=binding["operation"],
        permission_type=binding["permission_type"],
    )


def _describe_filter(binding: dict[str, Any]) -> dict[str, Any]:
    return {
        "resource_type_filter": binding["resource_type"],
        "resource_name_filter": binding["resource_name"],
        "pattern_type_filter": binding["resource_pattern_type"],
        "principal_filter": binding["principal"],
        "host_filter": binding["host"],
        "operation": binding["operation"],
        "permission_type": binding["permission_type"],
    }
