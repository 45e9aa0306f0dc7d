"""A multi-tenant helpdesk on SQLite: a request-stage layer gives each call its tenant."""
