"""Stand-in xxhash (used only where the real one is missing): a 64-bit hash from hashlib."""
import hashlib


class xxh64(object):
    def __init__(self, data=b""):
        self.h = hashlib.blake2b(digest_size=8)
        self.h.update(data)

    def update(self, data):
        self.h.update(bytes(data))

    def intdigest(self):
        return int.from_bytes(self.h.digest(), "little")

    def hexdigest(self):
        return self.h.hexdigest()
