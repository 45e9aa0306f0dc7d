"""The compiled forms: the immutable ``Catalog`` and the plans in it, made by ``compile``
and read by ``dispatch``, which meet only here."""
