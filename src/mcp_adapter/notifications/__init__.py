"""Telling clients what happened without being asked again: change notifications and
subscriptions (both eras), progress, and log records for the client.

``Notifier`` (one per container), ``Progress`` and ``ClientLogger`` (one per request)
are services a handler takes by type; the rest serves them on the SDK's server.
"""

from mcp_adapter.notifications.client_log import ClientLogger
from mcp_adapter.notifications.limits import SubscriptionLimits
from mcp_adapter.notifications.notifier import Notifier
from mcp_adapter.notifications.progress import Progress

__all__ = ["ClientLogger", "Notifier", "Progress", "SubscriptionLimits"]
