"""`python -m envkit` is the `envkit` command."""

from envkit.cli import main

if __name__ == "__main__":
    main()
