"""Router: the ring all-gather between cores."""
