"""Argument checks shared by the generators."""


def require_at_least(minimum: int, **fields: int) -> None:
    """Raise ValueError naming the first of ``fields`` below ``minimum``."""
    for field, value in fields.items():
        if value < minimum:
            raise ValueError(f'{field} must be >= {minimum}, got {value}')
