# relish's Python package: the API client (relish.Client) and the trial
# helper (relish.trial), standard library only.  `pip install ./python`
# with Debian 12's pip and setuptools builds it here, with nothing
# downloaded (docs/dashboard.md, "The Python client"); pandas is optional.
from setuptools import setup

setup(
    name="relish",
    version="0.1.0",
    description="Client of relish's HTTP API and the Python side of its trial contract",
    long_description=open("README.md").read(),
    long_description_content_type="text/markdown",
    license="MIT",
    python_requires=">=3.9",
    packages=["relish"],
    # relish_trial: the name examples import (relish.trial itself)
    py_modules=["relish_trial"],
    extras_require={"pandas": ["pandas"]},
)
