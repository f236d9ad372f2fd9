"""CLI commands, one module each; every module defines ``register(subparsers)``."""
