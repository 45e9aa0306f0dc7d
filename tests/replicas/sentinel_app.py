"""The server the Sentinel tests serve: the task replicas' ``held`` and ``where`` and the
notes' ``touch`` (a change announced on one replica reaches a listener on another).

Its tasks keep the default ``redelivery_timeout`` (60 s), longer than a failover: in a
forced failover the old primary takes the worker's lease renewals until the Sentinels
demote it, and those are lost with it, so a timeout shorter than that window (the task
replicas' 2 s) has another worker take the task over and end it ``failed``."""

from __future__ import annotations

import dataclasses

from mcp_adapter import Server, Tasks
from tests.notifications.apps import PublicNote, TouchTool
from tests.replicas.task_app import HeldTool, TaskReplicaServer, WhereTool


class SentinelServer(Server):
    name = "sentinel-replicas"
    tools = (HeldTool, WhereTool, TouchTool)
    resources = (PublicNote,)
    tasks = dataclasses.replace(
        TaskReplicaServer.tasks, redelivery_timeout=Tasks().redelivery_timeout
    )
