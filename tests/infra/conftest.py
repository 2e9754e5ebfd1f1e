"""Synthesize the stack once per configuration; CloudFormation validation only where asked.

Validation costs 11-15 s per synth, so one test turns it on (test_validation_on).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Before jsii starts its node process: the banner would otherwise go to stderr on every run.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

from aws_cdk import App
from aws_cdk.assertions import Template

from infra.app import build_app
from infra.stack import PROJECT_ROOT
from tests.support.template import Synth

# The gRPC side is off in cdk.json (it needs a name and a certificate); the tests synthesize
# it on, with placeholders for both.
GRPC_CONTEXT: dict[str, Any] = {
    "a2a:grpc": True,
    "a2a:grpcDomainName": "grpc.a2a.example.internal",
    "a2a:grpcCertificateArn":
        "arn:aws:acm:us-east-1:111111111111:certificate/00000000-0000-0000-0000-000000000000",
}
CDK_CONTEXT: dict[str, Any] = {
    **json.loads((PROJECT_ROOT / "cdk.json").read_text())["context"], **GRPC_CONTEXT}


@pytest.fixture(scope="session")
def empty_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Stands in for the pip-built folder: the template does not depend on its contents.
    folder = tmp_path_factory.mktemp("lambda_bundle")
    (folder / "placeholder.txt").write_text("unit tests only\n")
    return folder


def synth_stack(
    bundle: Path, outdir: Path, *, validate: bool = False, **context: Any
) -> tuple[App, Template, Path]:
    """Synthesize the app from cdk.json's context plus `context`; return app, template, file."""
    # The app property, not CDK_VALIDATION: the node process reads the environment once.
    app = App(
        context={**CDK_CONTEXT, **context},
        outdir=str(outdir),
        builtin_cloud_formation_validation=validate,
    )
    build_app(app, lambda_bundle=str(bundle))
    assembly = app.synth()
    (stack,) = assembly.stacks
    template = Template.from_json(stack.template)
    return app, template, Path(assembly.directory) / stack.template_file


@pytest.fixture(scope="session")
def synthesized(
    empty_bundle: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Template, Path]]:
    _, template, path = synth_stack(empty_bundle, tmp_path_factory.mktemp("cdk_out"))
    yield template, path


@pytest.fixture(scope="session")
def template(synthesized: tuple[Template, Path]) -> Template:
    return synthesized[0]


# cdk.json's context with push notifications on: the same stack plus the push dispatcher.
PUSH_CONTEXT: dict[str, Any] = {"a2a:push": "true"}


@pytest.fixture(scope="session")
def synthesized_push(
    empty_bundle: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Template, Path]]:
    _, template, path = synth_stack(empty_bundle, tmp_path_factory.mktemp("cdk_out_push"),
                               **PUSH_CONTEXT)
    yield template, path


@pytest.fixture(scope="session")
def push_template(synthesized_push: tuple[Template, Path]) -> Template:
    return synthesized_push[0]



@pytest.fixture(scope="session")
def synth() -> Synth:
    """`synth(bundle, outdir, validate=False, **context)`: a fresh app and its template."""
    return synth_stack


@pytest.fixture(scope="session")
def cdk_context() -> dict[str, Any]:
    """The context committed in cdk.json plus the gRPC side (GRPC_CONTEXT), which every
    synth here starts from."""
    return CDK_CONTEXT
