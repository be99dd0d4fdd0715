class Ranker:
    """Reciprocal rank fusion of two ranked lists."""

    def __init__(self, k=60):
        self.k = k

    def fuse(self, a, b):
        scores = {}
        for i, x in enumerate(a):
            scores[x] = scores.get(x, 0) + 1 / (self.k + i)
        for i, x in enumerate(b):
            scores[x] = scores.get(x, 0) + 1 / (self.k + i)
        return sorted(scores, key=scores.get, reverse=True)
