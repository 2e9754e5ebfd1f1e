import uuid

from a2akit.ids import new_id


def test_new_id_is_a_random_version_4_uuid_in_canonical_form() -> None:
    ids = [new_id() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    for text in ids:
        parsed = uuid.UUID(text)
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
        assert str(parsed) == text  # lower-case, hyphenated, 36 characters
    # Every bit outside version and variant varies: none is stuck at 0 or 1.
    numbers = [uuid.UUID(text).int for text in ids]
    fixed = (0xF << 76) | (0x3 << 62)
    assert all(any(n >> bit & 1 for n in numbers) and not all(n >> bit & 1 for n in numbers)
               for bit in range(128) if not fixed >> bit & 1)
