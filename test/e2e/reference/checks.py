"""What the e2e check scripts share: how a failed check ends the script."""
import sys


def fail(message):
    """Prints `MISMATCH: message` (what the lit tests look for), exits 1."""
    print("MISMATCH: " + message)
    sys.exit(1)
