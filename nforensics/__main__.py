"""`python -m nforensics ...`: the same command line as the `nforensics` script, for an environment whose
scripts folder is not on PATH (a venv that is not activated, a notebook's `!python -m nforensics`)."""

from nforensics.cli import main

if __name__ == "__main__":  # importing the package's modules (a test walking them) runs nothing
    main()
