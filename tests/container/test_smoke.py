from container import Container


class D: ...


class B:
    def __init__(self, d: D) -> None:
        self.d = d


def test_scoped_identity_and_singleton_sharing() -> None:
    container = Container()
    container.singleton(D)
    container.scoped(B)
    with container.scope() as first:
        b = first.get(B)
        assert first.get(B) is b
    with container.scope() as second:
        assert second.get(B) is not b
        assert second.get(B).d is b.d
